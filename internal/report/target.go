package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Format is a report format.
type Format string

// Report formats.
const (
	FormatText     Format = "text"
	FormatJSON     Format = "json"
	FormatJUnit    Format = "junit"
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
)

// Formats lists the formats as --report accepts them.
var Formats = []Format{FormatText, FormatJSON, FormatJUnit, FormatMarkdown, FormatHTML}

// ParseFormat accepts a format name: text, json, junit (or xml), markdown
// (or md), html.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "text", "txt":
		return FormatText, nil
	case "json":
		return FormatJSON, nil
	case "junit", "xml":
		return FormatJUnit, nil
	case "markdown", "md":
		return FormatMarkdown, nil
	case "html", "htm":
		return FormatHTML, nil
	}
	return "", fmt.Errorf("report format %q is not one of text, json, junit, markdown, html", s)
}

// Target is where one --report goes: a format and a path ("-" is stdout).
type Target struct {
	Format Format
	Path   string
}

// ParseTarget parses a --report value, FORMAT=PATH (e.g. "junit=report.xml",
// "markdown=$GITHUB_STEP_SUMMARY", "json=-" for stdout). A bare FORMAT
// writes to stdout.
func ParseTarget(s string) (Target, error) {
	name, path, ok := strings.Cut(s, "=")
	f, err := ParseFormat(name)
	if err != nil {
		return Target{}, fmt.Errorf("--report %s: %w (write FORMAT=PATH, e.g. junit=report.xml)", s, err)
	}
	if !ok {
		path = "-"
	}
	if path == "" {
		return Target{}, fmt.Errorf("--report %s: empty path (write FORMAT=PATH, or FORMAT=- for stdout)", s)
	}
	return Target{Format: f, Path: path}, nil
}

// String is the target as --report takes it.
func (t Target) String() string { return string(t.Format) + "=" + t.Path }

// Write renders c in format to w; colour applies to the text format only.
// The HTML report draws c.Timeline.
func Write(w io.Writer, format Format, c *Check, colorOn bool) error {
	switch format {
	case FormatText:
		return Text(w, c, colorOn)
	case FormatJSON:
		return JSON(w, c)
	case FormatJUnit:
		return JUnit(w, c)
	case FormatMarkdown:
		return Markdown(w, c)
	case FormatHTML:
		return HTML(w, c, c.Timeline)
	}
	return fmt.Errorf("unknown report format %q", format)
}

// Write renders c to the target: stdout when Path is "-", else the file
// (see WriteFile).
func (t Target) Write(stdout io.Writer, c *Check) error {
	if t.Path == "-" {
		return Write(stdout, t.Format, c, false)
	}
	return WriteFile(t.Format, t.Path, c)
}

// WriteFile renders c in format to path ("-" is the process's stdout).
// Missing parent directories are created. The file is replaced as a whole
// (written beside it, then renamed), so a reader never sees half a report —
// except $GITHUB_STEP_SUMMARY, which is appended to, as GitHub Actions expects
// every step's tools to share it.
func WriteFile(format Format, path string, c *Check) error {
	var buf bytes.Buffer
	if err := Write(&buf, format, c, false); err != nil {
		return err
	}
	return writeOut(format, path, buf.Bytes())
}

// writeOut writes a rendered report to path as WriteFile describes.
func writeOut(format Format, path string, data []byte) error {
	buf := bytes.NewBuffer(data)
	if path == "-" {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	if sum := os.Getenv("GITHUB_STEP_SUMMARY"); sum != "" && samePath(sum, path) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("write %s report: %w", format, err)
		}
		if _, err := f.Write(buf.Bytes()); err != nil {
			f.Close()
			return fmt.Errorf("write %s report %s: %w", format, path, err)
		}
		return f.Close()
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		// A device or a pipe (/dev/stderr, a fifo): write to it, never replace it.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("write %s report: %w", format, err)
		}
		_, err = f.Write(buf.Bytes())
		return errors.Join(err, f.Close())
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("write %s report: %w", format, err)
	}
	return nil
}

func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ia, err1 := os.Stat(a)
	ib, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ia, ib)
}

// writeAtomic replaces path with data: written to a temporary file in the
// same directory, synced, then renamed over path.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
