package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// rfc3339Nano9 is RFC 3339 with all nine fractional digits, so received_at
// strings sort and compare as text.
const rfc3339Nano9 = "2006-01-02T15:04:05.000000000Z07:00"

// DeliverySummary is a delivery as `list --json` prints it.
type DeliverySummary struct {
	ID         int64  `json:"id"`
	ReceivedAt string `json:"received_at"` // RFC 3339 with nanoseconds
	Source     string `json:"source"`
	RemoteAddr string `json:"remote_addr"`
	Provider   string `json:"provider"`
	EventID    string `json:"event_id"`
	// EventIDs lists every event id when the delivery carries several
	// (a WhatsApp POST batching messages); EventID is the first.
	EventIDs       []string          `json:"event_ids,omitempty"`
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
	Origin         string            `json:"origin,omitempty"`       // "har:devtools.har" for an imported delivery
	DerivedFrom    int64             `json:"derived_from,omitempty"` // the delivery this is an edited copy of
}

// DeliveryDetail is a delivery as `show --json` prints it: headers as
// ordered [name, value] pairs and the bytes in base64.
type DeliveryDetail struct {
	DeliverySummary
	Proto      string           `json:"proto"`
	Headers    [][2]string      `json:"headers"`
	RawBase64  string           `json:"raw_base64"`
	BodyBase64 string           `json:"body_base64"`
	Response   DeliveryResponse `json:"response"`
}

// DeliveryResponse is what the sender was answered for a delivery.
type DeliveryResponse struct {
	Status     int         `json:"status"`
	Headers    [][2]string `json:"headers"`
	BodyBase64 string      `json:"body_base64"`
	// BodySize is the length of the handler's whole answer; BodyTruncated
	// says only its first bytes were stored (BodyBase64).
	BodySize      int64  `json:"body_size"`
	BodyTruncated bool   `json:"body_truncated,omitempty"`
	LatencyNS     int64  `json:"latency_ns"`
	Error         string `json:"error,omitempty"`
}

// SummarizeDelivery returns d's list entry.
func SummarizeDelivery(d *store.Delivery) DeliverySummary { return summaryOf(d.Summary()) }

// summaryOf returns the list entry of a summary read without its bytes.
func summaryOf(d store.DeliverySummary) DeliverySummary {
	return DeliverySummary{
		ID: d.ID, ReceivedAt: d.ReceivedAt.UTC().Format(rfc3339Nano9), Source: d.Source,
		RemoteAddr: d.RemoteAddr, Provider: d.Provider, EventID: d.EventID, EventIDs: SeveralEventIDs(d.EventID, d.Identity), EventType: d.EventType,
		Identity: d.Identity, Method: d.Method, Target: d.Target, BodySize: d.BodySize, RawSize: d.RawSize,
		ResponseStatus: d.ResponseStatus, LatencyNS: d.Latency.Nanoseconds(),
		Verification: d.Verification, ForwardError: d.ForwardError, Origin: d.Origin,
		DerivedFrom: d.DerivedFrom,
	}
}

// DescribeDelivery returns d's full JSON view.
func DescribeDelivery(d *store.Delivery) DeliveryDetail {
	return DeliveryDetail{
		DeliverySummary: SummarizeDelivery(d),
		Proto:           d.Proto,
		Headers:         pairs(d.Headers),
		RawBase64:       base64.StdEncoding.EncodeToString(d.Raw),
		BodyBase64:      base64.StdEncoding.EncodeToString(d.Body),
		Response: DeliveryResponse{Status: d.ResponseStatus, Headers: pairs(d.ResponseHeaders),
			BodyBase64: base64.StdEncoding.EncodeToString(d.ResponseBody), LatencyNS: d.Latency.Nanoseconds(),
			BodySize: max(d.ResponseSize, int64(len(d.ResponseBody))), BodyTruncated: d.ResponseSize > int64(len(d.ResponseBody)),
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

// DeliveriesJSONStream writes `list --json`'s array of DeliverySummary one
// delivery at a time, so `list --limit 0 --json` of a large store runs in
// constant memory.
type DeliveriesJSONStream struct {
	w   io.Writer
	n   int
	buf bytes.Buffer
	enc *json.Encoder
}

// NewDeliveriesJSON starts an array on w; Add each delivery, then Close.
func NewDeliveriesJSON(w io.Writer) *DeliveriesJSONStream {
	s := &DeliveriesJSONStream{w: w}
	s.enc = NewJSONEncoder(&s.buf)
	s.enc.SetIndent("  ", "  ")
	s.enc.SetEscapeHTML(false)
	return s
}

// Add writes d's entry as the array's next element.
func (s *DeliveriesJSONStream) Add(d store.DeliverySummary) error {
	s.buf.Reset()
	if s.n == 0 {
		s.buf.WriteString("[\n  ")
	} else {
		s.buf.WriteString(",\n  ")
	}
	s.n++
	if err := s.enc.Encode(summaryOf(d)); err != nil {
		return err
	}
	s.buf.Truncate(s.buf.Len() - 1) // Encode's newline: the separator follows
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

// Close ends the array.
func (s *DeliveriesJSONStream) Close() error {
	end := "\n]\n"
	if s.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(s.w, end)
	return err
}

// DeliveryTable is list's table, newest first as given. It is printed in two
// passes over the same rows so that a whole store streams in constant
// memory: Measure every row (column widths; a SIGNATURE column appears once
// any row was verified, capture --secret; a SOURCE column once the rows came
// from more than one capture --source, a team store's several captures),
// then WriteHeader and Write each row. The alignment is text/tabwriter's (each column as wide as its widest
// cell in runes, plus two spaces; STATUS last, unpadded); colour is applied
// after padding, so escape codes never count as width.
type DeliveryTable struct {
	p       Painter
	widths  [tableSig + 1]int
	sig     bool
	rows    int
	source  string // the first row's
	sources bool   // rows of more than one source
	line    []byte
}

// The table's columns, in order; STATUS (tableStatus) is the last cell.
const (
	tableID = iota
	tableReceived
	tableSource
	tableProvider
	tableType
	tableEventID
	tableMethod
	tableTarget
	tableBody
	tableSig
	tableStatus
)

var tableHead = [tableStatus + 1]string{"ID", "RECEIVED", "SOURCE", "PROVIDER", "EVENT TYPE", "EVENT ID", "METHOD", "TARGET", "BODY", "SIGNATURE", "STATUS"}

// NewDeliveryTable starts a table painted with p.
func NewDeliveryTable(p Painter) *DeliveryTable {
	t := &DeliveryTable{p: p}
	for i := range t.widths {
		t.widths[i] = utf8.RuneCountInString(tableHead[i])
	}
	return t
}

// Measure accounts for d's cells; call it for every row before WriteHeader.
func (t *DeliveryTable) Measure(d store.DeliverySummary) {
	t.sig = t.sig || d.Verification != ""
	if t.rows == 0 {
		t.source = d.Source
	}
	t.sources = t.sources || d.Source != t.source
	t.rows++
	for i, c := range tableCells(d) {
		if i < len(t.widths) {
			t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
		}
	}
}

// WriteHeader writes the heading line.
func (t *DeliveryTable) WriteHeader(w io.Writer) error {
	t.line = t.pad(t.line[:0], tableHead[:])
	_, err := io.WriteString(w, t.p.Bold(string(t.line))+"\n")
	return err
}

// Write writes d's line.
func (t *DeliveryTable) Write(w io.Writer, d store.DeliverySummary) error {
	cells := tableCells(d)
	t.line = t.pad(t.line[:0], cells[:])
	if d.ResponseStatus != 0 {
		t.line = append(t.line[:len(t.line)-len(cells[tableStatus])], t.p.Status(d.ResponseStatus, cells[tableStatus])...)
	}
	t.line = append(t.line, '\n')
	_, err := w.Write(t.line)
	return err
}

// pad appends cells to b, each padded to its column's width plus two spaces
// but the last, leaving out SIGNATURE when no row has one and SOURCE when
// every row has the same.
func (t *DeliveryTable) pad(b []byte, cells []string) []byte {
	for i, c := range cells {
		if i == tableSig && !t.sig || i == tableSource && !t.sources {
			continue
		}
		b = append(b, c...)
		if i < len(t.widths) {
			for n := t.widths[i] + 2 - utf8.RuneCountInString(c); n > 0; n-- {
				b = append(b, ' ')
			}
		}
	}
	return b
}

func tableCells(d store.DeliverySummary) [tableStatus + 1]string {
	status := "-"
	if d.ResponseStatus != 0 {
		status = strconv.Itoa(d.ResponseStatus)
	}
	sig, _, _ := strings.Cut(d.Verification, ":")
	sig, _, _ = strings.Cut(sig, " ")
	return [...]string{strconv.FormatInt(d.ID, 10), d.ReceivedAt.Local().Format("2006-01-02 15:04:05"),
		dash(truncate(safe(d.Source), 24)), safe(d.Provider), dash(truncate(safe(d.EventType), 32)), dash(EventIDLabel(d.EventID, SeveralEventIDs(d.EventID, d.Identity), 36)), truncate(safe(d.Method), 16),
		truncate(safe(d.Target), 40), Size(d.BodySize), dash(safe(sig)), status}
}

// CaptureLine is capture's live line for a stored delivery: time, id,
// status, provider, event type, event id, latency (the handler's when
// forwarding, else the time to commit) and the signature check when one was
// asked for.
func CaptureLine(p Painter, d *store.Delivery, latency time.Duration) string {
	line := fmt.Sprintf("%s  #%-5d %s  %-8s %-28s %-36s %s",
		d.ReceivedAt.Local().Format("15:04:05.000"), d.ID,
		p.Status(d.ResponseStatus, fmt.Sprintf("%3d", d.ResponseStatus)),
		safe(d.Provider), dash(safe(d.EventType)), dash(EventIDLabel(d.EventID, SeveralEventIDs(d.EventID, d.Identity), 0)), Duration(latency))
	if d.Verification != "" {
		line += "  sig " + safe(d.Verification)
		if strings.HasPrefix(d.Verification, "valid") && (d.ResponseStatus == 400 || d.ResponseStatus == 401 || d.ResponseStatus == 403) {
			// Said where it is first seen: a handler verifying a re-encoded
			// body (express.json() before constructEvent) or another secret.
			line += " — the handler rejected a valid signature: it must verify the raw body, with this secret"
		}
	}
	if d.ForwardError != "" {
		line += "  " + safe(d.ForwardError)
	}
	return strings.TrimRight(line, " ")
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
