package tui

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/store"
)

// What y copies: the request as curl, its body alone or its headers alone
// (as Hookdeck offers all three). y asks which, and the next key picks.
type copyKind int

const (
	copyCurl copyKind = iota
	copyBody
	copyHeaders
)

// copyPrompt is the status bar while y waits for its second key.
const copyPrompt = "copy delivery %d as: y curl · b body · h headers (any other key cancels)"

// copyAskMsg asks the root to wait for the key that says what y copies.
type copyAskMsg struct{ id int64 }

// copyWhat is the kind the key after y names (ok false: cancelled).
func copyWhat(k string) (copyKind, bool) {
	switch k {
	case "y", "c":
		return copyCurl, true
	case "b":
		return copyBody, true
	case "h":
		return copyHeaders, true
	}
	return 0, false
}

// copyDelivery loads delivery id and puts what kind names on the terminal's
// clipboard (OSC 52): the curl command 'hookreplay export --format curl'
// writes for it, its body's bytes, or its headers as "Name: value" lines in
// their order and case. Since not every terminal honours OSC 52 it is also
// written to a file the status bar names (a body curl must read from a file
// goes beside it).
func copyDelivery(e *env, id int64, kind copyKind) tea.Cmd {
	st, out := e.st, e.clipboard
	return func() tea.Msg {
		d, err := st.GetDelivery(context.Background(), id)
		if err != nil {
			return statusMsg{err: err}
		}
		// The file goes in a directory of its own that only we can enter
		// (os.MkdirTemp: a fresh name, mode 0700), created with O_EXCL: a
		// link or a file another user planted under a predictable name in
		// the shared $TMPDIR would otherwise receive the delivery and its
		// credentials.
		var werr error
		path := ""
		dir, err := os.MkdirTemp("", "hookreplay-curl-")
		if err == nil {
			path = filepath.Join(dir, fmt.Sprintf("delivery-%d%s", id, [...]string{".sh", ".body", ".headers"}[kind]))
		} else {
			werr = err
		}
		var c bytes.Buffer
		what := " as curl"
		switch kind {
		case copyCurl:
			if err := exchange.WriteCurlCommand(&c, d, exchange.WriteOptions{Output: path, Count: 1}); err != nil {
				return statusMsg{err: err}
			}
		case copyBody:
			c.Write(d.Body)
			what = fmt.Sprintf("'s body (%s)", plural(len(d.Body), "byte", "bytes"))
		case copyHeaders:
			for _, h := range d.Headers {
				c.WriteString(h.Name + ": " + h.Value + "\n")
			}
			what = fmt.Sprintf("'s headers (%s)", plural(len(d.Headers), "header", "headers"))
		}
		if werr == nil {
			werr = writeNew(path, c.Bytes())
		}
		if out != nil {
			clip := c.Bytes()
			if kind == copyCurl {
				clip = bytes.TrimSuffix(clip, []byte("\n"))
			}
			fmt.Fprintf(out, "\x1b]52;c;%s\x07", base64.StdEncoding.EncodeToString(clip))
		}
		if werr != nil {
			return statusMsg{text: fmt.Sprintf("copied delivery %d%s via OSC 52 (if your terminal ignores OSC 52, nothing was copied: %v)", id, what, werr)}
		}
		return statusMsg{text: fmt.Sprintf("copied delivery %d%s via OSC 52; if your terminal ignores OSC 52 it is in %s", id, what, path)}
	}
}

// exportJSONL writes the deliveries ids to a JSONL file in the working
// directory (the format `hookreplay import` and `check --from` read).
func exportJSONL(e *env, ids []int64) tea.Cmd {
	st, dir, now := e.st, e.exportDir, e.now
	return func() tea.Msg {
		var ds []*store.Delivery
		for _, id := range ids {
			d, err := st.GetDelivery(context.Background(), id)
			if err != nil {
				return statusMsg{err: err}
			}
			ds = append(ds, d)
		}
		path := filepath.Join(dir, "hookreplay-"+now().Format("20060102-150405")+".jsonl")
		if _, err := store.WriteJSONLFile(path, ds); err != nil {
			return statusMsg{err: err}
		}
		return statusMsg{text: fmt.Sprintf("exported %s to %s", plural(len(ds), "delivery", "deliveries"), path)}
	}
}

// writeNew writes b to path, which must not exist yet (O_EXCL), as 0600.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
