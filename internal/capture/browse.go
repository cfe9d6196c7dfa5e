package capture

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/fatih/color"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// rfc3339Nano9 is RFC 3339 with all nine fractional digits, so received_at
// strings sort and compare as text.
const rfc3339Nano9 = "2006-01-02T15:04:05.000000000Z07:00"

// Summary is a delivery as `list --json` prints it.
type Summary struct {
	ID             int64             `json:"id"`
	ReceivedAt     string            `json:"received_at"` // RFC 3339 with nanoseconds
	Source         string            `json:"source"`
	RemoteAddr     string            `json:"remote_addr"`
	Provider       string            `json:"provider"`
	EventID        string            `json:"event_id"`
	EventType      string            `json:"event_type"`
	Identity       map[string]string `json:"identity,omitempty"`
	Method         string            `json:"method"`
	Target         string            `json:"target"`
	BodySize       int               `json:"body_size"`
	RawSize        int               `json:"raw_size"`
	ResponseStatus int               `json:"response_status"`
	LatencyNS      int64             `json:"latency_ns"`
	Verification   string            `json:"verification,omitempty"`
	ForwardError   string            `json:"forward_error,omitempty"`
}

// Detail is a delivery as `show --json` prints it: headers as ordered
// [name, value] pairs and the bytes in base64.
type Detail struct {
	Summary
	Proto      string      `json:"proto"`
	Headers    [][2]string `json:"headers"`
	RawBase64  string      `json:"raw_base64"`
	BodyBase64 string      `json:"body_base64"`
	Response   Response    `json:"response"`
}

// Response is what the sender was answered for a delivery.
type Response struct {
	Status     int         `json:"status"`
	Headers    [][2]string `json:"headers"`
	BodyBase64 string      `json:"body_base64"`
	LatencyNS  int64       `json:"latency_ns"`
	Error      string      `json:"error,omitempty"`
}

// Summarize returns d's list entry.
func Summarize(d *store.Delivery) Summary {
	return Summary{
		ID: d.ID, ReceivedAt: d.ReceivedAt.UTC().Format(rfc3339Nano9), Source: d.Source,
		RemoteAddr: d.RemoteAddr, Provider: d.Provider, EventID: d.EventID, EventType: d.EventType,
		Identity: d.Identity, Method: d.Method, Target: d.Target, BodySize: len(d.Body), RawSize: len(d.Raw),
		ResponseStatus: d.ResponseStatus, LatencyNS: d.Latency.Nanoseconds(),
		Verification: d.Verification, ForwardError: d.ForwardError,
	}
}

// Describe returns d's full JSON view.
func Describe(d *store.Delivery) Detail {
	return Detail{
		Summary:    Summarize(d),
		Proto:      d.Proto,
		Headers:    pairs(d.Headers),
		RawBase64:  base64.StdEncoding.EncodeToString(d.Raw),
		BodyBase64: base64.StdEncoding.EncodeToString(d.Body),
		Response: Response{Status: d.ResponseStatus, Headers: pairs(d.ResponseHeaders),
			BodyBase64: base64.StdEncoding.EncodeToString(d.ResponseBody), LatencyNS: d.Latency.Nanoseconds(),
			Error: d.ForwardError},
	}
}

func pairs(hs message.Headers) [][2]string {
	out := make([][2]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, [2]string{h.Name, h.Value})
	}
	return out
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteListJSON prints ds as a JSON array of Summary (an empty array when none).
func WriteListJSON(w io.Writer, ds []*store.Delivery) error {
	out := make([]Summary, 0, len(ds))
	for _, d := range ds {
		out = append(out, Summarize(d))
	}
	return writeJSON(w, out)
}

// WriteList prints ds as an aligned table, newest first as given. Colour is
// applied after alignment (escape codes would otherwise count as width).
func WriteList(ios *iostreams.IO, ds []*store.Delivery) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	// The signature column appears once any listed delivery was verified
	// (capture --secret): valid, invalid or unverified, details in show.
	sig := false
	for _, d := range ds {
		sig = sig || d.Verification != ""
	}
	sigHead, sigCell := "", func(*store.Delivery) string { return "" }
	if sig {
		sigHead = "SIGNATURE\t"
		sigCell = func(d *store.Delivery) string {
			v, _, _ := strings.Cut(d.Verification, ":")
			v, _, _ = strings.Cut(v, " ")
			return dashed(pr(v)) + "\t"
		}
	}
	fmt.Fprintln(tw, "ID\tRECEIVED\tPROVIDER\tEVENT TYPE\tEVENT ID\tMETHOD\tTARGET\tBODY\t"+sigHead+"STATUS")
	for _, d := range ds {
		status := "-"
		if d.ResponseStatus != 0 {
			status = fmt.Sprint(d.ResponseStatus)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", d.ID,
			d.ReceivedAt.Local().Format("2006-01-02 15:04:05"), pr(d.Provider), dashed(clip(pr(d.EventType), 32)),
			dashed(clip(pr(d.EventID), 36)), pr(d.Method), clip(pr(d.Target), 40), HumanSize(len(d.Body)), sigCell(d), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	var out strings.Builder
	out.WriteString(ios.Color(color.Bold)(strings.TrimSuffix(lines[0], "\n")) + "\n")
	for i, d := range ds {
		line := strings.TrimSuffix(lines[i+1], "\n")
		if d.ResponseStatus != 0 {
			code := fmt.Sprint(d.ResponseStatus)
			line = strings.TrimSuffix(line, code) + ios.StatusColor(d.ResponseStatus, code)
		}
		out.WriteString(line + "\n")
	}
	_, err := io.WriteString(ios.Out, out.String())
	return err
}

// WriteDetailJSON prints d as Detail.
func WriteDetailJSON(w io.Writer, d *store.Delivery) error {
	return writeJSON(w, Describe(d))
}

// WriteDetail prints the human view of d: identity, the request as parsed
// (request line, headers in wire order, pretty-printed JSON body) and the
// response the sender got.
func WriteDetail(ios *iostreams.IO, d *store.Delivery) error {
	var b bytes.Buffer
	bold := ios.Color(color.Bold)
	faint := ios.Color(color.Faint)
	title := fmt.Sprintf("delivery %d  %s", d.ID, pr(d.Provider))
	if d.EventType != "" {
		title += "  " + pr(d.EventType)
	}
	if d.EventID != "" {
		title += "  " + pr(d.EventID)
	}
	fmt.Fprintln(&b, bold(title))
	fmt.Fprintf(&b, "received  %s from %s", d.ReceivedAt.Local().Format("2006-01-02 15:04:05.000000000 MST"), dashed(d.RemoteAddr))
	if d.Source != "" {
		fmt.Fprintf(&b, " (source %s)", pr(d.Source))
	}
	fmt.Fprintln(&b)
	keys := make([]string, 0, len(d.Identity))
	for k := range d.Identity {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%-9s %s\n", pr(strings.ReplaceAll(k, "_", " ")), pr(d.Identity[k]))
	}
	if d.Verification != "" {
		paint := ios.Color(color.FgYellow)
		switch {
		case strings.HasPrefix(d.Verification, "valid"):
			paint = ios.Color(color.FgGreen)
		case strings.HasPrefix(d.Verification, "invalid"):
			paint = ios.Color(color.FgRed)
		}
		fmt.Fprintf(&b, "signature %s\n", paint(pr(d.Verification)))
	}
	fmt.Fprintf(&b, "size      %d bytes on the wire, body %d bytes\n\n", len(d.Raw), len(d.Body))

	fmt.Fprintf(&b, "%s %s %s\n", bold(pr(d.Method)), pr(d.Target), pr(d.Proto))
	writeHeaders(&b, ios, d.Headers)
	b.WriteString("\n")
	writeBody(&b, faint, d.ID, d.Headers.Get("Content-Type"), d.Body, "--body")
	if tr := trailers(d.Raw); len(tr) > 0 {
		fmt.Fprintln(&b, faint("trailers (after the last chunk):"))
		writeHeaders(&b, ios, tr)
	}

	b.WriteString("\n")
	switch {
	case d.ResponseStatus == 0:
		fmt.Fprintln(&b, faint("no response recorded (the handler had not answered when capture stopped)"))
	default:
		line := fmt.Sprintf("response %d %s", d.ResponseStatus, http.StatusText(d.ResponseStatus))
		fmt.Fprint(&b, ios.StatusColor(d.ResponseStatus, line))
		switch {
		case d.ForwardError != "":
			fmt.Fprintf(&b, "  %s", pr(d.ForwardError))
		case d.Latency > 0:
			fmt.Fprintf(&b, " from the handler in %s", FormatLatency(d.Latency))
		default:
			fmt.Fprintf(&b, " %s", faint("answered by capture with "+string(ackBody(d))))
		}
		fmt.Fprintln(&b)
		if d.Latency > 0 || d.ForwardError != "" {
			writeHeaders(&b, ios, d.ResponseHeaders)
			b.WriteString("\n")
			writeBody(&b, faint, d.ID, d.ResponseHeaders.Get("Content-Type"), d.ResponseBody, "--json")
		}
	}
	_, err := ios.Out.Write(b.Bytes())
	return err
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

func writeHeaders(b *bytes.Buffer, ios *iostreams.IO, hs message.Headers) {
	name := ios.Color(color.FgCyan)
	for _, h := range hs {
		fmt.Fprintf(b, "%s: %s\n", name(pr(h.Name)), pr(h.Value))
	}
}

// writeBody prints JSON indented, text as is and binary as a note.
func writeBody(b *bytes.Buffer, faint func(string) string, id int64, contentType string, body []byte, flag string) {
	if len(body) == 0 {
		fmt.Fprintln(b, faint("(empty body)"))
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
		var out bytes.Buffer
		if json.Indent(&out, trimmed, "", "  ") == nil {
			b.Write(out.Bytes())
			b.WriteString("\n")
			return
		}
	}
	if printable(body) {
		b.Write(body)
		if body[len(body)-1] != '\n' {
			b.WriteString("\n")
		}
		return
	}
	desc := "binary data"
	if contentType != "" {
		desc = contentType
	}
	fmt.Fprintln(b, faint(fmt.Sprintf("(%d bytes of %s; hookreplay show %d %s writes them)", len(body), desc, id, flag)))
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r >= 0x7f && r < 0xa0 {
			return false
		}
	}
	return true
}

// pr makes sender-controlled text safe for the terminal (message.Printable).
func pr(s string) string { return message.Printable(s) }

func dashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
