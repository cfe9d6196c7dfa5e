package exchange

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/hookreplay/hookreplay/internal/store"
)

// readRaw reads HTTP/1.1 requests written one after another (as export
// --format raw writes them, or as a pipelined connection carries them):
// each request's own framing (Content-Length or chunked) says where it
// ends, and its bytes are kept exactly.
func readRaw(data []byte, o ReadOptions) ([]*store.Delivery, error) {
	var out []*store.Delivery
	r := bytes.NewReader(data)
	br := bufio.NewReader(r)
	start := 0
	for n := 1; ; n++ {
		// Blank lines between requests are tolerated (RFC 9112 2.2).
		for {
			b, err := br.Peek(1)
			if err != nil || (b[0] != '\r' && b[0] != '\n') {
				break
			}
			br.ReadByte()
			start++
		}
		if _, err := br.Peek(1); errors.Is(err, io.EOF) {
			break
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return nil, fmt.Errorf("request %d (byte %d): not an HTTP request: %v", n, start, err)
		}
		m, err := io.Copy(io.Discard, io.LimitReader(req.Body, o.maxBody()+1))
		if err != nil {
			return nil, fmt.Errorf("request %d (byte %d): body: %v", n, start, err)
		}
		if m > o.maxBody() {
			return nil, fmt.Errorf("request %d (byte %d): body exceeds the %d-byte limit (--max-body)", n, start, o.maxBody())
		}
		end := len(data) - r.Len() - br.Buffered()
		d, err := fromRaw(data[start:end:end], o.maxBody())
		if err != nil {
			return nil, fmt.Errorf("request %d (byte %d): %v", n, start, err)
		}
		out = append(out, d)
		start = end
	}
	if len(out) == 0 {
		return nil, errors.New("no HTTP requests in it")
	}
	return out, nil
}

// writeRaw writes the exact wire bytes of each delivery, one after another:
// every request carries its own framing, so the file is a valid pipelined
// HTTP/1.1 stream (nc 127.0.0.1 3000 < deliveries.http).
func writeRaw(w io.Writer, each Each) error {
	bw := bufio.NewWriter(w)
	err := each(func(d *store.Delivery) error {
		if len(d.Raw) == 0 {
			return fmt.Errorf("delivery %d has no raw bytes", d.ID)
		}
		_, err := bw.Write(d.Raw)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// jsonError words a decoding error without Go type names.
func jsonError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Sprintf("%s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
	}
	return err.Error()
}
