package capture

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
)

// response is one answer written by hand onto the connection.
type response struct {
	status  int
	headers message.Headers
	body    []byte
	// close asks the client to close (Connection: close); http10 answers a
	// kept-alive HTTP/1.0 request with Connection: keep-alive.
	close, http10 bool
	// head: the request was HEAD, so no body follows the headers.
	head bool
	// fromHandler: headers come from the forwarded handler.
	fromHandler bool
	// stream: write the head only; the body follows (relay). length is
	// then the Content-Length to announce, -2 for a close-delimited body,
	// -3 for a chunked one.
	stream bool
	length int64
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

func (r response) write(w io.Writer) error {
	var b bytes.Buffer
	text := http.StatusText(r.status)
	if text == "" {
		text = "Status " + strconv.Itoa(r.status)
	}
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", r.status, text)
	hasDate, hasLength := false, false
	for _, h := range r.headers {
		if message.IsHopByHop(h.Name) || strings.ContainsAny(h.Name+h.Value, "\r\n") {
			continue
		}
		if strings.EqualFold(h.Name, "Content-Length") {
			// Our own length is written below from the body we actually
			// send; only a HEAD answer keeps the handler's.
			if !r.head {
				continue
			}
			hasLength = true
		}
		if strings.EqualFold(h.Name, "Date") {
			hasDate = true
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
	}
	if !hasDate {
		fmt.Fprintf(&b, "Date: %s\r\n", time.Now().UTC().Format(http.TimeFormat))
	}
	allowed := bodyAllowed(r.status)
	switch {
	case !allowed || hasLength:
	case !r.stream:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.body))
	case r.length >= 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n", r.length)
	case r.length == -3:
		b.WriteString("Transfer-Encoding: chunked\r\n")
	}
	if r.close {
		b.WriteString("Connection: close\r\n")
	} else if r.http10 {
		b.WriteString("Connection: keep-alive\r\n")
	}
	b.WriteString("\r\n")
	if allowed && !r.head && !r.stream {
		b.Write(r.body)
	}
	_, err := w.Write(b.Bytes())
	return err
}
