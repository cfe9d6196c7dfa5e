package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
)

// JSONLVersion is the version of the delivery lines WriteJSONL writes. A
// reader refuses lines of a newer version rather than guess at them.
const JSONLVersion = 1

// DefaultJSONLMaxBody is the body bound of ReadJSONL: capture's and
// import's default --max-body.
const DefaultJSONLMaxBody = 10 << 20

// JSONLLineLimit is the longest line a delivery whose body is at most
// maxBody takes in JSONL: its raw bytes (the body with chunk framing, which
// capture bounds to twice the body, and the head) and its body, both in
// base64 (4 bytes for 3), plus 10 MiB for the head, the stored response
// (capture keeps 1 MiB of it), the headers as JSON and the other fields. A
// longer line is refused as it is read, before it is held whole: a line of
// several GB takes no more memory than this bound.
func JSONLLineLimit(maxBody int64) int64 {
	return 4*maxBody + 10<<20 // base64 of 3×maxBody is 4×maxBody
}

// jsonlDelivery is one line of a JSONL export: every field of a Delivery,
// byte fields in standard base64, times in RFC 3339 with nanoseconds (UTC).
type jsonlDelivery struct {
	SchemaVersion   int               `json:"schema_version"`
	ID              int64             `json:"id"`
	ReceivedAt      string            `json:"received_at"`
	Source          string            `json:"source"`
	RemoteAddr      string            `json:"remote_addr"`
	Provider        string            `json:"provider"`
	EventID         string            `json:"event_id"`
	EventType       string            `json:"event_type"`
	Identity        map[string]string `json:"identity"`
	Method          string            `json:"method"`
	Target          string            `json:"target"`
	Proto           string            `json:"proto"`
	Headers         message.Headers   `json:"headers"`
	Raw             string            `json:"raw"`
	Body            string            `json:"body"`
	Verification    string            `json:"verification"`
	ResponseStatus  int               `json:"response_status"`
	ResponseHeaders message.Headers   `json:"response_headers"`
	ResponseBody    string            `json:"response_body"`
	LatencyNS       int64             `json:"latency_ns"`
	ForwardError    string            `json:"forward_error"`
	Origin          string            `json:"origin,omitempty"`
	// DerivedFrom is written for readers; import does not restore it (the
	// ids of another store are not this one's).
	DerivedFrom int64 `json:"derived_from,omitempty"`
}

// WriteJSONL writes ds to w, one delivery per line, with every field: the
// exact wire bytes (raw) and the decoded body in base64, headers in their
// order, received_at in RFC 3339 with nanoseconds, and the handler's response.
func WriteJSONL(w io.Writer, ds []*Delivery) error {
	jw := NewJSONLWriter(w)
	for _, d := range ds {
		if err := jw.Write(d); err != nil {
			return err
		}
	}
	return jw.Flush()
}

// JSONLWriter writes deliveries as WriteJSONL does, one at a time, so an
// export of a whole store holds one delivery in memory.
type JSONLWriter struct {
	bw   *bufio.Writer
	line bytes.Buffer
	enc  *json.Encoder
}

// NewJSONLWriter returns a writer to w; Write each delivery, then Flush.
// Lines escape C1, DEL and bidi controls as every JSON hookreplay writes
// does (message.EscapeJSON): a file shown by cat or written to a terminal
// acts on nothing, and it decodes to the same values.
func NewJSONLWriter(w io.Writer) *JSONLWriter {
	j := &JSONLWriter{bw: bufio.NewWriter(w)}
	j.enc = json.NewEncoder(&j.line)
	j.enc.SetEscapeHTML(false)
	return j
}

// Write writes d's line.
func (j *JSONLWriter) Write(d *Delivery) error {
	line := jsonlDelivery{
		SchemaVersion:   JSONLVersion,
		ID:              d.ID,
		Source:          d.Source,
		RemoteAddr:      d.RemoteAddr,
		Provider:        d.Provider,
		EventID:         d.EventID,
		EventType:       d.EventType,
		Identity:        nonNilMap(d.Identity),
		Method:          d.Method,
		Target:          d.Target,
		Proto:           d.Proto,
		Headers:         nonNilHeaders(d.Headers),
		Raw:             base64.StdEncoding.EncodeToString(d.Raw),
		Body:            base64.StdEncoding.EncodeToString(d.Body),
		Verification:    d.Verification,
		ResponseStatus:  d.ResponseStatus,
		ResponseHeaders: nonNilHeaders(d.ResponseHeaders),
		ResponseBody:    base64.StdEncoding.EncodeToString(d.ResponseBody),
		LatencyNS:       d.Latency.Nanoseconds(),
		ForwardError:    d.ForwardError,
		Origin:          d.Origin,
		DerivedFrom:     d.DerivedFrom,
	}
	if !d.ReceivedAt.IsZero() {
		line.ReceivedAt = d.ReceivedAt.UTC().Format(time.RFC3339Nano)
	}
	j.line.Reset()
	if err := j.enc.Encode(line); err != nil {
		return fmt.Errorf("write delivery %d as jsonl: %w", d.ID, err)
	}
	_, err := j.bw.Write(message.EscapeJSON(j.line.Bytes()))
	return err
}

// Flush writes what is buffered.
func (j *JSONLWriter) Flush() error {
	if err := j.bw.Flush(); err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	return nil
}

// ReadJSONL reads deliveries written by WriteJSONL (or by hand). Blank lines
// are skipped; unknown fields are ignored. A line may leave out fields: with
// only raw, the request line, headers and body are parsed from the raw
// bytes; with only method, target, headers and body, the raw bytes are built
// from them. Provider and event identity are left as given (empty when
// absent). Errors name the line: "line 3: raw: illegal base64 data ...".
func ReadJSONL(r io.Reader) ([]*Delivery, error) {
	var out []*Delivery
	err := EachJSONL(r, DefaultJSONLMaxBody, func(_ int, d *Delivery) error {
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EachJSONL reads deliveries as ReadJSONL does, calling fn with each and
// the number of its line as soon as the line is read: a file of any length
// is read holding one line, and a line longer than JSONLLineLimit(maxBody)
// is refused before it is held whole. An error from fn stops the reading
// and is returned as is.
func EachJSONL(r io.Reader, maxBody int64, fn func(line int, d *Delivery) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	limit := JSONLLineLimit(maxBody)
	for n := 1; ; n++ {
		line, err := readLine(br, limit, maxBody)
		if len(line) > 0 {
			if n == 1 {
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf")) // a BOM from an editor
			}
			if len(bytes.TrimSpace(line)) > 0 {
				d, perr := parseJSONLLine(line)
				if perr != nil {
					return fmt.Errorf("line %d: %w", n, perr)
				}
				if err := fn(n, d); err != nil {
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
}

// readLine reads one line of at most limit bytes; a longer one is refused
// once limit bytes of it are read (maxBody is named in the error). The line
// is gathered in pieces and joined once it ends: growing one slice by
// appending would leave each smaller copy behind as garbage, so a refused
// line took about three times the limit (a 56 MB line 160-190 MiB of RSS);
// in pieces it takes the limit.
func readLine(br *bufio.Reader, limit, maxBody int64) ([]byte, error) {
	var pieces [][]byte
	var n int64
	for {
		chunk, err := br.ReadSlice('\n')
		if n += int64(len(chunk)); n > limit {
			return nil, fmt.Errorf("longer than %s, the most a delivery with a body of up to %s takes in JSONL (raw and body in base64): its body is over the limit",
				sizeText(limit), sizeText(maxBody))
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			pieces = append(pieces, bytes.Clone(chunk))
			continue
		}
		line := make([]byte, 0, n)
		for _, p := range pieces {
			line = append(line, p...)
		}
		line = append(line, chunk...)
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

func parseJSONLLine(line []byte) (*Delivery, error) {
	if b := bytes.TrimSpace(line); b[0] != '{' {
		return nil, fmt.Errorf("not a JSON object (each line holds one delivery, as written by hookreplay export)")
	}
	var j jsonlDelivery
	if err := json.Unmarshal(line, &j); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se) && se.Offset >= int64(len(line)):
			return nil, fmt.Errorf("invalid JSON: %v (each delivery must be on one line: pretty-printed JSON is not JSONL)", se)
		case errors.As(err, &se):
			return nil, fmt.Errorf("invalid JSON at column %d: %v", se.Offset, se)
		case errors.As(err, &te) && te.Field != "":
			return nil, fmt.Errorf("%s: want a %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if j.SchemaVersion > JSONLVersion {
		return nil, fmt.Errorf("schema_version %d is newer than this hookreplay reads (%d); upgrade hookreplay", j.SchemaVersion, JSONLVersion)
	}
	d := &Delivery{
		ID:              j.ID,
		Source:          j.Source,
		RemoteAddr:      j.RemoteAddr,
		Provider:        j.Provider,
		EventID:         j.EventID,
		EventType:       j.EventType,
		Identity:        j.Identity,
		Method:          j.Method,
		Target:          j.Target,
		Proto:           j.Proto,
		Headers:         j.Headers,
		Verification:    j.Verification,
		ResponseStatus:  j.ResponseStatus,
		ResponseHeaders: j.ResponseHeaders,
		Latency:         time.Duration(j.LatencyNS),
		ForwardError:    j.ForwardError,
		Origin:          j.Origin,
	}
	var err error
	if j.ReceivedAt != "" {
		if d.ReceivedAt, err = time.Parse(time.RFC3339Nano, j.ReceivedAt); err != nil {
			return nil, fmt.Errorf("received_at %q is not an RFC 3339 time", j.ReceivedAt)
		}
	}
	for _, f := range []struct {
		name string
		in   string
		out  *[]byte
	}{{"raw", j.Raw, &d.Raw}, {"body", j.Body, &d.Body}, {"response_body", j.ResponseBody, &d.ResponseBody}} {
		if *f.out, err = base64.StdEncoding.DecodeString(f.in); err != nil {
			return nil, fmt.Errorf("%s: %v (byte fields are standard base64)", f.name, err)
		}
	}
	if j.LatencyNS < 0 {
		return nil, fmt.Errorf("latency_ns %d is negative", j.LatencyNS)
	}
	if j.ResponseStatus < 0 || j.ResponseStatus > 999 {
		return nil, fmt.Errorf("response_status %d is not an HTTP status", j.ResponseStatus)
	}
	if err := completeRequest(d, j); err != nil {
		return nil, err
	}
	return d, nil
}

// completeRequest fills what a hand-written line left out: the request from
// the raw bytes, or the raw bytes from the request; then checks that the
// request could be sent as it is.
//
// When a line has raw bytes, they are what the delivery is: show --raw
// prints them, while replay and check send the request from the fields. So
// raw must be an HTTP request and every field the line gives must say what
// raw says: a line whose raw is "POST /webhooks/stripe" and whose fields
// are "DELETE /admin/users/1" is refused, never imported as one request
// shown and another sent.
func completeRequest(d *Delivery, j jsonlDelivery) error {
	if len(d.Raw) == 0 && d.Method == "" {
		return errors.New("delivery has neither raw bytes (raw) nor a request (method, target, headers, body)")
	}
	if len(d.Raw) > 0 {
		req, err := message.Parse(d.Raw)
		if err != nil {
			return fmt.Errorf("raw: not an HTTP request: %v", err)
		}
		if err := fromRaw(d, j, req); err != nil {
			return err
		}
	}
	if d.Proto == "" {
		d.Proto = "HTTP/1.1"
	}
	if err := checkRequest(d); err != nil {
		return err
	}
	if len(d.Raw) == 0 {
		host := d.Headers.Get("Host")
		if host == "" {
			host = "localhost"
		}
		d.Raw = (&message.Request{Method: d.Method, Target: d.Target, Headers: d.Headers, Body: d.Body}).Encode(host, d.Target)
	}
	return nil
}

// fromRaw sets d's request from req, the request its raw bytes hold,
// after checking each request field the line gives against it. A field
// agrees when it is raw's value, or raw's as JSON carries it (JSON strings
// cannot hold invalid UTF-8: each such byte is written as U+FFFD); raw's
// value is kept. Headers are compared without the framing ones
// (Content-Length, Transfer-Encoding: a request is always sent with its own)
// and without a Host the fields leave out (deliveries built from a HAR or a
// curl command have raw bytes whose Host and framing were added).
func fromRaw(d *Delivery, j jsonlDelivery, req *message.Request) error {
	differ := func(field, got, want string) error {
		return fmt.Errorf("%s %s disagrees with raw, whose request says %s: fields must say what raw says (leave them out and they are read from raw)",
			field, clip(got), clip(want))
	}
	switch {
	case d.Method != "" && !sameText(d.Method, req.Method):
		return differ("method", d.Method, req.Method)
	case d.Target != "" && !sameText(d.Target, req.Target):
		return differ("target", d.Target, req.Target)
	case d.Proto != "" && !sameText(d.Proto, req.Proto):
		return differ("proto", d.Proto, req.Proto)
	case j.Body != "" && !bytes.Equal(d.Body, req.Body):
		return fmt.Errorf("body (%d bytes) disagrees with the body raw holds (%d bytes): fields must say what raw says (leave body out and it is read from raw)", len(d.Body), len(req.Body))
	}
	d.Method, d.Target, d.Proto, d.Body = req.Method, req.Target, req.Proto, req.Body
	if j.Headers == nil {
		d.Headers = req.Headers
		return nil
	}
	given, hasHost := compared(d.Headers, true)
	inRaw, _ := compared(req.Headers, hasHost)
	for i := 0; i < max(len(given), len(inRaw)); i++ {
		var got, want string
		if i < len(given) {
			got = d.Headers[given[i]].Name + ": " + d.Headers[given[i]].Value
		}
		if i < len(inRaw) {
			want = req.Headers[inRaw[i]].Name + ": " + req.Headers[inRaw[i]].Value
		}
		if !sameText(got, want) {
			return fmt.Errorf("header %d %s disagrees with raw, whose header there is %s: fields must say what raw says (leave headers out and they are read from raw)",
				i+1, clip(orNone(got)), clip(orNone(want)))
		}
	}
	hs := slices.Clone(d.Headers)
	for i, k := range given {
		hs[k] = req.Headers[inRaw[i]]
	}
	d.Headers = hs
	return nil
}

// compared returns the indexes of hs's headers that are compared with raw:
// all but the framing ones, and Host only when host; and whether hs has a Host.
func compared(hs message.Headers, host bool) (idx []int, hasHost bool) {
	for i, h := range hs {
		switch {
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Transfer-Encoding"):
		case strings.EqualFold(h.Name, "Host"):
			hasHost = true
			if host {
				idx = append(idx, i)
			}
		default:
			idx = append(idx, i)
		}
	}
	return idx, hasHost
}

// sameText reports whether field, a string read from JSON, is raw's text
// s: equal, or equal to s as JSON carries it (JSONText).
func sameText(field, s string) bool { return field == s || field == JSONText(s) }

// JSONText is s as a JSON string carries it: each byte that is not UTF-8
// becomes U+FFFD (as encoding/json writes it), the rest is unchanged.
func JSONText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clip quotes s for an error, escaped, cut to 80 bytes.
func clip(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q…", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// checkRequest refuses what would corrupt the request when it is sent again:
// a method that is not a token, a target with spaces or control characters,
// header names that are not tokens and values with line breaks.
func checkRequest(d *Delivery) error {
	if !isToken(d.Method) {
		return fmt.Errorf("method %q is not an HTTP method", d.Method)
	}
	if d.Target == "" || strings.ContainsFunc(d.Target, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("target %q is not a request target", d.Target)
	}
	for i, h := range d.Headers {
		if !isToken(h.Name) {
			return fmt.Errorf("header %d: name %q is not a valid header name", i+1, h.Name)
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

// ImportDeliveries inserts ds as new rows in one transaction (all or none),
// keeping everything but the id, and sets each d.ID to its new id.
func (s *Store) ImportDeliveries(ctx context.Context, ds []*Delivery) error {
	im, err := s.BeginImport(ctx)
	if err != nil {
		return err
	}
	defer im.Rollback()
	ids := make([]int64, len(ds))
	recvs := make([]time.Time, len(ds))
	for i, d := range ds {
		if ids[i], recvs[i], err = im.Add(ctx, d); err != nil {
			return fmt.Errorf("import delivery %d of %d: %w", i+1, len(ds), err)
		}
	}
	if err := im.Commit(); err != nil {
		return err
	}
	for i, d := range ds {
		d.ID, d.ReceivedAt = ids[i], recvs[i]
	}
	return nil
}

// Importer adds deliveries one at a time inside one transaction, so an
// import of any size holds one delivery in memory and is still all or none:
// nothing is visible before Commit, and Rollback (or an error) adds nothing.
type Importer struct {
	tx   txn
	stmt stmt
}

// BeginImport starts an import; the caller ends it with Commit or Rollback.
func (s *Store) BeginImport(ctx context.Context) (*Importer, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("import deliveries: %w", err)
	}
	stmt, err := tx.PrepareContext(ctx, insertDeliverySQL)
	if err != nil {
		tx.Rollback()
		return nil, fmt.Errorf("import deliveries: %w", err)
	}
	return &Importer{tx: tx, stmt: stmt}, nil
}

// Add inserts d as a new row, keeping everything but its id, and returns
// the new id and the time it is recorded as received (d.ReceivedAt, or now
// when unset). d itself is left as it is.
func (im *Importer) Add(ctx context.Context, d *Delivery) (int64, time.Time, error) {
	return insertWith(ctx, im.stmt, d)
}

// insertWith runs insert, a prepared insertDeliverySQL, for d and returns
// the new id and the time d is recorded as received (d.ReceivedAt, or now
// when unset); d itself is left as it is.
func insertWith(ctx context.Context, insert stmt, d *Delivery) (int64, time.Time, error) {
	recv := receivedAt(d)
	var id int64
	err := insert.QueryRowContext(ctx, deliveryArgs(d, recv)...).Scan(&id)
	return id, recv, err
}

// receivedAt is when d is recorded as received: d.ReceivedAt, or now.
func receivedAt(d *Delivery) time.Time {
	if d.ReceivedAt.IsZero() {
		return time.Now()
	}
	return d.ReceivedAt
}

// Commit makes every added delivery visible at once.
func (im *Importer) Commit() error {
	im.stmt.Close()
	if err := im.tx.Commit(); err != nil {
		return fmt.Errorf("import deliveries: %w", err)
	}
	return nil
}

// Rollback drops every added delivery; after Commit it does nothing.
func (im *Importer) Rollback() {
	im.stmt.Close()
	im.tx.Rollback()
}

// WriteJSONLFile writes ds to path as WriteJSONL does, through ReplaceFile.
func WriteJSONLFile(path string, ds []*Delivery) (created string, err error) {
	return ReplaceFile(path, func(w io.Writer) error { return WriteJSONL(w, ds) })
}

// ReplaceFile writes an export to path with write, replacing the file as a
// whole (written beside it, synced, renamed) so a failed export never
// leaves half a file behind. Missing parent directories are created (export
// -o testdata/webhooks/x.jsonl in a repository without that directory yet)
// and returned as created, for the caller to say so. See exportTarget for
// what may be replaced.
func ReplaceFile(path string, write func(io.Writer) error) (created string, err error) {
	dir := filepath.Dir(path)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("write %s: %w", path, err)
		}
		created = dir
	}
	perm, err := exportTarget(path)
	if err != nil {
		return created, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*") // created 0600
	if err != nil {
		return created, fmt.Errorf("write %s: %w", path, err)
	}
	werr := write(tmp)
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return created, fmt.Errorf("write %s: %w", path, err)
	}
	// Checked again just before the rename, which would replace whatever
	// appeared at path in between.
	if _, err := exportTarget(path); err != nil {
		os.Remove(tmp.Name())
		return created, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return created, fmt.Errorf("write %s: %w", path, err)
	}
	return created, nil
}

// exportTarget checks that path may be replaced by an export and returns the
// mode to give it: a new file in an existing directory gets 0600 (an export
// holds captured requests), an existing regular file keeps its mode. Anything
// else is refused rather than replaced: a symbolic link (its target would not
// be written, the link itself would be lost), a FIFO, a device, a directory.
func exportTarget(path string) (os.FileMode, error) {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return 0, fmt.Errorf("write %s: %s is not a directory", path, dir)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return 0o600, nil
	case err != nil:
		return 0, fmt.Errorf("write %s: %w", path, err)
	case fi.Mode()&os.ModeSymlink != 0:
		return 0, fmt.Errorf("write %s: is a symbolic link; give the path of the file itself", path)
	case !fi.Mode().IsRegular():
		return 0, fmt.Errorf("write %s: not a regular file (%s); export writes regular files only", path, fileKind(fi.Mode()))
	}
	return fi.Mode().Perm(), nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// sizeText is n bytes in MiB (KiB, bytes) when that is exact, else bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
