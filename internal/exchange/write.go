package exchange

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// WriteOptions are the settings of an export.
type WriteOptions struct {
	// Version is hookreplay's version, named in HAR's log.creator.
	Version string
	// Output is the file the export is written to ("" for stdout). A curl
	// export writes bodies that cannot be a command-line argument beside
	// it, as OUTPUT.ID.body.
	Output string
	// Count is how many deliveries the export holds, named in a curl
	// export's opening comment.
	Count int
}

// Each yields the deliveries of an export, in order: it calls fn with each
// and returns fn's first error. An export walks them once, holding one at a
// time, so a whole store is exported in constant memory.
type Each func(fn func(*store.Delivery) error) error

// Slice returns an Each over ds.
func Slice(ds []*store.Delivery) Each {
	return func(fn func(*store.Delivery) error) error {
		for _, d := range ds {
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	}
}

// Write writes the deliveries each yields to w in format f.
func Write(w io.Writer, f Format, each Each, o WriteOptions) error {
	switch f {
	case JSONL:
		jw := store.NewJSONLWriter(w)
		if err := each(jw.Write); err != nil {
			return err
		}
		return jw.Flush()
	case HAR:
		return writeHAR(w, each, o.Version)
	case Curl:
		return writeCurl(w, each, o)
	case Raw:
		return writeRaw(w, each)
	}
	return fmt.Errorf("cannot export format %q", f)
}

// WriteFile writes the deliveries each yields to path in format f as
// store.ReplaceFile does (whole file or nothing; symbolic links and special
// files refused; a new file is 0600) and returns the directory it created,
// if any.
func WriteFile(path string, f Format, each Each, o WriteOptions) (created string, err error) {
	o.Output = path
	return store.ReplaceFile(path, func(w io.Writer) error { return Write(w, f, each, o) })
}

// maxArg is the largest body passed as a curl argument; Linux refuses a
// single argument over 128 KiB (MAX_ARG_STRLEN).
const maxArg = 64 << 10

// safeHost is a Host value that can go into the default URL unquoted.
var safeHost = regexp.MustCompile(`^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// writeCurl writes one curl command per delivery that sends its exact
// headers, in order and case, and its exact body. curl always puts Host
// first and writes its name "Host"; every other header is given with -H
// in its place, curl's own User-Agent, Accept, Content-Type and Expect are
// suppressed when the delivery has none, and the body goes as
// --data-raw (text) or --data-binary @FILE (binary, NUL or over 64 KiB).
func writeCurl(w io.Writer, each Each, o WriteOptions) error {
	bw := bufio.NewWriter(w)
	n := "1 delivery"
	if o.Count != 1 {
		n = fmt.Sprintf("%d deliveries", o.Count)
	}
	fmt.Fprintf(bw, `#!/usr/bin/env bash
# %s exported by hookreplay as curl commands: each sends one delivery with
# its exact headers (order and case) and body. They go to the host the
# delivery was sent to unless HOOKREPLAY_TO is set (scheme://host:port, no
# trailing slash), e.g.  HOOKREPLAY_TO=http://127.0.0.1:3000 bash FILE
# Import back with: hookreplay import FILE --format curl
`, n)
	i := 0
	err := each(func(d *store.Delivery) error {
		i++
		return writeCurlCmd(bw, d, i-1, o)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// writeCurlCmd writes d's comment line and its command.
func writeCurlCmd(w *bufio.Writer, d *store.Delivery, i int, o WriteOptions) error {
	about := curlDesc(d, i)
	if d.Provider != "" && d.Provider != "generic" {
		about += " · " + d.Provider
	}
	for _, s := range []string{d.EventType, d.EventID} {
		if s != "" {
			about += " " + s
		}
	}
	fmt.Fprintf(w, "\n# %s\n", message.Printable(about))
	return writeCurlLine(w, d, i, o)
}

// curlDesc names the i-th delivery of an export in its command's output.
func curlDesc(d *store.Delivery, i int) string {
	if d.ID == 0 {
		return fmt.Sprintf("delivery #%d", i+1)
	}
	return fmt.Sprintf("delivery %d", d.ID)
}

// WriteCurlCommand writes the one curl command an export writes for d (no
// script header, no comment), so that a command copied elsewhere (the
// TUI's y) sends exactly what an exported one does. A body that cannot be a
// command-line argument is written beside o.Output, which must then be set.
func WriteCurlCommand(w io.Writer, d *store.Delivery, o WriteOptions) error {
	bw := bufio.NewWriter(w)
	if err := writeCurlLine(bw, d, 0, o); err != nil {
		return err
	}
	return bw.Flush()
}

// writeCurlLine writes the command that sends d, the i-th delivery.
func writeCurlLine(w *bufio.Writer, d *store.Delivery, i int, o WriteOptions) error {
	host := d.Headers.Get("Host")
	base := "http://localhost"
	if safeHost.MatchString(host) {
		base = "http://" + host
	}
	target := d.Target
	if !strings.HasPrefix(target, "/") {
		if _, t, err := targetOf(target); err == nil {
			target = t // absolute-form: the path goes to HOOKREPLAY_TO too
		}
	}
	desc := curlDesc(d, i)
	fmt.Fprintf(w, "curl -sS --http1.1 -g --path-as-is -o /dev/null -w %s \\\n", shellQuote(desc+`: %{http_code}\n`))
	fmt.Fprintf(w, "  %s%s", `"${HOOKREPLAY_TO:-`+base+`}"`, shellQuote(target))
	method, hasBody := d.Method, len(d.Body) > 0
	switch {
	case method == "HEAD" && !hasBody:
		w.WriteString(" \\\n  --head")
	case method == "POST" && hasBody, method == "GET" && !hasBody:
	default:
		fmt.Fprintf(w, " \\\n  -X %s", shellQuote(method))
	}
	if d.Proto == "HTTP/1.0" {
		w.WriteString(" \\\n  --http1.0")
	}
	// Headers curl adds by itself, removed when the delivery has none.
	for _, name := range []string{"User-Agent", "Accept"} {
		if !d.Headers.Has(name) {
			fmt.Fprintf(w, " \\\n  -H %s", shellQuote(name+":"))
		}
	}
	if hasBody {
		for _, name := range []string{"Content-Type", "Expect"} {
			if !d.Headers.Has(name) {
				fmt.Fprintf(w, " \\\n  -H %s", shellQuote(name+":"))
			}
		}
	}
	for _, h := range d.Headers {
		if strings.IndexByte(h.Value, 0) >= 0 {
			return fmt.Errorf("delivery %d: header %s holds a NUL byte, which no command line can carry", d.ID, h.Name)
		}
		arg := h.Name + ": " + h.Value
		if h.Value == "" {
			arg = h.Name + ";"
		}
		fmt.Fprintf(w, " \\\n  -H %s", shellQuote(arg))
	}
	if hasBody {
		body := string(d.Body)
		if len(body) <= maxArg && utf8.ValidString(body) && !strings.ContainsRune(body, 0) {
			fmt.Fprintf(w, " \\\n  --data-raw %s", shellQuote(body))
		} else {
			ref, err := writeBodyFile(d, i, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, " \\\n  --data-binary %s", shellQuote("@"+ref))
		}
	}
	w.WriteString("\n")
	return nil
}

// writeBodyFile writes a body that cannot be a curl argument beside the
// export and returns the path to name with @: the output's directory as
// given joined with OUTPUT.ID.body, so the file works from the directory
// the export was run in (and import also looks beside the curl file).
func writeBodyFile(d *store.Delivery, i int, o WriteOptions) (string, error) {
	id := fmt.Sprint(d.ID)
	if d.ID == 0 {
		id = fmt.Sprint(i + 1)
	}
	if o.Output == "" {
		return "", fmt.Errorf("delivery %s has a binary or large body, which curl must read from a file: export to a file with -o so it can be written beside it", id)
	}
	path := o.Output + "." + id + ".body"
	if _, err := store.ReplaceFile(path, func(w io.Writer) error { _, err := w.Write(d.Body); return err }); err != nil {
		return "", fmt.Errorf("body of delivery %s: %w", id, err)
	}
	return path, nil
}
