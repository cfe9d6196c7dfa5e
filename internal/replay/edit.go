package replay

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/hookreplay/hookreplay/internal/message"
)

// Edits change a request before it is replayed. They are applied in the order
// drop headers, set headers, body file, JSON sets.
type Edits struct {
	SetHeaders  []message.Header // replace in place (first occurrence) or append
	DropHeaders []string         // remove every occurrence
	Body        []byte           // replaces the body when BodyFile is set
	BodyFile    string           // where Body came from (for the record)
	JSONSet     []string         // "dotted.path=value"; value is JSON when valid JSON, else a string
}

// Empty reports whether e changes nothing.
func (e Edits) Empty() bool {
	return len(e.SetHeaders) == 0 && len(e.DropHeaders) == 0 && e.BodyFile == "" && len(e.JSONSet) == 0
}

// Apply returns an edited copy of req and a one-line description of the edit.
func (e Edits) Apply(req *message.Request) (*message.Request, string, error) {
	out := req.Clone()
	var desc []string
	for _, name := range e.DropHeaders {
		if !out.Headers.Has(name) {
			return nil, "", fmt.Errorf("--drop-header %s: the request has no such header", name)
		}
		out.Headers = out.Headers.Del(name)
		desc = append(desc, "drop-header "+name)
	}
	for _, h := range e.SetHeaders {
		out.Headers = out.Headers.Set(h.Name, h.Value)
		desc = append(desc, "set-header "+h.Name)
	}
	if e.BodyFile != "" {
		out.Body = append([]byte(nil), e.Body...)
		desc = append(desc, fmt.Sprintf("body-file %s (%d bytes)", e.BodyFile, len(e.Body)))
	}
	for _, s := range e.JSONSet {
		path, value, ok := strings.Cut(s, "=")
		if !ok || path == "" {
			return nil, "", fmt.Errorf("--json-set %q: want path=value", s)
		}
		body, err := message.JSONSet(out.Body, path, value)
		if err != nil {
			return nil, "", fmt.Errorf("--json-set %s: %w", path, err)
		}
		out.Body = body
		desc = append(desc, "json-set "+s)
	}
	return out, strings.Join(desc, "; "), nil
}

// EditorText renders req as the text opened in $EDITOR: request line,
// headers (framing headers left out; they are recomputed), blank line, body.
func EditorText(req *message.Request) []byte {
	var b bytes.Buffer
	proto := req.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %s %s\n", req.Method, req.Target, proto)
	for _, h := range req.Headers {
		if strings.EqualFold(h.Name, "Content-Length") || strings.EqualFold(h.Name, "Transfer-Encoding") {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", h.Name, h.Value)
	}
	b.WriteString("\n")
	b.Write(req.Body)
	return b.Bytes()
}

// ParseEditorText parses text written by EditorText and edited by a person:
// lines may end in LF or CRLF, the body is everything after the first blank
// line. An editor's added final newline is dropped when orig's body had none.
func ParseEditorText(text []byte, orig *message.Request) (*message.Request, error) {
	head, body, ok := bytes.Cut(text, []byte("\n\n"))
	if !ok {
		head, body, ok = bytes.Cut(text, []byte("\r\n\r\n"))
	}
	if !ok {
		head, body = bytes.TrimRight(text, "\r\n"), nil
	}
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	parts := strings.Fields(lines[0])
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/") {
		return nil, fmt.Errorf("edited request: malformed request line %q", lines[0])
	}
	out := &message.Request{Method: parts[0], Target: parts[1], Proto: parts[2]}
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		h, err := message.ParseHeaderLine(l)
		if err != nil {
			return nil, fmt.Errorf("edited request: %w", err)
		}
		out.Headers = append(out.Headers, h)
	}
	if orig != nil && !bytes.HasSuffix(orig.Body, []byte("\n")) {
		body = bytes.TrimSuffix(body, []byte("\n"))
		body = bytes.TrimSuffix(body, []byte("\r"))
	}
	out.Body = append([]byte(nil), body...)
	return out, nil
}

// EditInEditor opens req in the user's editor ($VISUAL, $EDITOR, else vi)
// on the given terminal streams and returns the edited request and a
// description of what changed ("" when nothing did).
func EditInEditor(req *message.Request, in io.Reader, out, errOut io.Writer) (*message.Request, string, error) {
	ed, err := NewEditorSession(EditorText(req))
	if err != nil {
		return nil, "", err
	}
	defer ed.Close()
	c := ed.Cmd()
	c.Stdin, c.Stdout, c.Stderr = in, out, errOut
	if err := ed.Done(c.Run()); err != nil {
		return nil, "", err
	}
	text, err := ed.Text()
	if err != nil {
		return nil, "", err
	}
	edited, err := ParseEditorText(text, req)
	if err != nil {
		return nil, "", err
	}
	return edited, DescribeChange(req, edited), nil
}

// EditorSession is text in a temporary file, to be edited by the user's
// editor ($VISUAL, $EDITOR, else vi): replay --edit runs it on the terminal,
// the TUI hands Cmd to Bubble Tea (which gives the editor the terminal).
type EditorSession struct {
	path   string
	editor string
}

// NewEditorSession writes text to a new temporary file (0600, a fresh name).
func NewEditorSession(text []byte) (*EditorSession, error) {
	f, err := os.CreateTemp("", "hookreplay-edit-*.http")
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("edit: %w", err)
	}
	f.Close()
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		editor = "vi"
	}
	return &EditorSession{path: f.Name(), editor: editor}, nil
}

// Cmd is the editor's command on the file (through sh, so EDITOR may carry
// arguments: "code --wait").
func (e *EditorSession) Cmd() *exec.Cmd {
	return exec.Command("sh", "-c", e.editor+` "$1"`, "editor", e.path)
}

// Done words the editor's exit error (nil when it succeeded).
func (e *EditorSession) Done(runErr error) error {
	if runErr != nil {
		return fmt.Errorf("edit: editor %q: %w", e.editor, runErr)
	}
	return nil
}

// Text is the file as the editor left it.
func (e *EditorSession) Text() ([]byte, error) {
	b, err := os.ReadFile(e.path)
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	return b, nil
}

// Close removes the file.
func (e *EditorSession) Close() { os.Remove(e.path) }

// DescribeChange summarises how b differs from a, for Attempt.Edit ("" when
// nothing did).
func DescribeChange(a, b *message.Request) string {
	var d []string
	if a.Method != b.Method || a.Target != b.Target {
		d = append(d, fmt.Sprintf("request line %s %s", b.Method, b.Target))
	}
	seen := map[string]bool{}
	for _, h := range append(append(message.Headers(nil), a.Headers...), b.Headers...) {
		k := strings.ToLower(h.Name)
		if seen[k] || k == "content-length" || k == "transfer-encoding" {
			continue
		}
		seen[k] = true
		av, bv := strings.Join(a.Headers.Values(h.Name), "\x00"), strings.Join(b.Headers.Values(h.Name), "\x00")
		switch {
		case !a.Headers.Has(h.Name):
			d = append(d, "added "+h.Name)
		case !b.Headers.Has(h.Name):
			d = append(d, "removed "+h.Name)
		case av != bv:
			d = append(d, "changed "+h.Name)
		}
	}
	if !bytes.Equal(a.Body, b.Body) {
		d = append(d, fmt.Sprintf("body %d→%d bytes", len(a.Body), len(b.Body)))
	}
	if len(d) == 0 {
		return ""
	}
	return "editor: " + strings.Join(d, ", ")
}
