//go:build slow

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A HAR import holds one entry at a time (issue 31 §6): unmarshalling the
// whole file held it about five times over (656 MiB for a 115 MiB HAR, so
// ~3 GB at the 512 MiB the import accepted). This test's 94 MiB file took
// 366 MiB of peak RSS read whole, 42 MiB an entry at a time.
func TestImportE2EHARInBoundedMemory(t *testing.T) {
	const n, size = 1000, 96 << 10
	dir := t.TempDir()
	har := filepath.Join(dir, "big.har")
	f, err := os.Create(har)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprint(w, `{"log":{"version":"1.2","creator":{"name":"test","version":"1"},"pages":[],"entries":[`)
	pad := strings.Repeat("x", size)
	for i := range n {
		if i > 0 {
			w.WriteString(",\n")
		}
		body, _ := json.Marshal(fmt.Sprintf(`{"id":"evt_%06d","object":"event","type":"invoice.paid","data":{"object":{"memo":"%s"}}}`, i, pad))
		fmt.Fprintf(w, `{"startedDateTime":"2026-01-02T03:04:05.000Z","time":1,"request":{"method":"POST","url":"https://example.com/webhooks/stripe","httpVersion":"HTTP/1.1","cookies":[],`+
			`"headers":[{"name":"Host","value":"example.com"},{"name":"Content-Type","value":"application/json"}],"queryString":[],"postData":{"mimeType":"application/json","text":%s},"headersSize":-1,"bodySize":-1},`+
			`"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","cookies":[],"headers":[],"content":{"size":0,"mimeType":"text/plain"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"send":0,"wait":1,"receive":0}}`, body)
	}
	fmt.Fprint(w, "]}}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, _ := os.Stat(har)
	peak, out := peakRSS(t, filepath.Join(dir, "h.db"), "import", har)
	t.Logf("import of a %d MiB HAR: peak RSS %.1f MiB", st.Size()>>20, float64(peak)/(1<<20))
	if !strings.Contains(out, fmt.Sprintf("imported %d deliveries", n)) {
		t.Fatalf("import printed %q", out)
	}
	if peak > st.Size() && !raceEnabled { // the race detector's shadow memory grows with the heap
		t.Errorf("peak RSS %.1f MiB importing a %d MiB HAR: it holds the file, not one entry at a time", float64(peak)/(1<<20), st.Size()>>20)
	}
}
