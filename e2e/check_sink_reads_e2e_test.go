package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

// Reads are not effects (issue 30 §9). A handler that reads the provider's
// API on every copy (Stripe's line items of the invoice, GET
// /v1/invoices/ID/lines) and sends its receipt once per event is correct:
// before, every read counted as an effect and check flagged it unless the
// user knew to add --sink-match 'POST /v1/*'. The sink now counts the calls
// that are not reads by default and lists the reads in a note; a handler
// that POSTs on every copy still fails.
func TestCheckSinkReadsAreNotEffects(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		name      string
		postEvery bool
		code      int
	}{{"reads on every copy, sends once", false, 0}, {"sends on every copy", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sink := freeAddr(t)
			var mu sync.Mutex
			seen := map[string]bool{}
			base := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var ev struct {
					ID   string `json:"id"`
					Data struct {
						Object struct {
							ID string `json:"id"`
						} `json:"object"`
					} `json:"data"`
				}
				b, _ := io.ReadAll(r.Body)
				if json.Unmarshal(b, &ev) != nil || ev.ID == "" {
					http.Error(w, "bad event", http.StatusBadRequest)
					return
				}
				for _, path := range []string{"/v1/invoices/" + ev.Data.Object.ID + "/lines?limit=100", "/v1/customers/cus_1"} {
					resp, err := http.Get("http://" + sink + path)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadGateway)
						return
					}
					resp.Body.Close()
				}
				mu.Lock()
				first := !seen[ev.ID]
				seen[ev.ID] = true
				mu.Unlock()
				if first || tc.postEvery {
					resp, err := http.Post("http://"+sink+"/v1/send", "application/json", strings.NewReader(`{"template":"receipt","event":"`+ev.ID+`"}`))
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadGateway)
						return
					}
					resp.Body.Close()
				}
			}))
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkStripeDelivery(t, db)
			r, c := checkRunJSON(t, db, "--to", base+"/webhooks/stripe", "--sink", "api="+sink,
				"--secret", checkSecret, "--settle", "50ms", "--settle-max", "1s", "-n", "3", "--burst", "4", "--phases", "first,dups,burst", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			first := checkPhase(t, c, "first")
			if len(first.Effects) != 1 || first.Effects[0].Method != "POST" || first.Effects[0].Path != "/v1/send" {
				t.Fatalf("first's effects: want the one POST, got %+v", first.Effects)
			}
			notes := strings.Join(c.Notes, "\n")
			if !strings.Contains(notes, "reads (GET, HEAD, OPTIONS, TRACE), not counted as effects") || !strings.Contains(notes, "GET /v1/customers/cus_1 ×") ||
				!strings.Contains(notes, "--sink-match 'GET /path'") {
				t.Fatalf("the note on reads: %q", notes)
			}
			if tc.postEvery && checkPhase(t, c, "dups").Status != report.Fail {
				t.Fatalf("a POST on every copy must fail dups: %s", checkDump(c))
			}
			if !tc.postEvery {
				r := runBin(t, db, nil, "check", "--to", base+"/webhooks/stripe", "--sink", "api="+sink, "--secret", checkSecret,
					"--settle", "50ms", "--settle-max", "1s", "-n", "3", "--phases", "first,dups", "--no-color", fmt.Sprint(id))
				if r.Code != 0 || !strings.Contains(r.Stdout, "reads (GET, HEAD, OPTIONS, TRACE), not counted as effects") {
					t.Fatalf("the text report must say the reads were not counted: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
				}
			}
		})
	}
}
