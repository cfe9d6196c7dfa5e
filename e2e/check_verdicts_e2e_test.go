package e2e

// A verdict never hides a failure (issue 20 §4), through the binary against
// real handlers on 127.0.0.1: copies answered 5xx under a burst fail it, a
// correct handler that asks concurrent copies to retry later (409) passes
// with a warning, and a handler whose effect depends on state is
// inconclusive in every phase that sends fresh events, naming --reset-cmd.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
)

// verdictsHandler deduplicates on the event id (in memory) and counts the
// work done; GET /count reads the count. busy answers a copy that arrives
// while another is handled with busyStatus; unique refuses (500) every
// event after the first: it creates the event's customer, a unique row.
type verdictsHandler struct {
	busyStatus int
	unique     bool

	busy  sync.Mutex
	mu    sync.Mutex
	seen  map[string]bool
	count atomic.Int64
}

func (h *verdictsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		fmt.Fprint(w, h.count.Load())
		return
	}
	body, _ := io.ReadAll(r.Body)
	var ev struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(body, &ev) != nil || ev.ID == "" {
		http.Error(w, "bad json", 400)
		return
	}
	if h.busyStatus != 0 {
		if !h.busy.TryLock() {
			msg := map[int]string{500: "cannot start a transaction within a transaction", 409: "event already in progress"}[h.busyStatus]
			http.Error(w, msg, h.busyStatus)
			return
		}
		defer h.busy.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.seen[ev.ID]:
	case h.unique && len(h.seen) > 0:
		http.Error(w, "UNIQUE constraint failed: customers.id", 500)
		return
	default:
		h.seen[ev.ID] = true
		h.count.Add(1)
	}
	fmt.Fprint(w, `{"received":true}`)
}

func TestCheckVerdictsNeverHideAFailure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		h    *verdictsHandler
		code int
		want map[string]report.Status
		msg  map[string]string
	}{
		{"500 under concurrent copies", &verdictsHandler{busyStatus: 500}, 1,
			map[string]report.Status{"dups": report.Pass, "burst": report.Fail, "lost": report.Pass},
			map[string]string{"burst": "cannot start a transaction within a transaction"}},
		{"409 asks concurrent copies to retry later", &verdictsHandler{busyStatus: 409}, 0,
			map[string]report.Status{"dups": report.Pass, "burst": report.Pass, "lost": report.Pass}, nil},
		{"effect depends on state", &verdictsHandler{unique: true}, 3,
			map[string]report.Status{"dups": report.Pass, "burst": report.Inconclusive, "lost": report.Inconclusive},
			map[string]string{"burst": "--reset-cmd", "lost": "--reset-cmd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.h.seen = map[string]bool{}
			base := serveHandler(t, tc.h)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, fmt.Sprint(id), "--to", base+"/webhooks/stripe", "--probe-http", "count="+base+"/count",
				"--secret", checkSecret, "--settle", "50ms", "-n", "3", "--burst", "8", "--phases", "first,dups,burst,lost")
			if c == nil || r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for name, want := range tc.want {
				if p := checkPhase(t, c, name); p.Status != want {
					t.Errorf("%s %s (%s), want %s", name, p.Status, p.Message, want)
				}
			}
			for name, m := range tc.msg {
				if p := checkPhase(t, c, name); !strings.Contains(p.Message+strings.Join(p.Warnings, " "), m) {
					t.Errorf("%s says %q, want %q in it", name, p.Message, m)
				}
			}
		})
	}
}
