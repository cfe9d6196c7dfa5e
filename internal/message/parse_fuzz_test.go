package message

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// capture reads requests with this buffer size; net/http's limits on chunk
// lines and trailer sections depend on it.
const captureBufSize = 64 << 10

// addHTTPFixtures seeds f with the request fixtures of message and capture.
func addHTTPFixtures(f *testing.F) {
	for _, dir := range []string{"testdata", "../capture/testdata"} {
		names, _ := filepath.Glob(filepath.Join(dir, "*.http"))
		for _, name := range names {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

// netHTTPRead is the oracle: the request as net/http reads it, body included.
func netHTTPRead(raw []byte) (*http.Request, []byte, error) {
	hr, err := http.ReadRequest(bufio.NewReaderSize(bytes.NewReader(raw), captureBufSize))
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(hr.Body)
	return hr, body, err
}

// FuzzParseAgainstNetHTTP feeds the same bytes to Parse and to net/http's
// ReadRequest: both must frame the request the same way (method, target,
// version, Host, header values per name in order, body, trailers) or both reject
// it, except where Parse is stricter on purpose (ParseError.Stricter, listed
// at the top of parse.go).
func FuzzParseAgainstNetHTTP(f *testing.F) {
	addHTTPFixtures(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		ours, oerr := Parse(raw)
		hr, body, herr := netHTTPRead(raw)
		switch {
		case oerr != nil && herr != nil:
			return
		case oerr != nil:
			var pe *ParseError
			if errors.As(oerr, &pe) && pe.Stricter {
				return
			}
			t.Fatalf("Parse rejects what net/http accepts: %v\n%q", oerr, raw)
		case herr != nil:
			t.Fatalf("Parse accepts what net/http rejects (%v)\n%q", herr, raw)
		}
		if ours.Method != hr.Method || ours.Target != hr.RequestURI || ours.Proto != hr.Proto {
			t.Fatalf("request line: ours %q %q %q, net/http %q %q %q\n%q", ours.Method, ours.Target, ours.Proto, hr.Method, hr.RequestURI, hr.Proto, raw)
		}
		if !bytes.Equal(ours.Body, body) {
			t.Fatalf("body: ours %q, net/http %q\n%q", ours.Body, body, raw)
		}
		head, _ := ParseHead(raw)
		want := netHTTPView(head)
		if len(want) == 0 && len(hr.Header) == 0 {
			want = hr.Header
		}
		if !reflect.DeepEqual(want, hr.Header) {
			t.Fatalf("headers: ours %q, net/http %q\n%q", want, hr.Header, raw)
		}
		if hr.URL.Host == "" && hr.Host != head.Headers.Get("Host") {
			t.Fatalf("host: ours %q, net/http %q\n%q", head.Headers.Get("Host"), hr.Host, raw)
		}
		if head.Chunked {
			_, trailers, _, _ := DecodeChunked(raw[head.Len:])
			got := http.Header{}
			for _, v := range head.Headers.Values("Trailer") {
				for _, k := range strings.Split(v, ",") {
					if k = strings.Trim(k, " \t"); k != "" {
						got[http.CanonicalHeaderKey(k)] = nil
					}
				}
			}
			if len(got) == 0 {
				got = nil
			}
			if len(trailers) > 0 {
				if got == nil {
					got = trailers.HTTP()
				} else {
					for k, v := range trailers.HTTP() {
						got[k] = v
					}
				}
			}
			if !reflect.DeepEqual(got, hr.Trailer) {
				t.Fatalf("trailers: ours %q, net/http %q\n%q", got, hr.Trailer, raw)
			}
		}
	})
}

// netHTTPView returns head's headers as net/http's Request.Header keeps
// them: canonical names, framing headers it consumed removed, duplicate
// equal Content-Lengths merged, Pragma: no-cache implying Cache-Control.
func netHTTPView(head *Head) http.Header {
	m := head.Headers.HTTP()
	delete(m, "Host") // it becomes Request.Host
	delete(m, "Transfer-Encoding")
	if head.Chunked {
		delete(m, "Trailer")
	}
	if cl := m["Content-Length"]; len(cl) > 1 {
		m["Content-Length"] = cl[:1]
	}
	if p := m["Pragma"]; len(p) > 0 && p[0] == "no-cache" && len(m["Cache-Control"]) == 0 {
		m["Cache-Control"] = []string{"no-cache"}
	}
	return m
}

// FuzzRequestLine checks the request line alone against net/http: the same
// method, target and version, or both reject.
func FuzzRequestLine(f *testing.F) {
	for _, s := range []string{
		"POST /webhooks/stripe?x=1 HTTP/1.1", "GET * HTTP/1.1", "CONNECT example.com:443 HTTP/1.1",
		"GET http://example.com/a HTTP/1.0", "GET  / HTTP/1.1", "GET / HTTP/1.1 ", "GET /\x1b[2J HTTP/1.1",
		"G\x00T / HTTP/1.1", "GET / HTTP/2.0", "GET / HTTP/1.10", "get /%zz HTTP/1.1", "GET / http/1.1",
		"GET /\r HTTP/1.1", "GET / HTTP/1.1\r", "PRI * HTTP/2.0", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return
		}
		raw := []byte(line + "\r\nHost: x\r\n\r\n")
		ours, oerr := ParseHead(raw)
		hr, herr := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		switch {
		case oerr != nil && herr != nil:
			if len(oerr.Error()) > 4*excerptLen+100 { // an excerpt escapes each byte to at most 4
				t.Fatalf("error message of %d bytes", len(oerr.Error()))
			}
			return
		case oerr != nil:
			t.Fatalf("ParseHead rejects what net/http accepts: %v\n%q", oerr, line)
		case herr != nil:
			t.Fatalf("ParseHead accepts what net/http rejects (%v)\n%q", herr, line)
		}
		if ours.Method != hr.Method || ours.Target != hr.RequestURI || ours.Proto != hr.Proto ||
			ours.Major != hr.ProtoMajor || ours.Minor != hr.ProtoMinor {
			t.Fatalf("ours %+v, net/http %q %q %q\n%q", ours, hr.Method, hr.RequestURI, hr.Proto, line)
		}
	})
}

// FuzzDecodeChunked checks chunk decoding against net/http's chunked
// reader: the same data, or both reject.
func FuzzDecodeChunked(f *testing.F) {
	for _, s := range []string{
		"0\r\n", "5\r\nhello\r\n0\r\n", "5;ext=1\r\nhello\r\n0\r\n\r\n", "5 \t\r\nhello\r\n0\r\n",
		"5\nhello\r\n0\r\n", "5\r\nhello\n0\r\n", "5\r\r\nhello\r\n0\r\n", "A\r\n0123456789\r\n0\r\n",
		"00000000000000005\r\nhello\r\n0\r\n", "ffffffffffffffff\r\nx\r\n", "-1\r\nx\r\n0\r\n",
		"1\r\nx\r\n1\r\ny\r\n1\r\nz\r\n0;a=\"b\"\r\n", "5\r\nhel", "\r\n", "0x5\r\nhello\r\n0\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ours, n, oerr := decodeChunks(b)
		theirs, herr := io.ReadAll(httputil.NewChunkedReader(bufio.NewReaderSize(bytes.NewReader(b), captureBufSize)))
		switch {
		case oerr != nil && herr != nil:
			return
		case oerr != nil:
			t.Fatalf("decodeChunks rejects what net/http accepts: %v\n%q", oerr, b)
		case herr != nil:
			t.Fatalf("decodeChunks accepts what net/http rejects (%v)\n%q", herr, b)
		}
		if !bytes.Equal(ours, theirs) || n > len(b) {
			t.Fatalf("ours %q (%d bytes taken), net/http %q\n%q", ours, n, theirs, b)
		}
	})
}
