package message

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// This file reads HTTP/1.1 requests as RFC 9112 defines them, and agrees
// with net/http on where a message ends: capture reads the wire with
// net/http (it frames the body while the bytes stream in) and then parses
// the same bytes here, so the two must never disagree. They differ only
// where RFC 9112 lets a recipient reject what net/http accepts; each such
// rejection is a ParseError with Stricter set, and FuzzParseAgainstNetHTTP
// holds the rest equal:
//
//   - obsolete line folding (§5.2; net/http joins the lines),
//   - whitespace between a field name and its colon (§5.1; net/http keeps
//     "Content-Length : 5" as an unknown header and reads no body),
//   - Transfer-Encoding together with Content-Length (§6.1; net/http picks
//     chunked) or in an HTTP/1.0 request (net/http ignores it),
//   - a trailer section whose lines do not end in CRLF (net/http reads them
//     only when a CRLF CRLF follows somewhere).
//
// Like net/http, a bare LF ends a line (§2.2 allows it) and a CR is only
// accepted right before the LF that ends a line; a bare CR anywhere is an error.

// maxChunkLine bounds a chunk-size line, as net/http does (4096 bytes).
const maxChunkLine = 4096

// maxTrailerBytes bounds a trailer section: net/http wants its end within
// the read buffer capture gives it (64 KiB).
const maxTrailerBytes = 64 << 10

// excerptLen is how much of a sender's line an error message quotes.
const excerptLen = 200

// ParseError says why bytes are not an HTTP/1.1 request hookreplay accepts.
type ParseError struct {
	// Reason is one line, with any quoted wire bytes clipped and escaped.
	Reason string
	// Stricter is set when net/http would have accepted the bytes and RFC
	// 9112 lets (or tells) a recipient reject them (see the list above).
	Stricter bool
	err      error
}

func (e *ParseError) Error() string { return e.Reason }

// Unwrap returns io.ErrUnexpectedEOF when the bytes end before the message does.
func (e *ParseError) Unwrap() error { return e.err }

func perr(format string, a ...any) error {
	return &ParseError{Reason: fmt.Sprintf(format, a...)}
}

func stricter(format string, a ...any) error {
	return &ParseError{Reason: fmt.Sprintf(format, a...), Stricter: true}
}

func incomplete(what string) error {
	return &ParseError{Reason: what + " ends early", err: io.ErrUnexpectedEOF}
}

// Excerpt quotes at most 200 bytes of b for a log line or an error: control
// bytes escaped (see Printable), and the full length said when clipped.
func Excerpt(b []byte) string {
	if len(b) <= excerptLen {
		return `"` + Printable(string(b)) + `"`
	}
	return fmt.Sprintf(`"%s"... (%d bytes)`, Printable(string(b[:excerptLen])), len(b))
}

// Head is a request's request line and header section as read from the wire.
type Head struct {
	Method string
	Target string // request-target as sent
	Proto  string // "HTTP/1.1"
	Major  int
	Minor  int
	// Headers are the field lines in wire order and case, values without
	// the blanks around them.
	Headers Headers
	// Len is the number of bytes of the head, its closing empty line included.
	Len int
	// ContentLength is the body's declared length, -1 without Content-Length.
	ContentLength int64
	// Chunked is set for Transfer-Encoding: chunked.
	Chunked bool
}

// AtLeast reports whether the request's version is at least major.minor.
func (h *Head) AtLeast(major, minor int) bool {
	return h.Major > major || h.Major == major && h.Minor >= minor
}

// cutLine returns the line at the start of b without its LF or CRLF, the
// bytes after it, and whether a line end was found.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, b[i+1:], true
}

// ParseHead reads a request line and header section (RFC 9112 §3, §5) from
// the start of raw, and checks the fields that frame the body (§6). The
// bytes after the head (raw[Len:]) are not looked at.
func ParseHead(raw []byte) (*Head, error) {
	line, rest, ok := cutLine(raw)
	if !ok {
		if len(raw) > excerptLen {
			return nil, perr("request line %s has no line end", Excerpt(raw))
		}
		return nil, incomplete("the request line")
	}
	h := &Head{ContentLength: -1}
	if err := h.parseRequestLine(line); err != nil {
		return nil, err
	}
	hs, n, err := parseFieldLines(rest, "header section")
	if err != nil {
		return nil, err
	}
	h.Headers = hs
	h.Len = len(raw) - len(rest) + n
	if err := h.framing(); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *Head) parseRequestLine(line []byte) error {
	method, rest, ok1 := bytes.Cut(line, []byte(" "))
	target, proto, ok2 := bytes.Cut(rest, []byte(" "))
	if !ok1 || !ok2 {
		return perr("malformed request line %s", Excerpt(line))
	}
	if !IsToken(string(method)) {
		return perr("invalid method %s", Excerpt(method))
	}
	var okVersion bool
	if h.Major, h.Minor, okVersion = http.ParseHTTPVersion(string(proto)); !okVersion {
		return perr("malformed HTTP version %s", Excerpt(proto))
	}
	h.Method, h.Target, h.Proto = string(method), string(target), string(proto)
	// The request-target forms of §3.2, read as net/http reads them.
	u := h.Target
	if h.Method == "CONNECT" && !strings.HasPrefix(u, "/") {
		u = "http://" + u
	}
	if _, err := url.ParseRequestURI(u); err != nil {
		return perr("malformed request target %s", Excerpt(target))
	}
	return nil
}

// parseFieldLines reads field lines up to and including the empty line that
// ends them, returning the fields and the bytes taken.
func parseFieldLines(b []byte, what string) (Headers, int, error) {
	var hs Headers
	n := 0
	for {
		line, rest, ok := cutLine(b[n:])
		if !ok {
			if len(b)-n > excerptLen {
				return nil, 0, perr("%s line %s has no line end", what, Excerpt(b[n:]))
			}
			return nil, 0, incomplete("the " + what)
		}
		n = len(b) - len(rest)
		if len(line) == 0 {
			return hs, n, nil
		}
		f, err := parseFieldLine(line, len(hs) == 0)
		if err != nil {
			return nil, 0, err
		}
		hs = append(hs, f)
	}
}

// parseFieldLine reads "name: value" (RFC 9112 §5, RFC 9110 §5.5).
func parseFieldLine(line []byte, first bool) (Header, error) {
	if line[0] == ' ' || line[0] == '\t' {
		if first {
			return Header{}, perr("header section begins with whitespace: %s", Excerpt(line))
		}
		return Header{}, stricter("obsolete line folding (a header line beginning with whitespace) at %s (RFC 9112 section 5.2)", Excerpt(line))
	}
	name, value, ok := bytes.Cut(line, []byte(":"))
	if !ok {
		if bytes.IndexByte(line, '\r') >= 0 {
			return Header{}, perr("bare CR in header line %s (RFC 9112 section 2.2)", Excerpt(line))
		}
		return Header{}, perr("header line without a colon: %s", Excerpt(line))
	}
	if !IsToken(string(name)) {
		trimmed := bytes.TrimRight(name, " \t")
		switch {
		case len(trimmed) > 0 && len(trimmed) < len(name) && IsToken(string(trimmed)):
			return Header{}, &ParseError{Stricter: !bytes.ContainsRune(name, '\t'),
				Reason: fmt.Sprintf("whitespace between header name %s and its colon (RFC 9112 section 5.1)", Excerpt(trimmed))}
		case bytes.IndexByte(name, '\r') >= 0:
			return Header{}, perr("bare CR in header name %s (RFC 9112 section 2.2)", Excerpt(name))
		}
		// net/http keeps names with inner spaces as they are; they are no token.
		return Header{}, &ParseError{Stricter: len(name) > 0 && isTokenOrSpace(name),
			Reason: fmt.Sprintf("header name %s is not a token (RFC 9110 section 5.1)", Excerpt(name))}
	}
	value = bytes.Trim(value, " \t")
	for _, c := range value {
		if !validValueByte(c) {
			if c == '\r' {
				return Header{}, perr("bare CR in header %s (RFC 9112 section 2.2)", Excerpt(name))
			}
			return Header{}, perr("control character %s in header %s", Excerpt([]byte{c}), Excerpt(name))
		}
	}
	return Header{Name: string(name), Value: string(value)}, nil
}

// framing checks the fields that say how long the body is (RFC 9112 §6).
func (h *Head) framing() error {
	if len(h.Headers.Values("Host")) > 1 {
		return perr("more than one Host header (RFC 9112 section 3.2)")
	}
	te := h.Headers.Values("Transfer-Encoding")
	cl := h.Headers.Values("Content-Length")
	if len(te) > 0 && !h.AtLeast(1, 1) {
		return stricter("Transfer-Encoding in an HTTP/1.0 request: the body framing is faulty (RFC 9112 section 6.1)")
	}
	if len(te) > 0 {
		if len(te) > 1 {
			return perr("more than one Transfer-Encoding header")
		}
		if !asciiEqualFold(te[0], "chunked") {
			return perr("unsupported Transfer-Encoding %s", Excerpt([]byte(te[0])))
		}
		if len(cl) > 0 {
			return stricter("both Transfer-Encoding and Content-Length: ambiguous body length (a request smuggling shape, RFC 9112 section 6.1)")
		}
		h.Chunked = true
	}
	for _, v := range cl[min(1, len(cl)):] {
		if v != cl[0] {
			return perr("Content-Length headers disagree (RFC 9112 section 6.3)")
		}
	}
	if len(cl) > 0 {
		n, err := strconv.ParseUint(cl[0], 10, 63)
		if err != nil {
			return perr("invalid Content-Length %s", Excerpt([]byte(cl[0])))
		}
		h.ContentLength = int64(n)
	}
	if h.Chunked {
		for _, v := range h.Headers.Values("Trailer") {
			for _, k := range strings.Split(v, ",") {
				switch http.CanonicalHeaderKey(strings.Trim(k, " \t")) {
				case "Transfer-Encoding", "Trailer", "Content-Length":
					return perr("Trailer announces %s, which may not be a trailer (RFC 9110 section 6.5.1)", Excerpt([]byte(strings.Trim(k, " \t"))))
				}
			}
		}
	}
	return nil
}

// CheckHost applies RFC 9112 §3.2: an HTTP/1.1 request has exactly one
// Host header with a valid value (an empty one is allowed).
func (h *Head) CheckHost() error {
	hosts := h.Headers.Values("Host")
	switch {
	case len(hosts) > 1:
		return errors.New("more than one Host header (RFC 9112 section 3.2)")
	case len(hosts) == 0 && h.AtLeast(1, 1):
		return errors.New("no Host header in an HTTP/1.1 request (RFC 9112 section 3.2)")
	case len(hosts) == 1 && !validHost(hosts[0]):
		return fmt.Errorf("invalid Host header %s (RFC 9112 section 3.2)", Excerpt([]byte(hosts[0])))
	}
	return nil
}

// validHost accepts the bytes of uri-host [":" port] as net/http does
// (golang.org/x/net/http/httpguts.ValidHostHeader).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!$%&'()*+,-.:;=[]_~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Parse reads one HTTP/1.x request from raw wire bytes (as capture stores
// them): headers keep their order and case, the body is de-chunked. Bytes
// after the request (a pipelined next one) are ignored.
func Parse(raw []byte) (*Request, error) {
	h, err := ParseHead(raw)
	if err != nil {
		return nil, err
	}
	body, _, err := h.Body(raw[h.Len:])
	if err != nil {
		return nil, err
	}
	return &Request{Method: h.Method, Target: h.Target, Proto: h.Proto, Headers: h.Headers, Body: body}, nil
}

// Body returns the body that follows the head at the start of b, and how
// many bytes of b it took (with a chunked body, its framing and trailer
// section). The body of a request without Content-Length or chunked
// Transfer-Encoding is empty (RFC 9112 §6.3).
func (h *Head) Body(b []byte) ([]byte, int, error) {
	switch {
	case h.Chunked:
		body, _, n, err := DecodeChunked(b)
		return body, n, err
	case h.ContentLength > 0:
		if int64(len(b)) < h.ContentLength {
			return nil, 0, incomplete("the body")
		}
		return b[:h.ContentLength], int(h.ContentLength), nil
	}
	return nil, 0, nil
}

// DecodeChunked decodes a chunked body (RFC 9112 §7.1) at the start of b,
// returning the data, the trailer fields, and the bytes taken. Chunks are
// read as net/http's chunked reader reads them (chunk extensions skipped,
// lines end in CRLF); the trailer section strictly (CRLF lines, field syntax
// as for headers).
func DecodeChunked(b []byte) (body []byte, trailers Headers, n int, err error) {
	body, n, err = decodeChunks(b)
	if err != nil {
		return nil, nil, 0, err
	}
	rest := b[n:]
	if len(rest) >= 2 && rest[0] == '\r' && rest[1] == '\n' {
		return body, nil, n + 2, nil
	}
	end := bytes.Index(rest, []byte("\r\n\r\n"))
	switch {
	case end < 0 && len(rest) < maxTrailerBytes:
		return nil, nil, 0, incomplete("the trailer section")
	case end < 0 || end+4 > maxTrailerBytes:
		return nil, nil, 0, perr("trailer section longer than %d bytes", maxTrailerBytes)
	}
	section := rest[:end+4]
	if bytes.Count(section, []byte("\n")) != bytes.Count(section, []byte("\r\n")) {
		return nil, nil, 0, stricter("a trailer line does not end in CRLF")
	}
	trailers, _, err = parseFieldLines(section, "trailer section")
	if err != nil {
		return nil, nil, 0, err
	}
	return body, trailers, n + end + 4, nil
}

// decodeChunks reads chunks up to and including the last-chunk line.
func decodeChunks(b []byte) (body []byte, n int, err error) {
	var excess int64
	for {
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 {
			return nil, 0, incomplete("a chunk-size line")
		}
		line := b[n : n+i+1]
		switch cr := bytes.IndexByte(line, '\r'); {
		case cr < 0:
			return nil, 0, perr("chunk-size line ends with a bare LF")
		case cr != len(line)-2:
			return nil, 0, perr("bare CR in a chunk-size line")
		}
		line = line[:len(line)-2]
		if len(line) >= maxChunkLine {
			return nil, 0, perr("chunk-size line longer than %d bytes", maxChunkLine)
		}
		n += i + 1
		// net/http's guard against senders that send mostly framing.
		excess += int64(len(line)) + 2
		line = bytes.TrimRight(line, " \t")
		line, _, _ = bytes.Cut(line, []byte(";"))
		size, err := parseChunkSize(line)
		if err != nil {
			return nil, 0, err
		}
		excess -= 16 + (2 * int64(size))
		excess = max(excess, 0)
		if excess > 16*1024 {
			return nil, 0, perr("chunked encoding contains too much non-data")
		}
		if size == 0 {
			if body == nil {
				body = []byte{}
			}
			return body, n, nil
		}
		if uint64(len(b)-n) < size {
			return nil, 0, incomplete("a chunk")
		}
		body = append(body, b[n:n+int(size)]...)
		n += int(size)
		switch rest := b[n:]; {
		case len(rest) < 2:
			return nil, 0, incomplete("a chunk")
		case rest[0] != '\r' || rest[1] != '\n':
			return nil, 0, perr("chunk data not followed by CRLF")
		}
		n += 2
	}
}

func parseChunkSize(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, perr("empty chunk size")
	}
	if len(v) > 16 {
		return 0, perr("chunk size too large")
	}
	var n uint64
	for _, c := range v {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, perr("invalid byte %s in chunk size", Excerpt([]byte{c}))
		}
		n = n<<4 | uint64(c)
	}
	return n, nil
}

// IsToken reports whether s is an RFC 9110 token (a method or a field name).
func IsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTchar(s[i]) {
			return false
		}
	}
	return true
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// asciiEqualFold is strings.EqualFold without Unicode folding (net/http
// does not read "chun\u212aed", with a Kelvin sign, as chunked).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

func isTokenOrSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && !isTchar(c) {
			return false
		}
	}
	return true
}

// validValueByte: field-vchar, SP, HTAB and obs-text (RFC 9110 §5.5).
func validValueByte(c byte) bool {
	return c == '\t' || c >= 0x20 && c != 0x7f
}

// headEnd returns the length of the head at the start of raw (up to and
// including the first empty line, LF or CRLF), or -1 when it has none.
func headEnd(raw []byte) int {
	rest := raw
	for {
		line, r, ok := cutLine(rest)
		if !ok {
			return -1
		}
		if len(line) == 0 && len(rest) != len(raw) {
			return len(raw) - len(r)
		}
		rest = r
	}
}

// ParseHeaderBlock reads the ordered header list from a request's raw wire
// bytes (request line, headers, blank line, anything after) leniently, for
// bytes stored before the parser was strict: names keep their case,
// duplicates and order are kept, values are trimmed of surrounding blanks,
// obsolete line folding is joined with one space, and the bytes of names
// and values are kept as they were (not necessarily UTF-8). The header
// section ends where ParseHead (and net/http) end it: at the first empty
// line, whether its line ends are CRLF or LF.
func ParseHeaderBlock(raw []byte) Headers {
	if end := headEnd(raw); end >= 0 {
		raw = raw[:end]
	}
	_, rest, _ := cutLine(raw) // the request or status line
	var hs Headers
	for len(rest) > 0 {
		var l []byte
		var ok bool
		if l, rest, ok = cutLine(rest); !ok {
			l, rest = rest, nil
		}
		if len(l) == 0 {
			break
		}
		if (l[0] == ' ' || l[0] == '\t') && len(hs) > 0 {
			last := &hs[len(hs)-1]
			last.Value = strings.TrimSpace(last.Value + " " + strings.TrimSpace(string(l)))
			continue
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok {
			continue
		}
		hs = append(hs, Header{Name: string(name), Value: string(bytes.Trim(value, " \t"))})
	}
	return hs
}
