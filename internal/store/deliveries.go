package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Delivery is one captured webhook request and, when capture forwarded it, the
// handler's response.
type Delivery struct {
	ID         int64
	ReceivedAt time.Time
	Source     string
	RemoteAddr string
	Provider   string
	EventID    string
	EventType  string
	// Identity holds secondary identifiers (e.g. "shopify_webhook_id").
	Identity map[string]string
	Method   string
	Target   string
	Proto    string
	Headers  message.Headers
	Raw      []byte // exact bytes read from the wire for this request
	Body     []byte // decoded body (chunked framing removed)
	// Verification is "" when no secret was given at capture, else the
	// one-line result ("valid (stripe, v1, ...)" or "invalid: reason").
	Verification    string
	ResponseStatus  int
	ResponseHeaders message.Headers
	ResponseBody    []byte
	// ResponseSize is the length of the handler's whole answer when
	// ResponseBody holds only its first bytes (capture stores a bounded
	// prefix); 0 when ResponseBody is the whole answer.
	ResponseSize int64
	Latency      time.Duration
	ForwardError string
	// Origin says where an imported delivery came from: the format and the
	// file it was read from ("har:devtools.har", "curl:stdin"); "" for a
	// delivery captured live.
	Origin string
	// DerivedFrom is the delivery this one is an edited copy of (the TUI's
	// edit-and-replay); 0 for a delivery captured or imported as it was.
	DerivedFrom int64
}

// Request returns the delivery as a message.Request (a copy the caller may edit).
func (d *Delivery) Request() *message.Request {
	r := &message.Request{Method: d.Method, Target: d.Target, Proto: d.Proto, Headers: d.Headers, Body: d.Body}
	return r.Clone()
}

// bodyExpr is a delivery's decoded body: stored once, in raw_request, when
// it is the raw request's tail (body_at, migration 5).
const bodyExpr = `(CASE WHEN body_at >= 0 THEN substr(raw_request, body_at + 1) ELSE body END)`

// bodyLenExpr is the decoded body's length, read without the body.
const bodyLenExpr = `(CASE WHEN body_at >= 0 THEN length(raw_request) - body_at ELSE length(body) END)`

const deliveryCols = `id, received_at, source, remote_addr, provider, event_id, event_type, identity,
	method, target, proto, headers, raw_request, ` + bodyExpr + `, verification, response_status,
	response_headers, response_body, latency_ns, forward_error, response_size, origin, derived_from`

// insertDeliverySQL inserts one delivery; deliveryArgs gives its values.
const insertDeliverySQL = `INSERT INTO deliveries (received_at, source, remote_addr, provider,
	event_id, event_type, identity, method, target, proto, headers, raw_request, body, verification,
	response_status, response_headers, response_body, latency_ns, forward_error, origin, response_size, body_at, derived_from)
	VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`

// deliveryArgs returns d's column values for insertDeliverySQL, received at
// recv, with the store's defaults where d leaves a field empty.
func deliveryArgs(d *Delivery, recv time.Time) []any {
	provider, proto := d.Provider, d.Proto
	if provider == "" {
		provider = verify.Generic
	}
	if proto == "" {
		proto = "HTTP/1.1"
	}
	ident, _ := json.Marshal(nonNilMap(d.Identity))
	hdrs, _ := json.Marshal(nonNilHeaders(d.Headers))
	rhdrs, _ := json.Marshal(nonNilHeaders(d.ResponseHeaders))
	body, bodyAt := nonNilBytes(d.Body), -1
	if len(body) > 0 && bytes.HasSuffix(d.Raw, body) {
		// The body is the raw request's tail: stored once (bodyExpr).
		body, bodyAt = []byte{}, len(d.Raw)-len(body)
	}
	return []any{recv.UnixNano(), d.Source, d.RemoteAddr, provider, d.EventID, d.EventType, string(ident),
		d.Method, d.Target, proto, string(hdrs), nonNilBytes(d.Raw), body, d.Verification,
		d.ResponseStatus, string(rhdrs), d.ResponseBody, d.Latency.Nanoseconds(), d.ForwardError, d.Origin, d.ResponseSize, bodyAt, d.DerivedFrom}
}

// InsertDelivery commits d and sets d.ID. It returns only after the row is durable.
func (s *Store) InsertDelivery(ctx context.Context, d *Delivery) error {
	if d.ReceivedAt.IsZero() {
		d.ReceivedAt = time.Now()
	}
	if d.Provider == "" {
		d.Provider = verify.Generic
	}
	if d.Proto == "" {
		d.Proto = "HTTP/1.1"
	}
	if err := s.db.QueryRowContext(ctx, insertDeliverySQL, deliveryArgs(d, d.ReceivedAt)...).Scan(&d.ID); err != nil {
		return fmt.Errorf("insert delivery: %w", err)
	}
	return nil
}

// SetResponse records what the handler (or capture itself) answered for
// delivery id. size is the length of the whole answer when body is only its
// first bytes, else 0. (capture records answers through its Writer.)
func (s *Store) SetResponse(ctx context.Context, id int64, status int, headers message.Headers, body []byte, size int64, latency time.Duration, forwardErr string) error {
	r := Response{ID: id, Status: status, Headers: headers, Body: body, Size: size, Latency: latency, ForwardError: forwardErr}
	if _, err := s.db.ExecContext(ctx, setResponseSQL, responseArgs(r)...); err != nil {
		return fmt.Errorf("record response of delivery %d: %w", id, err)
	}
	return nil
}

// Response is what a delivery was answered, for Writer.Commit.
type Response struct {
	ID           int64
	Status       int
	Headers      message.Headers
	Body         []byte
	Size         int64 // the whole answer's length when Body is only its first bytes, else 0
	Latency      time.Duration
	ForwardError string
}

// setResponseSQL records a delivery's answer; responseArgs gives its values.
const setResponseSQL = `UPDATE deliveries SET response_status=?, response_headers=?, response_body=?,
	response_size=?, latency_ns=?, forward_error=? WHERE id=?`

func responseArgs(r Response) []any {
	rhdrs, _ := json.Marshal(nonNilHeaders(r.Headers))
	return []any{r.Status, string(rhdrs), r.Body, r.Size, r.Latency.Nanoseconds(), r.ForwardError, r.ID}
}

// SetVerification stores the verification result line of delivery id.
func (s *Store) SetVerification(ctx context.Context, id int64, result string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE deliveries SET verification=? WHERE id=?`, result, id)
	if err != nil {
		return fmt.Errorf("record verification of delivery %d: %w", id, err)
	}
	return nil
}

// GetDelivery returns delivery id, or an error wrapping ErrNotFound.
func (s *Store) GetDelivery(ctx context.Context, id int64) (*Delivery, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries WHERE id=?`, id)
	d, err := scanDelivery(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no delivery %d: %w", id, ErrNotFound)
	}
	return d, err
}

// LastDelivery returns the newest delivery, or an error wrapping ErrNotFound.
func (s *Store) LastDelivery(ctx context.Context) (*Delivery, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+deliveryCols+` FROM deliveries ORDER BY id DESC LIMIT 1`)
	d, err := scanDelivery(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no deliveries captured yet: %w", ErrNotFound)
	}
	return d, err
}

// Filter selects deliveries for List. Zero values mean "any".
type Filter struct {
	Provider string
	// Source keeps deliveries captured with this --source name (exactly).
	Source   string
	TypeGlob string // a glob (SQLite's GLOB: * ? [...]) on event_type, e.g. "invoice.*"
	EventID  string
	// EventIDs keeps deliveries of any of these event ids (with EventID, of
	// any of them all).
	EventIDs []string
	Since    time.Time
	// Text, when set, keeps deliveries whose body contains it (ASCII case
	// ignored).
	Text string
	// Status keeps deliveries whose captured response status is in it
	// (nil: any; {0, 0}: no response recorded).
	Status *StatusRange
	// Headers keeps deliveries that carry every one of these headers.
	Headers []HeaderMatch
	// OnePerType keeps, of the deliveries the other conditions match, the
	// newest (highest id, as --last) of each provider and event type.
	// Deliveries without an event type (requests no provider was
	// recognised in) have no type and are not kept.
	OnePerType bool
	Limit      int // 0 means no limit
	Oldest     bool
}

// StatusRange is an inclusive range of HTTP statuses: {500, 599} for 5xx,
// {502, 502} for one code.
type StatusRange struct{ Min, Max int }

// HeaderMatch is a request header a delivery must carry: Name in any case,
// with exactly Value unless AnyValue.
type HeaderMatch struct {
	Name     string
	Value    string
	AnyValue bool
}

// where returns f's conditions as an SQL expression ("" for none) and its
// arguments.
func (f Filter) where(d dialect) (string, []any) {
	var where []string
	var args []any
	if f.Provider != "" {
		where = append(where, "provider = ?")
		args = append(args, f.Provider)
	}
	if f.Source != "" {
		where = append(where, "source = ?")
		args = append(args, f.Source)
	}
	if f.TypeGlob != "" {
		cond, arg := d.globMatch("event_type", f.TypeGlob)
		where = append(where, cond)
		args = append(args, arg)
	}
	if ids := f.eventIDs(); len(ids) > 0 {
		where = append(where, "event_id IN (?"+strings.Repeat(", ?", len(ids)-1)+")")
		for _, id := range ids {
			args = append(args, id)
		}
	}
	if !f.Since.IsZero() {
		where = append(where, "received_at >= ?")
		args = append(args, f.Since.UnixNano())
	}
	if f.Text != "" {
		cond, arg := d.bodyContains(bodyExpr, f.Text)
		where = append(where, cond)
		args = append(args, arg)
	}
	if r := f.Status; r != nil {
		where = append(where, "response_status BETWEEN ? AND ?")
		args = append(args, r.Min, r.Max)
	}
	for _, h := range f.Headers {
		cond, hargs := d.headerMatch(h)
		where = append(where, cond)
		args = append(args, hargs...)
	}
	if f.OnePerType {
		inner := append(where, "event_type <> ''")
		return "id IN (SELECT max(id) FROM deliveries WHERE " + strings.Join(inner, " AND ") + " GROUP BY provider, event_type)", args
	}
	return strings.Join(where, " AND "), args
}

// globLiteral is s as a glob matching s alone: *, ? and [ as classes.
func globLiteral(s string) string {
	return strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]").Replace(s)
}

// BatchEventIDs returns, for each of ids that is no delivery's event id, the
// event id of the oldest delivery carrying it as one of several (a WhatsApp
// POST batching messages keeps the first as event_id and every one in its
// identity's event_ids, space-separated): a Filter on the ids returned finds
// every capture of that batch, its retries included. An id is matched
// whole, never as a prefix or a pattern. The scan of identities runs only
// for ids the event_id index does not find.
func (s *Store) BatchEventIDs(ctx context.Context, ids []string) ([]string, error) {
	out := slices.Clone(ids)
	for _, id := range ids {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE event_id = ? LIMIT 1) x`, id).Scan(&n); err != nil {
			return nil, err
		}
		if n > 0 {
			continue
		}
		cond, arg := s.db.d.globMatch("identity", `*"`+verify.ExtraEventIDs+`":"* `+globLiteral(id)+`[ "]*`)
		var first string
		err := s.db.QueryRowContext(ctx, `SELECT event_id FROM deliveries WHERE `+cond+` ORDER BY id LIMIT 1`, arg).Scan(&first)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, first)
	}
	return out, nil
}

// eventIDs is EventID and EventIDs together.
func (f Filter) eventIDs() []string {
	ids := f.EventIDs
	if f.EventID != "" {
		ids = append([]string{f.EventID}, ids...)
	}
	return ids
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ListDeliveries returns matching deliveries, newest first (oldest first with f.Oldest).
func (s *Store) ListDeliveries(ctx context.Context, f Filter) ([]*Delivery, error) {
	var out []*Delivery
	err := s.EachDelivery(ctx, f, func(d *Delivery) error {
		out = append(out, d)
		return nil
	})
	return out, err
}

// EachDelivery calls fn with each matching delivery in ListDeliveries'
// order, one row at a time: listing a whole store holds one delivery in
// memory, not all of them. An error from fn stops the walk and is returned.
func (s *Store) EachDelivery(ctx context.Context, f Filter, fn func(*Delivery) error) error {
	where, args := f.where(s.db.d)
	q := `SELECT ` + deliveryCols + ` FROM deliveries`
	if where != "" {
		q += " WHERE " + where
	}
	if f.Oldest {
		q += " ORDER BY id ASC"
	} else {
		q += " ORDER BY id DESC"
	}
	if f.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DeleteDeliveries removes the given ids and returns how many existed.
func (s *Store) DeleteDeliveries(ctx context.Context, ids ...int64) (int64, error) {
	var n int64
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("delete deliveries: %w", err)
	}
	defer tx.Rollback()
	for _, id := range ids {
		res, err := tx.ExecContext(ctx, `DELETE FROM deliveries WHERE id=?`, id)
		if err != nil {
			return 0, s.writeFailed(fmt.Sprintf("delete delivery %d", id), err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, tx.Commit()
}

// pruneBatch is how many deliveries one prune transaction removes.
const pruneBatch = 500

// PruneDeliveries removes deliveries received before cutoff and returns how
// many. It is safe while captures write the store: it removes them a batch
// at a time, each batch its own short transaction, so a capture's commit
// waits for one batch (a few milliseconds) rather than for the whole prune
// (seconds for a few hundred thousand rows on SQLite, whose writers take
// turns), and it never sees a delivery not yet committed.
func (s *Store) PruneDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	for {
		res, err := s.db.ExecContext(ctx, `DELETE FROM deliveries WHERE id IN
			(SELECT id FROM deliveries WHERE received_at < ? LIMIT ?)`, cutoff.UnixNano(), pruneBatch)
		if err != nil {
			return n, s.writeFailed("prune deliveries", err)
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("prune deliveries: %w", err)
		}
		n += k
		if k < pruneBatch {
			return n, nil
		}
	}
}

type scanner interface{ Scan(dest ...any) error }

func scanDelivery(r scanner) (*Delivery, error) {
	var d Delivery
	var recv, lat int64
	var ident, hdrs, rhdrs string
	err := r.Scan(&d.ID, &recv, &d.Source, &d.RemoteAddr, &d.Provider, &d.EventID, &d.EventType, &ident,
		&d.Method, &d.Target, &d.Proto, &hdrs, &d.Raw, &d.Body, &d.Verification, &d.ResponseStatus,
		&rhdrs, &d.ResponseBody, &lat, &d.ForwardError, &d.ResponseSize, &d.Origin, &d.DerivedFrom)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("read delivery: %w", err)
	}
	d.ReceivedAt = time.Unix(0, recv)
	d.Latency = time.Duration(lat)
	_ = json.Unmarshal([]byte(ident), &d.Identity)
	_ = json.Unmarshal([]byte(hdrs), &d.Headers)
	d.Headers = exactHeaders(d.Headers, d.Raw)
	d.Target = exactTarget(d.Target, d.Raw)
	_ = json.Unmarshal([]byte(rhdrs), &d.ResponseHeaders)
	return &d, nil
}

// exactHeaders returns hs with the bytes the headers had on the wire. The
// headers column is JSON, which turns bytes that are not UTF-8 (Latin-1
// values from older senders) into U+FFFD; the raw request still has them, so
// when hs shows a replacement character and raw holds the same header lines,
// those are returned instead.
func exactHeaders(hs message.Headers, raw []byte) message.Headers {
	lossy := false
	for _, h := range hs {
		if strings.ContainsRune(h.Name+h.Value, utf8.RuneError) {
			lossy = true
			break
		}
	}
	if !lossy || len(raw) == 0 {
		return hs
	}
	exact := message.ParseHeaderBlock(raw)
	if len(exact) != len(hs) {
		return hs
	}
	for i := range hs {
		if utf8.ValidString(exact[i].Name) && exact[i].Name != hs[i].Name {
			return hs
		}
	}
	return exact
}

// exactTarget returns target with the bytes it had on the wire. Postgres's
// text holds neither NUL nor bytes that are not UTF-8 (they are stored as
// U+FFFD): when target shows a replacement character and the raw request's
// line has a target stored as the same text, that one is returned.
func exactTarget(target string, raw []byte) string {
	if !strings.ContainsRune(target, utf8.RuneError) {
		return target
	}
	line, _, _ := bytes.Cut(raw, []byte("\n"))
	parts := bytes.Split(bytes.TrimSuffix(line, []byte("\r")), []byte(" "))
	if len(parts) != 3 {
		return target
	}
	wire := string(parts[1])
	if postgresText(wire) == target {
		return wire
	}
	return target
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilHeaders(h message.Headers) message.Headers {
	if h == nil {
		return message.Headers{}
	}
	return h
}

func nonNilBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Select applies f to deliveries held in memory (those of a file, which no
// query reaches), as ListDeliveries' query would: Provider, Source,
// TypeGlob (SQLite's GLOB), Since and OnePerType — the newest of each
// provider and event type by ReceivedAt, the later one on a tie. The
// other conditions of f are not read. The result keeps ds's order.
func Select(ds []*Delivery, f Filter) []*Delivery {
	var typeRe *regexp.Regexp
	if f.TypeGlob != "" {
		typeRe = regexp.MustCompile(globRegexp(f.TypeGlob))
	}
	newest := map[[2]string]*Delivery{}
	var out []*Delivery
	for _, d := range ds {
		switch {
		case f.Provider != "" && d.Provider != f.Provider,
			f.Source != "" && d.Source != f.Source,
			typeRe != nil && !typeRe.MatchString(d.EventType),
			!f.Since.IsZero() && d.ReceivedAt.Before(f.Since),
			f.OnePerType && d.EventType == "":
			continue
		}
		if !f.OnePerType {
			out = append(out, d)
			continue
		}
		k := [2]string{d.Provider, d.EventType}
		if n, ok := newest[k]; !ok || !d.ReceivedAt.Before(n.ReceivedAt) {
			newest[k] = d
		}
	}
	if f.OnePerType {
		for _, d := range ds {
			if newest[[2]string{d.Provider, d.EventType}] == d {
				out = append(out, d)
			}
		}
	}
	return out
}
