package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// rfc3339Nano9 is RFC 3339 with all nine fractional digits, so received_at
// strings sort and compare as text.
const rfc3339Nano9 = "2006-01-02T15:04:05.000000000Z07:00"

// DeliverySummary is a delivery as `list --json` prints it.
type DeliverySummary struct {
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
	Origin         string            `json:"origin,omitempty"` // "har:devtools.har" for an imported delivery
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
func SummarizeDelivery(d *store.Delivery) DeliverySummary {
	return DeliverySummary{
		ID: d.ID, ReceivedAt: d.ReceivedAt.UTC().Format(rfc3339Nano9), Source: d.Source,
		RemoteAddr: d.RemoteAddr, Provider: d.Provider, EventID: d.EventID, EventType: d.EventType,
		Identity: d.Identity, Method: d.Method, Target: d.Target, BodySize: len(d.Body), RawSize: len(d.Raw),
		ResponseStatus: d.ResponseStatus, LatencyNS: d.Latency.Nanoseconds(),
		Verification: d.Verification, ForwardError: d.ForwardError, Origin: d.Origin,
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

// DeliveriesJSON prints ds as a JSON array of DeliverySummary (an empty
// array when none).
func DeliveriesJSON(w io.Writer, ds []*store.Delivery) error {
	js := NewDeliveriesJSON(w)
	for _, d := range ds {
		if err := js.Add(d); err != nil {
			return err
		}
	}
	return js.Close()
}

// DeliveriesJSONStream writes the array DeliveriesJSON prints one delivery at
// a time, so `list --limit 0 --json` of a large store runs in constant memory.
type DeliveriesJSONStream struct {
	w   io.Writer
	n   int
	buf bytes.Buffer
	enc *json.Encoder
}

// NewDeliveriesJSON starts an array on w; Add each delivery, then Close.
func NewDeliveriesJSON(w io.Writer) *DeliveriesJSONStream {
	s := &DeliveriesJSONStream{w: w}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetIndent("  ", "  ")
	s.enc.SetEscapeHTML(false)
	return s
}

// Add writes d's summary as the array's next element.
func (s *DeliveriesJSONStream) Add(d *store.Delivery) error {
	s.buf.Reset()
	if s.n == 0 {
		s.buf.WriteString("[\n  ")
	} else {
		s.buf.WriteString(",\n  ")
	}
	s.n++
	if err := s.enc.Encode(SummarizeDelivery(d)); err != nil {
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

// Deliveries prints ds as an aligned table, newest first as given. A
// SIGNATURE column appears once any listed delivery was verified (capture
// --secret). Colour is applied after alignment (escape codes would otherwise
// count as width).
func Deliveries(w io.Writer, p Painter, ds []*store.Delivery) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
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
			return dash(safe(v)) + "\t"
		}
	}
	fmt.Fprintln(tw, "ID\tRECEIVED\tPROVIDER\tEVENT TYPE\tEVENT ID\tMETHOD\tTARGET\tBODY\t"+sigHead+"STATUS")
	for _, d := range ds {
		status := "-"
		if d.ResponseStatus != 0 {
			status = fmt.Sprint(d.ResponseStatus)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", d.ID,
			d.ReceivedAt.Local().Format("2006-01-02 15:04:05"), safe(d.Provider), dash(truncate(safe(d.EventType), 32)),
			dash(truncate(safe(d.EventID), 36)), safe(d.Method), truncate(safe(d.Target), 40), Size(len(d.Body)), sigCell(d), status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	var out strings.Builder
	out.WriteString(p.Bold(strings.TrimSuffix(lines[0], "\n")) + "\n")
	for i, d := range ds {
		line := strings.TrimSuffix(lines[i+1], "\n")
		if d.ResponseStatus != 0 {
			code := fmt.Sprint(d.ResponseStatus)
			line = strings.TrimSuffix(line, code) + p.Status(d.ResponseStatus, code)
		}
		out.WriteString(line + "\n")
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// CaptureLine is capture's live line for a stored delivery: time, id,
// status, provider, event type, event id, latency (the handler's when
// forwarding, else the time to commit) and the signature check when one was
// asked for.
func CaptureLine(p Painter, d *store.Delivery, latency time.Duration) string {
	line := fmt.Sprintf("%s  #%-5d %s  %-8s %-28s %-36s %s",
		d.ReceivedAt.Local().Format("15:04:05.000"), d.ID,
		p.Status(d.ResponseStatus, fmt.Sprintf("%3d", d.ResponseStatus)),
		safe(d.Provider), dash(safe(d.EventType)), dash(safe(d.EventID)), Duration(latency))
	if d.Verification != "" {
		line += "  sig " + safe(d.Verification)
	}
	if d.ForwardError != "" {
		line += "  " + safe(d.ForwardError)
	}
	return strings.TrimRight(line, " ")
}

// safe makes sender-controlled text safe for the terminal (message.Printable).
func safe(s string) string { return message.Printable(s) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
