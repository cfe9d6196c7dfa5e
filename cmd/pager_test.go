package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

// TestPager: show's output goes through $PAGER on a terminal only, and
// never with --no-pager or --raw.
func TestPager(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertDelivery(context.Background(), &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventType: "invoice.paid",
		Raw: []byte("POST /h HTTP/1.1\r\nHost: x\r\n\r\n")}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tt := range []struct {
		tty   bool
		args  []string
		paged bool
	}{
		{true, []string{"show", "1"}, true},
		{true, []string{"show", "1", "--json"}, true},
		{true, []string{"show", "1", "--raw"}, false},
		{true, []string{"--no-pager", "show", "1"}, false},
		{false, []string{"show", "1"}, false},
		{true, []string{"runs", "show", "1"}, false}, // an error: nothing paged, the pager not left running
	} {
		io, _, out, _ := iostreams.Test()
		io.SetTerminal(tt.tty)
		io.SetPager("sed 's/^/paged: /'")
		root := NewRootCmd(io)
		root.SetArgs(append([]string{"--db", db}, tt.args...))
		err := root.Execute()
		if tt.args[0] != "runs" && err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if got := strings.HasPrefix(out.String(), "paged: "); got != tt.paged {
			t.Errorf("%v (terminal %v): paged %v, want %v:\n%s", tt.args, tt.tty, got, tt.paged, out)
		}
		if tt.paged && !strings.Contains(out.String(), "invoice.paid") {
			t.Errorf("%v: the delivery is not in the paged output:\n%s", tt.args, out)
		}
	}
}
