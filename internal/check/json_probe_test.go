package check

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// jsonState serves h's effect as a JSON document over HTTP, spelled
// differently on every read (key order, whitespace, 2 as 2.0), as servers
// that do not keep key order do: the same state each time.
func jsonState(t *testing.T, h *handler) string {
	t.Helper()
	var reads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.maybeReset()
		n := h.effect.Load()
		switch reads.Add(1) % 3 {
		case 0:
			fmt.Fprintf(w, `{"count":%d,"owner":"cus_1","tags":["a","b"],"id":18446744073709551615}`, n)
		case 1:
			fmt.Fprintf(w, "{\n  \"tags\": [\"a\", \"b\"],\n  \"id\": 18446744073709551615,\n  \"owner\": \"cus_1\",\n  \"count\": %d.0\n}\n", n)
		default:
			fmt.Fprintf(w, `{ "owner" : "cus_1", "id" : 1.8446744073709551615e19, "count" : %de0, "tags" : [ "a" , "b" ] }`, n)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/state"
}

// A probe answering JSON is judged by the JSON value, not its spelling: a
// correct handler passes although no two reads are the same text, and a
// handler that does the work again is told which field moved.
func TestJSONProbeComparedAsJSON(t *testing.T) {
	for _, tc := range []struct {
		kind, msg string
		want      report.Status
	}{
		{"correct", "2 duplicates (same event id) changed nothing", report.Pass},
		{"double", "(JSON field .count)", report.Fail},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			h, u := newHandler(t, tc.kind)
			o := options(h, u, delivery(t, 1, 4900))
			o.Probes = []probe.Probe{probe.NewHTTP(jsonState(t, h))}
			o.Phases = []string{PhaseFirst, PhaseDups}
			c := run(t, o)
			p := phaseOf(t, c, PhaseDups)
			if p.Status != tc.want || !strings.Contains(p.Message+violationText(p), tc.msg) {
				t.Errorf("dups: %s %q %+v, want %s and %q", p.Status, p.Message, p.Violations, tc.want, tc.msg)
			}
			for _, ph := range c.Deliveries[0].Phases {
				for _, w := range ph.Warnings {
					if strings.Contains(w, "settle") {
						t.Errorf("%s: %s (the readings are one state, spelled differently)", ph.Phase, w)
					}
				}
			}
		})
	}
}

func violationText(p report.PhaseResult) string {
	var s []string
	for _, v := range p.Violations {
		s = append(s, v.Message)
	}
	return strings.Join(s, "; ")
}
