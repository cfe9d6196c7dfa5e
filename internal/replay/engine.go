package replay

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
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
	d *store.Delivery
	// scheme is d's provider scheme, resolved once when the delivery is
	// prepared; every copy is signed by it.
	scheme verify.Scheme
	req    *message.Request // after overrides and edits, unsigned
	raw    []byte           // --raw: stored bytes with Host rewritten
	edit   string
	url    string // full URL the copy is sent to (Twilio signs it)
	host   string // Host header the copy carries ("": the target's)
	// keepSig: the secret is a public key that verifies and cannot sign
	// (a key-pair scheme's), so copies keep their captured signature.
	keepSig bool
	mu      sync.Mutex
	next    int // copy numbers handed out so far
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
	// trap holds a panic of the run's goroutines (a sender reading a
	// handler's answer, the sink): it stops new sends, and Run raises it
	// on its caller's goroutine once everything sent is delivered.
	trap panics.Trap
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
	r.trap.OnPanic = stop
	sinkDone := make(chan struct{})
	go r.drain(sinkDone)
	r.dispatch()
	r.wg.Wait()
	close(r.out)
	<-sinkDone
	r.trap.Rethrow()
	r.res.Finished = time.Now()
	r.res.Interrupted = ctx.Err() != nil
	return r.res, r.sinkErr
}

// dispatch sends the copies; a panic (its own or a burst's, rethrown)
// stops new sends and waits in r.trap while what was sent is delivered.
func (r *run) dispatch() {
	defer r.trap.Guard()
	if r.j.plan.Order == OrderBurst {
		r.bursts()
	} else {
		r.pool()
	}
}

func (r *run) pool() {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < r.j.plan.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer r.trap.Guard()
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
					defer r.trap.Guard()
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
	if r.j.plan.Secret != "" && !pd.keepSig {
		s, err := verify.ResignWith(pd.scheme, req, r.j.plan.Secret, r.j.plan.Now(), verify.Options{URL: pd.url})
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
		if r.sink == nil || r.sinkErr != nil || r.trap.Err() != nil {
			continue
		}
		r.deliver(batch)
	}
}

// deliver hands a batch to the sink. A panic in it (the store's driver,
// a view) is held in r.trap and stops the run; the drain goes on reading
// so that no sender waits on it.
func (r *run) deliver(batch []*store.Attempt) {
	defer r.trap.Guard()
	if err := deliver(r.sendCtx, r.sink, batch); err != nil {
		r.mu.Lock()
		r.sinkErr = err
		r.mu.Unlock()
		r.stop()
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
func onlyHostChanged(req *message.Request, d *store.Delivery, s verify.Scheme) bool {
	if s.SignsURL() || req.Target != d.Target || !bytes.Equal(req.Body, d.Body) {
		return false
	}
	return slices.Equal(req.Headers.Del("Host"), d.Headers.Del("Host"))
}
