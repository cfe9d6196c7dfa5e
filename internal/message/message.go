// Package message owns the HTTP request as hookreplay keeps it: method, target,
// headers in their original order and case (duplicates kept) and the body bytes.
// Capture builds it, the store persists it, verify signs it and replay sends it.
package message

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Header is one header line as it appeared on the wire: name in its original case.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Headers is an ordered header list. Lookups are case-insensitive; order,
// case and duplicates are preserved.
type Headers []Header

// Get returns the first value of name, or "".
func (h Headers) Get(name string) string {
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			return x.Value
		}
	}
	return ""
}

// Has reports whether name is present (with any value).
func (h Headers) Has(name string) bool {
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			return true
		}
	}
	return false
}

// Values returns every value of name in order.
func (h Headers) Values(name string) []string {
	var out []string
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			out = append(out, x.Value)
		}
	}
	return out
}

// Set replaces the first occurrence of name in place (keeping its position and
// original case) and removes later duplicates; appends when absent.
func (h Headers) Set(name, value string) Headers {
	out := h[:0:0]
	done := false
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			if done {
				continue
			}
			x.Value = value
			done = true
		}
		out = append(out, x)
	}
	if !done {
		out = append(out, Header{Name: name, Value: value})
	}
	return out
}

// Del removes every occurrence of name.
func (h Headers) Del(name string) Headers {
	out := h[:0:0]
	for _, x := range h {
		if !strings.EqualFold(x.Name, name) {
			out = append(out, x)
		}
	}
	return out
}

// Clone returns an independent copy.
func (h Headers) Clone() Headers {
	if h == nil {
		return nil
	}
	return append(Headers(nil), h...)
}

// HTTP converts to a net/http header map (order is lost).
func (h Headers) HTTP() http.Header {
	out := make(http.Header, len(h))
	for _, x := range h {
		out[http.CanonicalHeaderKey(x.Name)] = append(out[http.CanonicalHeaderKey(x.Name)], x.Value)
	}
	return out
}

// Request is an HTTP request with its headers in wire order and its decoded body
// (after chunked transfer decoding; content encodings are left alone).
type Request struct {
	Method  string  `json:"method"`
	Target  string  `json:"target"` // request-target as sent: "/hooks/stripe?x=1"
	Proto   string  `json:"proto"`  // "HTTP/1.1"
	Headers Headers `json:"headers"`
	Body    []byte  `json:"body"`
}

// Clone returns a deep copy.
func (r *Request) Clone() *Request {
	c := *r
	c.Headers = r.Headers.Clone()
	c.Body = append([]byte(nil), r.Body...)
	return &c
}

// hopByHop are the headers that describe one connection, not the message.
var hopByHop = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// IsHopByHop reports whether a header only concerns a single connection.
func IsHopByHop(name string) bool {
	for _, h := range hopByHop {
		if strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// Encode writes the request as HTTP/1.1 wire bytes for the given host and
// target: headers in stored order and case, framing headers replaced by a
// Content-Length that matches Body, Host set to host (kept in place when present).
func (r *Request) Encode(host, target string) []byte {
	var b bytes.Buffer
	method := r.Method
	if method == "" {
		method = "POST"
	}
	if target == "" {
		target = r.Target
	}
	if target == "" {
		target = "/"
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, target)
	hostDone := false
	for _, h := range r.Headers {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			if hostDone {
				continue
			}
			hostDone = true
			fmt.Fprintf(&b, "%s: %s\r\n", h.Name, host)
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Transfer-Encoding"),
			strings.EqualFold(h.Name, "Trailer"), strings.EqualFold(h.Name, "Connection"),
			strings.EqualFold(h.Name, "Keep-Alive"), strings.EqualFold(h.Name, "Proxy-Connection"),
			strings.EqualFold(h.Name, "Upgrade"), strings.EqualFold(h.Name, "Te"):
			continue
		default:
			fmt.Fprintf(&b, "%s: %s\r\n", h.Name, h.Value)
		}
	}
	if !hostDone {
		// Host must come first when we add it ourselves; rebuild with it at the front.
		var b2 bytes.Buffer
		line, rest, _ := bytes.Cut(b.Bytes(), []byte("\r\n"))
		b2.Write(line)
		fmt.Fprintf(&b2, "\r\nHost: %s\r\n", host)
		b2.Write(rest)
		b = b2
	}
	if len(r.Body) > 0 || methodHasBody(method) {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", len(r.Body))
	}
	b.WriteString("\r\n")
	b.Write(r.Body)
	return b.Bytes()
}

func methodHasBody(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT":
		return false
	}
	return true
}

// headerShown is a header line as an error names it: its first word (the
// name, when the colon is missing), never the value, which is often a
// credential (Authorization AccessKey …).
func headerShown(s string) string {
	s = strings.TrimSpace(s)
	name := s
	if i := strings.IndexAny(s, ": \t\r\n"); i >= 0 {
		name = s[:i]
	}
	if name == s {
		return strconv.Quote(Printable(name))
	}
	return strconv.Quote(Printable(name) + " …")
}

// ParseHeaderLine parses "Name: value" as given on a command line. Its
// errors never quote the value.
func ParseHeaderLine(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return Header{}, fmt.Errorf("header %s is not of the form 'Name: value' (its value is not shown: it may be a credential)", headerShown(s))
	}
	value = strings.TrimSpace(value)
	// A line break in a value would write a second header line on the wire.
	if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return Header{}, fmt.Errorf("header %s: the value contains a control character (a line break would add a header line)", headerShown(s))
	}
	return Header{Name: name, Value: value}, nil
}

// MaxResponseHead and MaxResponseHeadLines bound what a HeadRecorder
// passes through before Stop: a response's head, with the 1xx interim heads
// before it.
const (
	MaxResponseHead      = 1 << 20
	MaxResponseHeadLines = 1000
)

// ErrResponseHeadTooLarge is what a HeadRecorder's Read returns once
// MaxResponseHead bytes or MaxResponseHeadLines lines went through it before
// Stop. net/http's ReadResponse has no bound of its own: a peer sending
// header lines (or 1xx answers) without end would otherwise grow the
// reader's memory until its deadline, a gigabyte in a few seconds on
// loopback, and tiny header lines cost ten times their size once parsed.
var ErrResponseHeadTooLarge = errors.New("the answer's header section (with any 1xx interim answers) is longer than 1MiB or 1000 lines")

// HeadRecorder passes reads through from R and keeps what it read until Stop
// is called, so a response's header lines can be recovered in wire order and
// case after net/http has parsed them into a map. Until Stop, reads past
// MaxResponseHead bytes or MaxResponseHeadLines lines fail with
// ErrResponseHeadTooLarge.
type HeadRecorder struct {
	R     io.Reader
	buf   bytes.Buffer
	lines int
	off   bool
}

func (r *HeadRecorder) Read(p []byte) (int, error) {
	if !r.off && (r.buf.Len() >= MaxResponseHead || r.lines > MaxResponseHeadLines) {
		return 0, ErrResponseHeadTooLarge
	}
	n, err := r.R.Read(p)
	if !r.off {
		r.buf.Write(p[:n])
		r.lines += bytes.Count(p[:n], []byte("\n"))
	}
	return n, err
}

// Stop ends recording; the bytes kept so far stay available.
func (r *HeadRecorder) Stop() { r.off = true }

// ResponseHeaders returns the header lines of the n-th response head among
// the recorded bytes (1xx interim heads come first and have no body),
// accepting CRLF or bare LF line ends.
func (r *HeadRecorder) ResponseHeaders(n int) Headers {
	raw := r.buf.Bytes()
	for k := 1; k < n; k++ {
		end := headEnd(raw)
		if end < 0 {
			return nil
		}
		raw = raw[end:]
	}
	return ParseHeaderBlock(raw)
}
