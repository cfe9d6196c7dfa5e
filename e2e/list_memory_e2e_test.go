package e2e

// A streamed import is still all or none; fillStore, which the memory-scale
// tests (list_memory_slow_e2e_test.go, behind the slow tag) share.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// fillStore writes n deliveries with bodies of size bytes into a new store.
func fillStore(t *testing.T, path string, n, size int) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	body := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	var ds []*store.Delivery
	for i := range n {
		hs := message.Headers{{Name: "Host", Value: "x"}, {Name: "Content-Length", Value: fmt.Sprint(len(body))}}
		raw := append([]byte(fmt.Sprintf("POST /hooks HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", len(body))), body...)
		ds = append(ds, &store.Delivery{ReceivedAt: time.Unix(1700000000+int64(i), 0), Provider: "stripe",
			EventID: fmt.Sprintf("evt_%06d", i), EventType: "invoice.paid", Method: "POST", Target: "/hooks",
			Proto: "HTTP/1.1", Headers: hs, Raw: raw, Body: body, ResponseStatus: 200})
		if len(ds) == 500 || i == n-1 {
			if err := st.ImportDeliveries(ctx, ds); err != nil {
				t.Fatal(err)
			}
			ds = ds[:0]
		}
	}
}

// TestImportE2EStreamedIsStillAllOrNone: a JSONL import is added as it is
// read, in one transaction: a bad line after a thousand good ones (from a
// file or stdin) adds none of them, and a file bad from its first line
// creates no database.
func TestImportE2EStreamedIsStillAllOrNone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	fillStore(t, src, 1000, 256)
	good := runBin(t, src, nil, "export").Stdout
	bad := good + `{"raw": "not base64!"}` + "\n"
	file := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	for _, args := range [][]string{{"import", file}, {"import", "-"}} {
		r := runBin(t, db, []byte(bad), args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "line 1001: raw: illegal base64") {
			t.Errorf("%v: code %d, stderr %q; want 2 naming line 1001", args, r.Code, r.Stderr)
		}
		if r := runBin(t, db, nil, "list", "--json", "id"); strings.TrimSpace(r.Stdout) != "[]" {
			t.Errorf("%v: a failed import left rows: %.200s", args, r.Stdout)
		}
	}
	fresh := filepath.Join(dir, "fresh.db")
	if r := runBin(t, fresh, []byte(`{"raw": "?"}`+"\n"+good), "import", "-"); r.Code != 2 || !strings.Contains(r.Stderr, "line 1:") {
		t.Errorf("bad first line: code %d, stderr %q", r.Code, r.Stderr)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("an import bad from its first line created %s (%v)", fresh, err)
	}
	r := runBin(t, fresh, []byte(good), "import", "-", "--json")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, `{"imported":1000,"ids":[1,2,`) {
		t.Errorf("import of the good lines: code %d, %.100s %s", r.Code, r.Stdout, r.Stderr)
	}
}
