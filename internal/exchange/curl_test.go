package exchange

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// recorder is a raw TCP server on 127.0.0.1 that keeps the exact bytes of
// every request it reads and answers each with 204.
type recorder struct {
	ln   net.Listener
	mu   sync.Mutex
	raws [][]byte
	wg   sync.WaitGroup
}

func startRecorder(t *testing.T) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				r.serve(c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

type teeReader struct {
	r   io.Reader
	buf bytes.Buffer
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf.Write(p[:n])
	return n, err
}

func (r *recorder) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tee := &teeReader{r: c}
	br := bufio.NewReader(tee)
	for {
		start := tee.buf.Len() - br.Buffered()
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		end := tee.buf.Len() - br.Buffered()
		r.mu.Lock()
		r.raws = append(r.raws, append([]byte(nil), tee.buf.Bytes()[start:end]...))
		r.mu.Unlock()
		if _, err := c.Write([]byte("HTTP/1.1 204 No Content\r\n\r\n")); err != nil {
			return
		}
	}
}

func (r *recorder) received() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.raws...)
}

// curlExpected is what curl sends for d: its headers with Host first and
// named "Host" (curl always writes its Host line first with that name).
func curlExpected(d *store.Delivery) message.Headers {
	var out message.Headers
	for _, h := range d.Headers {
		if strings.EqualFold(h.Name, "Host") {
			out = append(message.Headers{{Name: "Host", Value: h.Value}}, out...)
			continue
		}
		out = append(out, h)
	}
	return out
}

// TestCurlExportReplaysExactly runs a curl export with bash against a
// recording server: every delivery arrives with the same body and the
// same header names and values, in order and case, but for Host, which
// curl puts first and spells "Host".
func TestCurlExportReplaysExactly(t *testing.T) {
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "SKIP TestCurlExportReplaysExactly: %s is not installed\n", tool)
			t.Skipf("%s is not installed: the curl export cannot be run", tool)
		}
	}
	src := storedDeliveries(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "deliveries.sh")
	if _, err := WriteFile(script, Curl, Slice(src), WriteOptions{Count: len(src)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("%s.%d.body", script, src[1].ID)); err != nil {
		t.Errorf("binary body of %s not written beside the script: %v", src[1].Target, err)
	}
	rec := startRecorder(t)
	cmd := exec.Command("bash", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_PROXY=*", "no_proxy=*",
		"HOOKREPLAY_TO=http://" + rec.ln.Addr().String()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash %s: %v\n%s", script, err, out)
	}
	if got := strings.Count(string(out), ": 204"); got != len(src) {
		t.Errorf("curl printed %d answers, want %d:\n%s", got, len(src), out)
	}
	raws := rec.received()
	if len(raws) != len(src) {
		t.Fatalf("recorder got %d requests, want %d", len(raws), len(src))
	}
	for i, raw := range raws {
		d := src[i]
		got, err := message.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", d.Target, err)
		}
		if got.Method != d.Method || got.Target != d.Target {
			t.Errorf("%s: request line %s %s", d.Target, got.Method, got.Target)
		}
		if !bytes.Equal(got.Body, d.Body) {
			t.Errorf("%s: body differs\n got %q\nwant %q", d.Target, got.Body, d.Body)
		}
		if hs := message.ParseHeaderBlock(raw); !sameHeaders(hs, curlExpected(d)) {
			t.Errorf("%s: headers differ\n got %q\nwant %q", d.Target, hs, curlExpected(d))
		}
	}

	// The same file imports back to the requests curl sent.
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := Detect(data); f != Curl || err != nil {
		t.Errorf("Detect = %q, %v", f, err)
	}
	ds, err := Read(data, Curl, ReadOptions{Name: "deliveries.sh", ReadFile: LimitedReadFile(dir, DefaultMaxBody)})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range ds {
		if !sameHeaders(d.Headers, curlExpected(src[i])) || !bytes.Equal(d.Body, src[i].Body) || d.Target != src[i].Target || d.Method != src[i].Method {
			t.Errorf("import of %s: %s %s %q %q", src[i].Target, d.Method, d.Target, d.Headers, d.Body)
		}
	}
}

// TestCurlExportToStdoutRefusesBinaryBody: without -o there is nowhere to
// write a body curl must read from a file; the export says so.
func TestCurlExportToStdoutRefusesBinaryBody(t *testing.T) {
	src := storedDeliveries(t)
	err := Write(io.Discard, Curl, Slice(src), WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "-o") {
		t.Errorf("err = %v, want a hint to use -o", err)
	}
}
