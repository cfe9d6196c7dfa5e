package capture

import (
	"database/sql"
	"io"
	"net/http"
	"strings"
	"testing"
)

// A delivery the store refuses is answered 503 without the store's error:
// on a team store that error names the database's host, port and schema,
// which a capture reachable from the internet must not hand to whoever
// sends it a request. Capture's own log keeps the reason.
func TestUnstoredDeliveryTellsTheSenderNothingOfTheStore(t *testing.T) {
	ts := startServer(t, Options{})
	if code, _ := postHook(t, ts.addr); code != http.StatusOK {
		t.Fatalf("first delivery: %d", code)
	}
	// Something else changes the database under the running capture: the
	// writer refuses the batch its commit changed behind it.
	db, err := sql.Open("sqlite", "file:"+ts.dbPath+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TRIGGER gone AFTER INSERT ON deliveries BEGIN DELETE FROM deliveries WHERE id = NEW.id; END`); err != nil {
		t.Fatal(err)
	}
	code, body := postHook(t, ts.addr)
	if code != http.StatusServiceUnavailable {
		t.Fatalf("want 503 for a delivery the store refused, got %d %q", code, body)
	}
	if strings.Contains(body, "rows") || strings.Contains(body, ts.dbPath) || !strings.Contains(body, "send it again") {
		t.Errorf("the sender was told the store's error: %q", body)
	}
	if log := ts.errOut.String(); !strings.Contains(log, "changed or removed rows") {
		t.Errorf("capture's log lacks the store's reason:\n%s", log)
	}
}

func postHook(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/hooks/x", "application/json", strings.NewReader(`{"id":"evt_1"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
