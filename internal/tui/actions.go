package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/hookreplay/hookreplay/internal/store"
)

// copyCurl loads delivery id, puts it on the terminal's clipboard as a curl
// command (OSC 52) and, since not every terminal honours OSC 52, also writes
// it to a file the status bar names.
func copyCurl(e *env, id int64) tea.Cmd {
	st, out := e.st, e.clipboard
	return func() tea.Msg {
		d, err := st.GetDelivery(context.Background(), id)
		if err != nil {
			return statusMsg{err: err}
		}
		c := curlCommand(d)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("hookreplay-curl-%d.sh", id))
		werr := os.WriteFile(path, []byte(c+"\n"), 0o600)
		if out != nil {
			fmt.Fprintf(out, "\x1b]52;c;%s\x07", base64.StdEncoding.EncodeToString([]byte(c)))
		}
		if werr != nil {
			return statusMsg{text: fmt.Sprintf("copied delivery %d as curl via OSC 52 (if your terminal ignores OSC 52, nothing was copied: %v)", id, werr)}
		}
		return statusMsg{text: fmt.Sprintf("copied delivery %d as curl via OSC 52; if your terminal ignores OSC 52 it is in %s", id, path)}
	}
}

// curlCommand is a shell command sending d again: method, URL from its Host
// header and target, headers in stored order (minus those curl sets from the
// body) and the exact body.
func curlCommand(d *store.Delivery) string {
	var b strings.Builder
	host := d.Headers.Get("Host")
	url := d.Target
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		url = "http://" + host + d.Target
	}
	b.WriteString("curl -sS -X " + shellQuote(d.Method) + " " + shellQuote(url))
	for _, h := range d.Headers {
		switch strings.ToLower(h.Name) {
		case "host", "content-length", "transfer-encoding", "connection":
			continue
		}
		b.WriteString(" \\\n  -H " + shellQuote(h.Name+": "+h.Value))
	}
	if len(d.Body) > 0 {
		b.WriteString(" \\\n  --data-binary " + shellQuote(string(d.Body)))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell: '…' when s is printable UTF-8, else
// bash's $'…' with \xNN escapes.
func shellQuote(s string) string {
	plain := utf8.ValidString(s)
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			plain = false
		}
	}
	if plain {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteString(`\` + string(c))
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, `\x%02x`, c)
		}
	}
	b.WriteString("'")
	return b.String()
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
