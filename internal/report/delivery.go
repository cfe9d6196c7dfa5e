package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// DeliveryJSON prints d as DeliveryDetail.
func DeliveryJSON(w io.Writer, d *store.Delivery) error {
	return writeJSON(w, DescribeDelivery(d), false)
}

// Delivery prints the human view of d: identity, the request as parsed
// (request line, headers in wire order, pretty-printed JSON body, trailers)
// and the response the sender got.
func Delivery(w io.Writer, p Painter, d *store.Delivery) error {
	var b bytes.Buffer
	writeDeliveryHead(&b, p, d)
	fmt.Fprintf(&b, "%s %s %s\n", p.Bold(safe(d.Method)), safe(d.Target), safe(d.Proto))
	writeHeaders(&b, p, d.Headers)
	b.WriteString("\n")
	writeBody(&b, p, d.ID, d.Headers.Get("Content-Type"), d.Body, "--body")
	if tr := trailers(d.Raw); len(tr) > 0 {
		fmt.Fprintln(&b, p.Faint("trailers (after the last chunk):"))
		writeHeaders(&b, p, tr)
	}
	b.WriteString("\n")
	writeDeliveryResponse(&b, p, d)
	_, err := w.Write(b.Bytes())
	return err
}

// writeDeliveryHead is the title, arrival, identity, signature check and size.
func writeDeliveryHead(b *bytes.Buffer, p Painter, d *store.Delivery) {
	title := fmt.Sprintf("delivery %d  %s", d.ID, safe(d.Provider))
	if d.EventType != "" {
		title += "  " + safe(d.EventType)
	}
	if d.EventID != "" {
		title += "  " + EventIDLabel(d.EventID, SeveralEventIDs(d.EventID, d.Identity), 0)
	}
	fmt.Fprintln(b, p.Bold(title))
	fmt.Fprintf(b, "received  %s from %s", d.ReceivedAt.Local().Format("2006-01-02 15:04:05.000000000 MST"), dash(safe(d.RemoteAddr)))
	if d.Source != "" {
		fmt.Fprintf(b, " (source %s)", safe(d.Source))
	}
	fmt.Fprintln(b)
	if d.Origin != "" {
		fmt.Fprintf(b, "imported  %s\n", safe(d.Origin))
	}
	if d.DerivedFrom != 0 {
		fmt.Fprintf(b, "edited    from delivery %d\n", d.DerivedFrom)
	}
	keys := make([]string, 0, len(d.Identity))
	for k := range d.Identity {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%-9s %s\n", safe(strings.ReplaceAll(k, "_", " ")), safe(d.Identity[k]))
	}
	if d.Verification != "" {
		fmt.Fprintf(b, "signature %s\n", p.Paint(VerificationTone(d.Verification), safe(d.Verification)))
	}
	fmt.Fprintf(b, "size      %d bytes on the wire, body %d bytes\n\n", len(d.Raw), len(d.Body))
}

// VerificationTone is the tone of a stored signature check: valid pass,
// invalid fail, unverified (no scheme, no secret) warn.
func VerificationTone(v string) Tone {
	switch {
	case strings.HasPrefix(v, "valid"):
		return TonePass
	case strings.HasPrefix(v, "invalid"):
		return ToneFail
	}
	return ToneWarn
}

// writeDeliveryResponse is the answer the sender got: the handler's (status,
// latency, headers, body), capture's own, or that none was recorded.
func writeDeliveryResponse(b *bytes.Buffer, p Painter, d *store.Delivery) {
	if d.ResponseStatus == 0 {
		fmt.Fprintln(b, p.Faint("no response recorded (the handler had not answered when capture stopped)"))
		return
	}
	line := fmt.Sprintf("response %d %s", d.ResponseStatus, http.StatusText(d.ResponseStatus))
	fmt.Fprint(b, p.Status(d.ResponseStatus, line))
	switch {
	case d.ForwardError != "":
		fmt.Fprintf(b, "  %s", safe(d.ForwardError))
	case d.Latency > 0:
		fmt.Fprintf(b, " from the handler in %s", Duration(d.Latency))
	default:
		fmt.Fprintf(b, " %s", p.Faint("answered by capture with "+string(capture.AckBody(d))))
	}
	fmt.Fprintln(b)
	if d.Latency > 0 || d.ForwardError != "" {
		writeHeaders(b, p, d.ResponseHeaders)
		b.WriteString("\n")
		writeBody(b, p, d.ID, d.ResponseHeaders.Get("Content-Type"), d.ResponseBody, "--json")
		if d.ResponseSize > int64(len(d.ResponseBody)) {
			fmt.Fprintf(b, "  %s\n", p.Faint(fmt.Sprintf("(the handler answered %d bytes; capture stored the first %d)", d.ResponseSize, len(d.ResponseBody))))
		}
	}
}

// trailers returns the trailer fields of a chunked request's raw bytes, in
// the order they were sent.
func trailers(raw []byte) message.Headers {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
	if err != nil || len(req.TransferEncoding) == 0 {
		return nil
	}
	if _, err := io.Copy(io.Discard, req.Body); err != nil || len(req.Trailer) == 0 {
		return nil
	}
	// The trailer section is what follows the last chunk: its lines end the raw bytes.
	var out message.Headers
	lines := strings.Split(strings.TrimRight(string(raw), "\r\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSuffix(lines[i], "\r")
		name, value, ok := strings.Cut(l, ":")
		if !ok || req.Trailer.Get(name) == "" && len(req.Trailer.Values(name)) == 0 {
			break
		}
		out = append(message.Headers{{Name: name, Value: strings.TrimSpace(value)}}, out...)
	}
	return out
}

func writeHeaders(b *bytes.Buffer, p Painter, hs message.Headers) {
	for _, h := range hs {
		fmt.Fprintf(b, "%s: %s\n", p.Paint(ToneInfo, safe(h.Name)), safe(h.Value))
	}
}

// writeBody prints JSON indented, text as is and binary as a note.
func writeBody(b *bytes.Buffer, p Painter, id int64, contentType string, body []byte, flag string) {
	if len(body) == 0 {
		fmt.Fprintln(b, p.Faint("(empty body)"))
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		var out bytes.Buffer
		if json.Indent(&out, trimmed, "", "  ") == nil {
			// JSON escapes C0 in strings, not DEL, C1 or bidi controls.
			b.WriteString(message.PrintableText(out.String()))
			b.WriteString("\n")
			return
		}
	}
	if utf8.Valid(body) && bytes.IndexByte(body, 0) < 0 {
		s := message.PrintableText(string(body))
		b.WriteString(s)
		if !strings.HasSuffix(s, "\n") {
			b.WriteString("\n")
		}
		return
	}
	desc := "binary data"
	if contentType != "" {
		desc = contentType
	}
	fmt.Fprintln(b, p.Faint(fmt.Sprintf("(%d bytes of %s; hookreplay show %d %s writes them)", len(body), desc, id, flag)))
}
