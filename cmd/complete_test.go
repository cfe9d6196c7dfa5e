package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/store"
)

func TestCompletions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "c.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"invoice.paid", "push"} {
		if err := st.InsertDelivery(context.Background(), &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventType: typ,
			Raw: []byte("POST /h HTTP/1.1\r\nHost: x\r\n\r\n")}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for _, tt := range []struct {
		args       []string
		want, miss []string
	}{
		{[]string{"show", ""}, []string{"2\tpush (stripe)", "1\tinvoice.paid (stripe)"}, nil},
		{[]string{"show", "1", ""}, nil, []string{"2\t"}},
		{[]string{"replay", "1", ""}, []string{"2\tpush (stripe)"}, []string{"1\t"}},
		{[]string{"delete", ""}, []string{"1\tinvoice.paid (stripe)"}, nil},
		{[]string{"export", ""}, []string{"1\tinvoice.paid (stripe)"}, nil},
		{[]string{"check", ""}, []string{"1\tinvoice.paid (stripe)"}, nil},
		{[]string{"list", "--provider", ""}, []string{"stripe\n", "generic\n"}, nil},
		{[]string{"send", "--provider", ""}, []string{"stripe\n"}, []string{"generic"}},
		{[]string{"replay", "--order", ""}, []string{"seq\n", "burst\n", "shuffle\n", "reverse\n"}, nil},
		{[]string{"check", "--phases", "first,"}, []string{"first,dups\n", "first,crash\n"}, []string{"first,first"}},
		{[]string{"export", "--format", ""}, []string{"jsonl\n", "har\n", "curl\n", "raw\n"}, []string{"ngrok"}},
		{[]string{"import", "--format", ""}, []string{"ngrok\n"}, nil},
		{[]string{"send", "--event", ""}, []string{"invoice.paid\t"}, nil},
		{[]string{"runs", "show", ""}, nil, []string{"\t"}},
	} {
		code, msg, out := runRoot(t, append([]string{"--db", db, "__complete"}, tt.args...)...)
		if code != 0 {
			t.Errorf("__complete %q: exit %d %q", tt.args, code, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("__complete %q lacks %q:\n%s", tt.args, w, out)
			}
		}
		for _, m := range tt.miss {
			if strings.Contains(out, m) {
				t.Errorf("__complete %q offers %q:\n%s", tt.args, m, out)
			}
		}
	}
	// No store: nothing offered, no error, no database created.
	missing := filepath.Join(t.TempDir(), "none.db")
	if code, _, out := runRoot(t, "--db", missing, "__complete", "show", ""); code != 0 || strings.Contains(out, "\t") {
		t.Errorf("no store: %d %q", code, out)
	}
}
