package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Order is how copies are sequenced.
type Order string

// Orders.
const (
	OrderSeq     Order = "seq"     // deliveries in the given order, each one's copies one after another
	OrderBurst   Order = "burst"   // each delivery's copies at once (last-byte synchronised)
	OrderShuffle Order = "shuffle" // every copy of every delivery in a seeded random order
	OrderReverse Order = "reverse" // deliveries in reverse order, each one's copies one after another
)

// ParseOrder validates an --order value.
func ParseOrder(s string) (Order, error) {
	switch o := Order(s); o {
	case OrderSeq, OrderBurst, OrderShuffle, OrderReverse:
		return o, nil
	case "":
		return OrderSeq, nil
	}
	return "", fmt.Errorf("unknown order %q (want seq, burst, shuffle or reverse)", s)
}

// Override replaces a delivery's request before replay (e.g. after --edit).
type Override struct {
	Req  *message.Request
	Desc string // recorded in Attempt.Edit
}

// Plan says what to replay and how.
type Plan struct {
	Deliveries  []*store.Delivery
	Target      Target
	Copies      int   // per delivery (0: 1)
	Order       Order // "" is seq
	Seed        int64 // shuffle seed (0: chosen at random, reported in Result.Seed)
	Concurrency int   // copies in flight at once for seq/shuffle/reverse (0: 1)
	// LoseResponse: the first K copies of each delivery (in sending order,
	// retries included) are sent but their answer is never read.
	LoseResponse int
	// LoseEarly: lost copies hang up right after the request instead of
	// after the answer reached the socket (see SendOptions.LoseEarly).
	LoseEarly bool
	Schedule  string  // retry timetable after a failed copy: stripe, github, ... ("" or "none": no retries)
	Speedup   float64 // schedule compression (0: 1, real time)
	Edits     Edits
	Overrides map[int64]Override // per delivery id, applied before Edits
	Secret    string             // re-sign every copy with a fresh timestamp when set
	Raw       bool               // send the stored wire bytes (only Host rewritten)
	Phase     string             // recorded in attempts ("" is "replay")
	MaxBody   int
	// Now is the clock used for re-signing (nil: time.Now).
	Now func() time.Time
}

// AttemptSink receives every attempt as soon as it is done. Calls are
// serialised by the engine. An error stops new sends.
type AttemptSink interface {
	Attempt(ctx context.Context, a *store.Attempt) error
}

// BatchSink is an AttemptSink that can take several finished attempts at
// once (the store commits them in one transaction). The engine hands over
// whatever finished while the previous batch was being written.
type BatchSink interface {
	AttemptSink
	Attempts(ctx context.Context, as []*store.Attempt) error
}

func deliver(ctx context.Context, s AttemptSink, as []*store.Attempt) error {
	if b, ok := s.(BatchSink); ok {
		return b.Attempts(ctx, as)
	}
	for _, a := range as {
		if err := s.Attempt(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// SinkFunc adapts a function to AttemptSink.
type SinkFunc func(ctx context.Context, a *store.Attempt) error

// Attempt calls f.
func (f SinkFunc) Attempt(ctx context.Context, a *store.Attempt) error { return f(ctx, a) }

// MultiSink sends each attempt to every sink in order; the first error wins.
type MultiSink []AttemptSink

// Attempt forwards a to every sink.
func (m MultiSink) Attempt(ctx context.Context, a *store.Attempt) error {
	for _, s := range m {
		if s == nil {
			continue
		}
		if err := s.Attempt(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Attempts forwards a batch to every sink in order.
func (m MultiSink) Attempts(ctx context.Context, as []*store.Attempt) error {
	for _, s := range m {
		if s == nil {
			continue
		}
		if err := deliver(ctx, s, as); err != nil {
			return err
		}
	}
	return nil
}

// StoreSink records attempts as rows of run RunID.
type StoreSink struct {
	Store *store.Store
	RunID int64
}

// Attempt inserts a (even after ctx was cancelled: what was done is kept).
func (s StoreSink) Attempt(ctx context.Context, a *store.Attempt) error {
	a.RunID = s.RunID
	return s.Store.InsertAttempt(context.WithoutCancel(ctx), a)
}

// Attempts inserts a batch in one transaction.
func (s StoreSink) Attempts(ctx context.Context, as []*store.Attempt) error {
	for _, a := range as {
		a.RunID = s.RunID
	}
	return s.Store.InsertAttempts(context.WithoutCancel(ctx), as)
}

// BurstStat is the measured synchronisation of one burst.
type BurstStat struct {
	DeliveryID int64         `json:"delivery_id"`
	Copies     int           `json:"copies"`
	Completed  int           `json:"completed"`
	Spread     time.Duration `json:"spread_ns"`
}

// Result is what a run did.
type Result struct {
	Attempts    []store.Attempt `json:"attempts"` // in the order they finished
	Seed        int64           `json:"seed"`
	Bursts      []BurstStat     `json:"bursts,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
	Started     time.Time       `json:"started"`
	Finished    time.Time       `json:"finished"`
}

// prepared is one delivery ready to be copied.
type prepared struct {
	d    *store.Delivery
	req  *message.Request // after overrides and edits, unsigned
	raw  []byte           // --raw: stored bytes with Host rewritten
	edit string
	url  string // full URL the copy is sent to (Twilio signs it)
	host string // Host header the copy carries ("": the target's)
	mu   sync.Mutex
	next int // copy numbers handed out so far
}

func (p *prepared) nextCopy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next++
	return p.next
}

// Job is a validated plan: warnings are known before anything is sent.
type Job struct {
	plan     Plan
	sched    Schedule
	ds       []*prepared
	items    []int // dispatch order for seq/shuffle/reverse: index into ds, one per copy
	Warnings []string
	Seed     int64
}

// Planned is how many copies the job sends before any scheduled retry.
func (j *Job) Planned() int { return len(j.ds) * j.plan.Copies }

// Schedule is the job's retry timetable.
func (j *Job) Schedule() Schedule { return j.sched }

// Plan returns the (normalised) plan.
func (j *Job) Plan() Plan { return j.plan }

// Prepare validates p, applies edits and works out warnings.
func Prepare(p Plan) (*Job, error) {
	p, sched, err := normalizePlan(p)
	if err != nil {
		return nil, err
	}
	j := &Job{plan: p, sched: sched}
	if p.LoseResponse > 0 && p.LoseResponse >= p.Copies && len(sched.Retries) == 0 {
		// Something must come after the lost answers, as a provider would retry.
		j.Warnings = append(j.Warnings, fmt.Sprintf("--lose-response %d with -n %d: sending %d copies so a retry follows the lost answers",
			p.LoseResponse, p.Copies, p.LoseResponse+1))
		j.plan.Copies = p.LoseResponse + 1
	}
	now := p.Now()
	for _, d := range p.Deliveries {
		pd, warnings, err := prepareDelivery(p, d, now)
		if err != nil {
			return nil, err
		}
		j.Warnings = append(j.Warnings, warnings...)
		j.ds = append(j.ds, pd)
	}
	j.Seed = p.Seed
	if j.plan.Order == OrderShuffle && j.Seed == 0 {
		j.Seed = rand.Int64N(1_000_000) + 1 // short enough to type back
	}
	j.plan.Seed = j.Seed
	j.items = dispatchOrder(len(j.ds), j.plan.Copies, j.plan.Order, j.Seed)
	return j, nil
}

// normalizePlan fills p's defaults, looks up its retry timetable and
// refuses what cannot be sent.
func normalizePlan(p Plan) (Plan, Schedule, error) {
	if len(p.Deliveries) == 0 {
		return p, Schedule{}, errors.New("nothing to replay")
	}
	if p.Target.URL == nil || p.Target.URL.Host == "" {
		return p, Schedule{}, errors.New("no target URL")
	}
	if s := p.Target.URL.Scheme; s != "http" && s != "https" {
		return p, Schedule{}, fmt.Errorf("target scheme %q: want http or https", s)
	}
	if p.Copies <= 0 {
		p.Copies = 1
	}
	if p.Concurrency <= 0 {
		p.Concurrency = 1
	}
	if p.Speedup <= 0 {
		p.Speedup = 1
	}
	if p.Phase == "" {
		p.Phase = "replay"
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.LoseResponse < 0 {
		return p, Schedule{}, errors.New("--lose-response must not be negative")
	}
	var err error
	if p.Order, err = ParseOrder(string(p.Order)); err != nil {
		return p, Schedule{}, err
	}
	sched, err := LookupSchedule(p.Schedule)
	if err != nil {
		return p, Schedule{}, err
	}
	if p.Raw && (!p.Edits.Empty() || len(p.Overrides) > 0) {
		return p, Schedule{}, errors.New("--raw sends the stored bytes unchanged; it cannot be combined with edits")
	}
	if p.Raw && p.Secret != "" {
		return p, Schedule{}, errors.New("--raw sends the stored bytes unchanged; it cannot be combined with --secret (re-signing rewrites headers)")
	}
	return p, sched, nil
}

// prepareDelivery builds what is sent for d: the request with its edits, the
// Host and URL, the raw bytes (--raw), and checks that copies can be signed.
// warnings say what will surprise the handler (a stale or broken signature,
// a request-target --raw keeps).
func prepareDelivery(p Plan, d *store.Delivery, now time.Time) (pd *prepared, warnings []string, err error) {
	pd = &prepared{d: d, req: d.Request()}
	if o, ok := p.Overrides[d.ID]; ok && o.Req != nil {
		pd.req, pd.edit = o.Req.Clone(), o.Desc
	}
	if !p.Edits.Empty() {
		r, desc, err := p.Edits.Apply(pd.req)
		if err != nil {
			return nil, nil, fmt.Errorf("delivery %d: %w", d.ID, err)
		}
		pd.req = r
		pd.edit = joinEdit(pd.edit, desc)
	}
	if pd.edit != "" && !bytes.Equal(pd.req.Body, d.Body) {
		// Some schemes describe the body outside the signature (Twilio:
		// bodySHA256 in the URL).
		if s, err := verify.SchemeFor(d.Provider); err == nil {
			if note := s.BodyEdited(pd.req); note != "" {
				pd.edit = joinEdit(pd.edit, note)
			}
		}
	}
	pd.host = sendHost(p, d)
	u := p.Target.URL
	if pd.host != "" {
		c := *u
		c.Host = pd.host
		u = &c
	}
	pd.url = FullURL(u, pd.req.Target)
	if p.Raw {
		if len(d.Raw) == 0 {
			return nil, nil, fmt.Errorf("delivery %d has no stored wire bytes; replay it without --raw", d.ID)
		}
		var changed bool
		pd.raw, changed = RawFor(d.Raw, p.Target.URL.Host)
		if changed {
			pd.edit = "raw: Host rewritten to " + p.Target.URL.Host
		}
		if p.Target.URL.EscapedPath() != "" && RequestTarget(p.Target.URL, d.Target) != d.Target {
			warnings = append(warnings, fmt.Sprintf("delivery %d: --raw keeps the stored request-target %s (the path of --to is not used)", d.ID, d.Target))
		}
	}
	if p.Secret != "" {
		// Fail early (before anything is sent) when copies cannot be signed.
		if _, err := verify.Resign(pd.req, d.Provider, p.Secret, now, verify.Options{URL: pd.url}); err != nil {
			return nil, nil, fmt.Errorf("delivery %d: cannot re-sign %s copies: %w", d.ID, d.Provider, err)
		}
		return pd, warnings, nil
	}
	return pd, append(warnings, signatureWarnings(p, pd, now)...), nil
}

// sendHost is the Host copies of d are sent with: one set by an edit
// (--set-header 'Host: …', --edit) as it is, for virtual hosts; else the
// target's ("" for the URL's own).
func sendHost(p Plan, d *store.Delivery) string {
	host := p.Target.Host
	if o, ok := p.Overrides[d.ID]; ok && o.Req != nil {
		if h := o.Req.Headers.Get("Host"); h != "" && h != d.Headers.Get("Host") {
			host = h
		}
	}
	for _, h := range p.Edits.SetHeaders {
		if strings.EqualFold(h.Name, "Host") && h.Value != "" {
			host = h.Value
		}
	}
	return host
}

// signatureWarnings, for copies sent with their stored signature (no
// --secret): a signature older than the provider's tolerance, and one that
// an edit broke.
func signatureWarnings(p Plan, pd *prepared, now time.Time) []string {
	d, provider := pd.d, pd.d.Provider
	var out []string
	if at, ok := verify.SignedAt(d.Request(), provider); ok {
		if tol := verify.DefaultTolerance(provider); tol > 0 && now.Sub(at) > tol {
			out = append(out, fmt.Sprintf("delivery %d: its %s signature was made %s ago, beyond the %s tolerance; a handler that checks signature age will reject these copies (pass --secret to re-sign)",
				d.ID, provider, roundAge(now.Sub(at)), tol))
		}
	}
	if pd.edit != "" && !p.Raw && verify.Recognised(provider) && !onlyHostChanged(pd.req, d, provider) {
		out = append(out, fmt.Sprintf("delivery %d: edited copies keep the original %s signature, which no longer matches (pass --secret to re-sign)", d.ID, provider))
	}
	return out
}

// dispatchOrder lists, one entry per copy, which delivery is sent next.
func dispatchOrder(nd, copies int, o Order, seed int64) []int {
	var items []int
	for i := 0; i < nd; i++ {
		d := i
		if o == OrderReverse {
			d = nd - 1 - i
		}
		for c := 0; c < copies; c++ {
			items = append(items, d)
		}
	}
	if o == OrderShuffle {
		r := rand.New(rand.NewPCG(uint64(seed), 0x68_6f_6f_6b)) // "hook"
		r.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
	}
	return items
}

func joinEdit(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func roundAge(d time.Duration) time.Duration {
	switch {
	case d > time.Hour:
		return d.Round(time.Minute)
	case d > time.Minute:
		return d.Round(time.Second)
	}
	return d.Round(time.Millisecond)
}

// Run prepares p and runs it.
func Run(ctx context.Context, p Plan, sink AttemptSink) (*Result, error) {
	j, err := Prepare(p)
	if err != nil {
		return nil, err
	}
	return j.Run(ctx, sink)
}

// inflightGrace is how long copies already on the wire may still take after
// the run was cancelled (bounded by Target.Timeout as well).
const inflightGrace = 5 * time.Second

// run is one execution of a Job.
type run struct {
	j       *Job
	sink    AttemptSink
	ctx     context.Context // cancelled: no new sends
	sendCtx context.Context // cancelled: in-flight copies abort too
	stop    context.CancelFunc
	mu      sync.Mutex
	res     *Result
	sinkErr error
	wg      sync.WaitGroup
	out     chan store.Attempt // finished attempts on their way to the sink
}

// Run sends the job's copies, streaming each attempt to sink. Cancelling ctx
// stops new sends; copies already on the wire finish (within a few seconds)
// and are recorded. The error is the sink's, if it failed.
func (j *Job) Run(ctx context.Context, sink AttemptSink) (*Result, error) {
	dispatch, stop := context.WithCancel(ctx)
	defer stop()
	sendCtx, cancelSend := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSend()
	after := context.AfterFunc(dispatch, func() { time.AfterFunc(inflightGrace, cancelSend) })
	defer after()
	r := &run{j: j, sink: sink, ctx: dispatch, sendCtx: sendCtx, stop: stop,
		res: &Result{Seed: j.Seed, Started: time.Now()}, out: make(chan store.Attempt, 1024)}
	sinkDone := make(chan struct{})
	go r.drain(sinkDone)
	if j.plan.Order == OrderBurst {
		r.bursts()
	} else {
		r.pool()
	}
	r.wg.Wait()
	close(r.out)
	<-sinkDone
	r.res.Finished = time.Now()
	r.res.Interrupted = ctx.Err() != nil
	return r.res, r.sinkErr
}

func (r *run) pool() {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < r.j.plan.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Copies one after another on a worker reuse its connection.
			k := &keeper{}
			defer k.close()
			for i := range next {
				pd := r.j.ds[i]
				a := r.send(pd, k, nil, nil)
				r.retry(pd, a)
			}
		}()
	}
	for _, i := range r.j.items {
		if r.ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-r.ctx.Done():
		}
	}
	close(next)
	wg.Wait()
}

func (r *run) bursts() {
	for _, pd := range r.j.ds {
		if r.ctx.Err() != nil {
			return
		}
		n := r.j.plan.Copies
		ws := make([]wire, 0, n)
		pre := make([]store.Attempt, 0, n)
		var failed []store.Attempt
		for c := 0; c < n; c++ {
			a := r.base(pd)
			w, err := r.wireFor(pd)
			if err != nil {
				a.Err = err.Error()
				failed = append(failed, a)
				continue
			}
			w.lose = a.Lost
			ws = append(ws, w)
			pre = append(pre, a)
		}
		sent := burst(r.sendCtx, r.j.plan.Target, ws, r.sendOptions(), releaseLoop)
		for i := range sent {
			sent[i] = fill(sent[i], pre[i])
		}
		r.mu.Lock()
		st := BurstStat{DeliveryID: pd.d.ID, Copies: len(sent), Spread: Spread(sent)}
		for _, a := range sent {
			if !a.CompletedAt.IsZero() {
				st.Completed++
			}
		}
		r.res.Bursts = append(r.res.Bursts, st)
		r.mu.Unlock()
		for _, a := range append(sent, failed...) {
			a.Detail = withDetail(a.Detail, "burst_spread_ns", st.Spread.Nanoseconds())
			a = r.emit(a)
			if len(r.j.sched.Retries) > 0 && !succeeded(a) {
				r.wg.Add(1)
				go func() {
					defer r.wg.Done()
					r.retry(pd, a)
				}()
			}
		}
	}
}

// base is an attempt's identity before it is sent.
func (r *run) base(pd *prepared) store.Attempt {
	c := pd.nextCopy()
	return store.Attempt{
		DeliveryID: pd.d.ID,
		Phase:      r.j.plan.Phase,
		Copy:       c,
		EventID:    pd.d.EventID,
		Edit:       pd.edit,
		Lost:       c <= r.j.plan.LoseResponse,
	}
}

func (r *run) sendOptions() SendOptions {
	return SendOptions{LoseEarly: r.j.plan.LoseEarly, MaxBody: r.j.plan.MaxBody}
}

// wireFor encodes one copy, re-signed at this instant when a secret is known.
func (r *run) wireFor(pd *prepared) (wire, error) {
	if r.j.plan.Raw {
		return wire{b: pd.raw, method: methodOf(pd.raw)}, nil
	}
	req := pd.req
	if r.j.plan.Secret != "" {
		s, err := verify.Resign(req, pd.d.Provider, r.j.plan.Secret, r.j.plan.Now(), verify.Options{URL: pd.url})
		if err != nil {
			return wire{}, fmt.Errorf("re-sign: %w", err)
		}
		req = s
	}
	t := r.j.plan.Target
	if pd.host != "" {
		t.Host = pd.host
	}
	return wireFor(t, req, SendOptions{}), nil
}

// sendOne sends the next copy of pd.
// pre adjusts the attempt's identity, post the finished attempt before it is emitted.
func (r *run) sendOne(pd *prepared, pre, post func(*store.Attempt)) store.Attempt {
	return r.send(pd, nil, pre, post)
}

// send sends the next copy of pd, on k's kept-alive connection when it has one.
func (r *run) send(pd *prepared, k *keeper, pre, post func(*store.Attempt)) store.Attempt {
	a := r.base(pd)
	if pre != nil {
		pre(&a)
	}
	w, err := r.wireFor(pd)
	if err != nil {
		a.Err = err.Error()
		return r.emit(a)
	}
	w.lose = a.Lost
	x := newExchange(r.j.plan.Target, w, r.sendOptions())
	x.keep = k
	if x.open(r.sendCtx) && x.write(r.sendCtx) {
		x.finish(r.sendCtx)
	}
	if x.staleKept() {
		x.close()
		x = newExchange(r.j.plan.Target, w, r.sendOptions())
		x.keep = k
		if x.open(r.sendCtx) && x.write(r.sendCtx) {
			x.finish(r.sendCtx)
		}
	}
	x.close()
	done := fill(x.a, a)
	if post != nil {
		post(&done)
	}
	return r.emit(done)
}

// retry follows the provider's timetable after a failed first copy.
func (r *run) retry(pd *prepared, first store.Attempt) {
	rs := r.j.sched.Retries
	if len(rs) == 0 || succeeded(first) {
		return
	}
	start := first.SentAt
	if start.IsZero() {
		start = time.Now()
	}
	chain := first.Copy
	for k, off := range rs {
		wait := time.Until(start.Add(time.Duration(float64(off) / r.j.plan.Speedup)))
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-r.ctx.Done():
				t.Stop()
				return
			}
		} else if r.ctx.Err() != nil {
			return
		}
		final := k == len(rs)-1
		last := r.sendOne(pd, func(a *store.Attempt) {
			a.StandsFor = off
			a.Detail = withDetail(withDetail(a.Detail, "retry", k+1), "retry_of_copy", chain)
		}, func(a *store.Attempt) {
			if final && !succeeded(*a) && r.j.sched.Final != "" {
				a.Detail = withDetail(a.Detail, "schedule_exhausted", r.j.sched.Final)
			}
		})
		if succeeded(last) {
			return
		}
	}
}

// emit records a finished attempt and queues it for the sink, so senders
// never wait for the database.
func (r *run) emit(a store.Attempt) store.Attempt {
	r.mu.Lock()
	r.res.Attempts = append(r.res.Attempts, a)
	r.mu.Unlock()
	r.out <- a
	return a
}

// drain hands finished attempts to the sink, batching whatever queued up
// while the previous batch was written. A sink error stops new sends.
func (r *run) drain(done chan<- struct{}) {
	defer close(done)
	for a := range r.out {
		batch := []*store.Attempt{&a}
	more:
		for len(batch) < 512 {
			select {
			case b, ok := <-r.out:
				if !ok {
					break more
				}
				batch = append(batch, &b)
			default:
				break more
			}
		}
		if r.sink == nil || r.sinkErr != nil {
			continue
		}
		if err := deliver(r.sendCtx, r.sink, batch); err != nil {
			r.mu.Lock()
			r.sinkErr = err
			r.mu.Unlock()
			r.stop()
		}
	}
}

// fill copies the caller-owned fields of id into a sent attempt.
func fill(sent, id store.Attempt) store.Attempt {
	sent.DeliveryID, sent.Phase, sent.Copy, sent.EventID = id.DeliveryID, id.Phase, id.Copy, id.EventID
	sent.Edit, sent.StandsFor = id.Edit, id.StandsFor
	sent.Lost = sent.Lost || id.Lost
	for k, v := range id.Detail {
		sent.Detail = withDetail(sent.Detail, k, v)
	}
	return sent
}

func withDetail(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// succeeded: the provider would consider the delivery done.
func succeeded(a store.Attempt) bool { return Outcome(a) == "2xx" }

// Connected reports whether the attempt reached the handler (a TCP
// connection was established).
func Connected(a store.Attempt) bool { return a.ConnID != 0 }

// EditDescription is how the copies were edited ("" when they were not);
// with several deliveries edited differently, the distinct edits joined.
func (j *Job) EditDescription() string {
	var out []string
	for _, pd := range j.ds {
		if pd.edit != "" && !slices.Contains(out, pd.edit) {
			out = append(out, pd.edit)
		}
	}
	return strings.Join(out, " | ")
}

// onlyHostChanged reports whether an edited request differs from the stored
// delivery in its Host header alone, which only a provider that signs the
// URL (Twilio) covers with its signature.
func onlyHostChanged(req *message.Request, d *store.Delivery, provider string) bool {
	if verify.SignsURL(provider) || req.Target != d.Target || !bytes.Equal(req.Body, d.Body) {
		return false
	}
	return slices.Equal(req.Headers.Del("Host"), d.Headers.Del("Host"))
}
