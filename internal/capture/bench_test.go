package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkCapture measures one delivery end to end over a kept-alive
// connection: parse, commit to SQLite (WAL, synchronous=FULL) and answer;
// "forward" adds the trip to a handler and recording its answer, "direct" is
// that handler alone for comparison. Run with -cpu to vary concurrency.
func BenchmarkCapture(b *testing.B) {
	body := fixture(b, "odd_case_order.http")
	_, payload, _ := bytes.Cut(body, []byte("\r\n\r\n"))
	handler := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(`{"ok":true}`))
	}))
	defer handler.Close()
	for _, bc := range []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"direct", func(b *testing.B) string { return handler.URL }},
		{"store", func(b *testing.B) string { return "http://" + startServer(b, Options{}).addr }},
		{"forward", func(b *testing.B) string { return "http://" + startServer(b, Options{Forward: handler.URL}).addr }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			url := bc.url(b) + "/hooks/stripe"
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer client.CloseIdleConnections()
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest("POST", url, bytes.NewReader(payload))
					req.Header.Set("Stripe-Signature", "t=1700000000,v1=00")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCaptureBody measures capture's read-and-tee for growing bodies:
// one kept-alive raw TCP connection sends Content-Length requests and reads
// the {"id":N} answers, capture answering itself (store mode). allocs/op
// must not grow with the body: the bytes are copied, not allocated per byte.
func BenchmarkCaptureBody(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			ts := startServer(b, Options{})
			c, err := net.Dial("tcp", ts.addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			body := bytes.Repeat([]byte("a"), size)
			req := append(fmt.Appendf(nil, "POST /hooks HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size), body...)
			br := bufio.NewReader(c)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Write(req); err != nil {
					b.Fatal(err)
				}
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
