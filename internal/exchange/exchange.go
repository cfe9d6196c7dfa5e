// Package exchange owns the file formats deliveries travel in and out of
// hookreplay besides its own JSONL (which the store owns, because check
// --from reads it too): HAR 1.2, the ngrok agent's captured-request JSON,
// shell files of curl commands and raw HTTP/1.1 wire bytes. It converts
// between those files and store.Delivery values; it never opens the
// database and never prints.
//
// Every reader turns an entry into the exact wire bytes of an HTTP/1.1
// request and derives the delivery's fields from them, the way capture
// does, so an imported delivery replays, verifies and is detected like a
// captured one.
package exchange

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Format names a file format.
type Format string

// The formats. Import reads all five; export writes all but ngrok.
const (
	JSONL Format = "jsonl"
	HAR   Format = "har"
	Ngrok Format = "ngrok"
	Curl  Format = "curl"
	Raw   Format = "raw"
)

// ImportFormats and ExportFormats are the --format values, in help order.
var (
	ImportFormats = []Format{JSONL, HAR, Ngrok, Curl, Raw}
	ExportFormats = []Format{JSONL, HAR, Curl, Raw}
)

// ParseFormat returns the format named s (any case) if it is in allowed.
func ParseFormat(s string, allowed []Format) (Format, error) {
	for _, f := range allowed {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	names := make([]string, len(allowed))
	for i, f := range allowed {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// MaxFile bounds an import file read whole: HAR, ngrok, curl and raw files
// are parsed whole before anything is added (JSONL is read a line at a time,
// EachJSONL, and has no bound).
const MaxFile = 512 << 20

// DefaultMaxBody is the largest request body an import accepts unless told
// otherwise: the same default as capture's --max-body.
const DefaultMaxBody = 10 << 20

// ReadOptions says where an import comes from and how much it may hold.
type ReadOptions struct {
	// Name is the file name recorded in each delivery's Origin ("stdin" for -).
	Name string
	// MaxBody bounds each request body (0: DefaultMaxBody).
	MaxBody int64
	// ReadFile reads a file a curl command names with -d @FILE; nil refuses
	// such references. It must bound what it reads (see LimitedReadFile).
	ReadFile func(name string) ([]byte, error)
	// Note, when set, is told in one line about entries left out on purpose
	// (a HAR's data: and blob: URLs, which are no requests).
	Note func(string)
}

func (o ReadOptions) note(format string, a ...any) {
	if o.Note != nil {
		o.Note(fmt.Sprintf(format, a...))
	}
}

// name is the file named in Origin.
func (o ReadOptions) name() string {
	if o.Name == "" {
		return "stdin"
	}
	return o.Name
}

func (o ReadOptions) maxBody() int64 {
	if o.MaxBody <= 0 {
		return DefaultMaxBody
	}
	return o.MaxBody
}

// ReadAll reads r whole, refusing more than MaxFile bytes with one clear line
// instead of holding an absurd file in memory.
func ReadAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, fmt.Errorf("larger than %d MiB, the most one import reads; split it", MaxFile>>20)
	}
	return b, nil
}

// Detect names the format of an import file from its first bytes: a JSON
// object with "log" is HAR, one with "requests" or a "request" holding
// "raw" (or an array of those) is the ngrok agent's JSON, any other JSON
// object line is JSONL, a first command "curl" is a curl file and an HTTP
// request line is raw HTTP.
func Detect(data []byte) (Format, error) {
	b := bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "", errors.New("the file is empty: no deliveries in it")
	}
	switch b[0] {
	case '{':
		keys := topKeys(b)
		switch {
		case keys["log"]:
			return HAR, nil
		case keys["requests"] || (keys["request"] && keys["tunnel_name"]):
			return Ngrok, nil
		}
		return JSONL, nil
	case '[':
		return Ngrok, nil
	}
	if f, ok := detectText(b); ok {
		return f, nil
	}
	return "", errors.New("cannot tell its format (not JSONL, HAR, ngrok JSON, curl commands or raw HTTP); give --format")
}

// detectText recognises a curl file (comments and blank lines, then a word
// "curl") and raw HTTP (a request line).
func detectText(b []byte) (Format, bool) {
	for len(b) > 0 {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		b = rest
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if bytes.HasPrefix(t, []byte("curl ")) || bytes.Equal(t, []byte("curl")) || bytes.HasPrefix(t, []byte("curl\t")) {
			return Curl, true
		}
		if isRequestLine(string(bytes.TrimSuffix(line, []byte("\r")))) {
			return Raw, true
		}
		return "", false
	}
	return "", false
}

func isRequestLine(l string) bool {
	parts := strings.Split(l, " ")
	return len(parts) == 3 && isToken(parts[0]) && parts[1] != "" && strings.HasPrefix(parts[2], "HTTP/1.")
}

// EachJSONL reads a JSONL import from r a line at a time, calling fn with
// each delivery as Read would return it (body within o's bound, Origin set),
// so an export of any size is imported holding one delivery. An error from
// fn stops the reading and is returned as is.
func EachJSONL(r io.Reader, o ReadOptions, fn func(*store.Delivery) error) error {
	origin := string(JSONL) + ":" + o.name()
	return store.EachJSONL(r, o.maxBody(), func(line int, d *store.Delivery) error {
		if int64(len(d.Body)) > o.maxBody() {
			return fmt.Errorf("line %d: %s", line, bodyTooLarge(len(d.Body), o.maxBody()))
		}
		d.Origin = origin
		return fn(d)
	})
}

// Read parses data in format f into deliveries, each with its Origin set
// ("har:NAME"). Provider and event identity are left empty unless the file
// carries them (JSONL, HAR written by hookreplay); the caller detects them.
func Read(data []byte, f Format, o ReadOptions) ([]*store.Delivery, error) {
	var ds []*store.Delivery
	var err error
	switch f {
	case JSONL:
		err = EachJSONL(bytes.NewReader(data), o, func(d *store.Delivery) error {
			ds = append(ds, d)
			return nil
		})
	case HAR:
		ds, err = readHAR(data, o)
	case Ngrok:
		ds, err = readNgrok(data, o)
	case Curl:
		ds, err = readCurl(data, o)
	case Raw:
		ds, err = readRaw(data, o)
	default:
		return nil, fmt.Errorf("cannot import format %q", f)
	}
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		d.Origin = string(f) + ":" + o.name()
	}
	return ds, nil
}

func bodyTooLarge(n int, max int64) string {
	return fmt.Sprintf("body of %d bytes exceeds the %d-byte limit (--max-body)", n, max)
}

// fromRaw builds a delivery from exact request bytes, the way capture
// stores one: request line, headers in order and case, de-chunked body.
func fromRaw(raw []byte, maxBody int64) (*store.Delivery, error) {
	req, err := message.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not an HTTP request: %v", err)
	}
	if int64(len(req.Body)) > maxBody {
		return nil, errors.New(bodyTooLarge(len(req.Body), maxBody))
	}
	if err := checkRequest(req.Method, req.Target, req.Headers); err != nil {
		return nil, err
	}
	return &store.Delivery{
		Method:  req.Method,
		Target:  req.Target,
		Proto:   req.Proto,
		Headers: message.ParseHeaderBlock(raw),
		Raw:     raw,
		Body:    req.Body,
	}, nil
}

// checkRequest refuses what would corrupt a rebuilt request on the wire:
// a method or header name that is not a token, a target with blanks or
// control characters, a value with a line break or NUL.
func checkRequest(method, target string, hs message.Headers) error {
	if !isToken(method) {
		return fmt.Errorf("method %q is not an HTTP method", message.Printable(method))
	}
	if target == "" || strings.ContainsFunc(target, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("target %q is not a request target", message.Printable(target))
	}
	for i, h := range hs {
		if !isToken(h.Name) {
			return fmt.Errorf("header %d: name %q is not a valid header name", i+1, message.Printable(h.Name))
		}
		if strings.ContainsAny(h.Value, "\r\n\x00") {
			return fmt.Errorf("header %s: value holds a line break or NUL", h.Name)
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (methods, header names).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
