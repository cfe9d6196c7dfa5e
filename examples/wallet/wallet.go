// Package wallet is the example webhook handler that `hookreplay demo` and
// hookreplay's own tests check: a wallet that a Stripe invoice payment credits.
//
// It exists in several variants, each a complete handler that a real team
// could have written. Three are the demo's (see naive.go, racy.go, fixed.go):
//
//   - naive credits the wallet on every delivery, so a duplicate delivery
//     (Stripe delivers at least once) credits twice;
//   - racy remembers processed events, but checks and records in two steps,
//     so two copies arriving together both pass the check;
//   - fixed claims the event id with INSERT … ON CONFLICT DO NOTHING in the
//     same transaction as the credit: exactly once, however copies arrive.
//
// The other variants (testvariants.go) are for hookreplay's own tests: each is
// the fixed handler with exactly one bug that one `check` phase must catch,
// plus one correct asynchronous handler that must not be flagged.
//
// The handler stores its state in SQLite (DSN sqlite:PATH) or Postgres
// (postgres://…) and creates its tables itself:
//
//	wallets(customer PRIMARY KEY, balance)          -- cents
//	processed_events(event_id, processed_at)        -- unique in every variant but racy
//	subscriptions(id PRIMARY KEY, customer, status, event_created)
//
// It also answers GET /balance?customer=cus_… with the balance in cents, so
// an HTTP probe can read it, and, when Options.EmailURL is set, sends a
// receipt to that email API after each credit (a downstream side effect).
package wallet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The demo's variants.
const (
	Naive = "naive"
	Racy  = "racy"
	Fixed = "fixed"
)

// Variants for hookreplay's own tests: each is Fixed with exactly one bug
// (Async has none: it is the correct asynchronous handler).
const (
	Conflict   = "conflict"   // answers a duplicate 409 instead of 2xx
	NoSig      = "nosig"      // never verifies the Stripe signature
	Slow       = "slow"       // sleeps Delay before answering
	Async      = "async"      // answers 200 first, works in the background: correct
	ClaimFirst = "claimfirst" // commits the claim, then credits in a second transaction
	WorkFirst  = "workfirst"  // commits the credit, then claims in a second transaction
	LastWrite  = "lastwrite"  // applies subscription events in arrival order
	PaidNaive  = "paidnaive"  // credits invoice.paid naively, invoice.payment_succeeded right
)

// Variants lists the demo's variants, the ones `demo serve` advertises.
var Variants = []string{Naive, Racy, Fixed}

// TestVariants lists the variants that exist for hookreplay's own tests.
var TestVariants = []string{Conflict, NoSig, Slow, Async, ClaimFirst, WorkFirst, LastWrite, PaidNaive}

// Defaults applied by Handler when the option is zero.
const (
	DefaultRaceWindow      = 10 * time.Millisecond  // racy: between check and insert
	DefaultSlowDelay       = time.Second            // slow: before answering
	DefaultAsyncDelay      = 50 * time.Millisecond  // async: before working
	DefaultClaimFirstDelay = 200 * time.Millisecond // claimfirst: between claim and credit
	DefaultWorkFirstDelay  = 200 * time.Millisecond // workfirst: between credit and claim
)

// Options configure a wallet handler.
type Options struct {
	// Variant is one of Variants or TestVariants.
	Variant string
	// DSN is sqlite:PATH or postgres://… (postgresql:// too).
	DSN string
	// Secret is the Stripe endpoint secret (whsec_…). When set, every variant
	// but nosig verifies the Stripe-Signature header and answers 400 when it
	// does not match or is older than 5 minutes.
	Secret string
	// RaceWindow is how long racy waits between checking and recording an
	// event (the time a real handler spends on other work there).
	RaceWindow time.Duration
	// Delay is slow's answer delay, async's delay before working,
	// claimfirst's gap between claim and credit, workfirst's between credit
	// and claim, and fixed's other work inside its transaction (0: none).
	Delay time.Duration
	// Cold is extra time the first delivery after the handler starts takes
	// (a lazy connection pool, a JIT, lazy imports: what makes a real
	// handler's first answer slow), for hookreplay's own tests.
	Cold time.Duration
	// EmailURL, when set, receives a POST {to, template, amount} after each
	// credit: a receipt email, the kind of downstream call a sink records.
	EmailURL string
	// Log receives one line per delivery (nil: discarded).
	Log io.Writer
	// OnListen, when set, is called by Serve and ServeListener with the
	// address once the handler is ready and connections are accepted.
	OnListen func(addr string)
}

// IsVariant reports whether name is a known variant.
func IsVariant(name string) bool {
	for _, v := range append(append([]string{}, Variants...), TestVariants...) {
		if v == name {
			return true
		}
	}
	return false
}

// handler serves one variant.
type handler struct {
	opts Options
	db   *db
	log  *log.Logger
	http *http.Client
	bg   sync.WaitGroup // async work, waited for by Close
	cold sync.Once      // Options.Cold, waited by the first delivery
}

// Handler returns the variant's http.Handler and a Closer that waits for
// background work and closes the database. It opens the database and creates
// the tables.
func Handler(opts Options) (http.Handler, io.Closer, error) {
	if !IsVariant(opts.Variant) {
		return nil, nil, fmt.Errorf("unknown wallet variant %q (want %s)", opts.Variant, strings.Join(Variants, ", "))
	}
	switch opts.Variant {
	case Racy:
		if opts.RaceWindow <= 0 {
			opts.RaceWindow = DefaultRaceWindow
		}
	case Slow:
		if opts.Delay <= 0 {
			opts.Delay = DefaultSlowDelay
		}
	case Async:
		if opts.Delay <= 0 {
			opts.Delay = DefaultAsyncDelay
		}
	case ClaimFirst:
		if opts.Delay <= 0 {
			opts.Delay = DefaultClaimFirstDelay
		}
	case WorkFirst:
		if opts.Delay <= 0 {
			opts.Delay = DefaultWorkFirstDelay
		}
	}
	d, err := openDB(context.Background(), opts.DSN, opts.Variant)
	if err != nil {
		return nil, nil, err
	}
	w := opts.Log
	if w == nil {
		w = io.Discard
	}
	h := &handler{
		opts: opts,
		db:   d,
		log:  log.New(w, opts.Variant+": ", log.Ltime|log.Lmicroseconds),
		http: &http.Client{Timeout: 5 * time.Second},
	}
	return h, h, nil
}

// Close waits for background work, then closes the database. Call it once
// the server has stopped (http.Server.Shutdown returned).
func (h *handler) Close() error {
	h.bg.Wait()
	return h.db.Close()
}

// Serve runs the variant on listen (host:port) until ctx is cancelled, then
// shuts down gracefully: in-flight deliveries finish, background work is
// waited for, the database is closed. The database is opened before the
// address is bound, so when Options.OnListen is called the handler is ready.
func Serve(ctx context.Context, opts Options, listen string) error {
	h, closer, err := Handler(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		closer.Close()
		return fmt.Errorf("listen on %s: %w", listen, err)
	}
	return serve(ctx, opts, ln, h, closer)
}

// ServeListener is Serve on a listener the caller opened. It closes ln.
func ServeListener(ctx context.Context, opts Options, ln net.Listener) error {
	h, closer, err := Handler(opts)
	if err != nil {
		ln.Close()
		return err
	}
	return serve(ctx, opts, ln, h, closer)
}

func serve(ctx context.Context, opts Options, ln net.Listener, h http.Handler, closer io.Closer) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if opts.OnListen != nil {
		opts.OnListen(ln.Addr().String())
	}
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		<-errc
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, closer.Close())
}

// maxBody bounds a delivery; Stripe events are far smaller.
const maxBody = 1 << 20

// ServeHTTP receives a Stripe event (POST, any path) or answers
// GET /balance?customer=ID.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/balance" {
		h.serveBalance(w, r)
		return
	}
	if r.Method != http.MethodPost {
		answer(w, http.StatusMethodNotAllowed, "POST a Stripe event")
		return
	}
	h.cold.Do(func() { time.Sleep(h.opts.Cold) })
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		answer(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	// Verify before parsing or acting: an unsigned request must change nothing.
	// BUG (nosig): skips this check, so anyone who knows the URL can credit a
	// wallet with a forged or altered event, or replay an old one.
	if h.opts.Secret != "" && h.opts.Variant != NoSig {
		if err := verifyStripe(body, r.Header.Get("Stripe-Signature"), h.opts.Secret, time.Now()); err != nil {
			h.log.Printf("rejected: %v", err)
			answer(w, http.StatusBadRequest, "invalid signature: "+err.Error())
			return
		}
	}
	ev, err := parseEvent(body)
	if err != nil {
		answer(w, http.StatusBadRequest, err.Error())
		return
	}
	// The work continues if the sender hangs up: Stripe retries a delivery
	// whose answer it did not see, and the retry must find the work done.
	ctx := context.WithoutCancel(r.Context())

	if h.opts.Variant == Async {
		// Answer at once, work later (as a queue worker would). Correct: the
		// work itself is the fixed handler's, claim and credit in one transaction.
		h.bg.Add(1)
		go func() {
			defer h.bg.Done()
			time.Sleep(h.opts.Delay)
			if _, _, err := h.handle(ctx, ev); err != nil {
				h.log.Printf("%s %s: background work failed: %v", ev.ID, ev.Type, err)
			}
		}()
		answer(w, http.StatusOK, "queued")
		return
	}

	status, msg, err := h.handle(ctx, ev)
	if err != nil {
		h.log.Printf("%s %s: %v", ev.ID, ev.Type, err)
		answer(w, http.StatusInternalServerError, err.Error())
		return
	}
	if h.opts.Variant == Slow {
		// BUG (slow): something slow before answering — a synchronous call to
		// a slow API, say. Past the provider's timeout the delivery counts as
		// failed and is sent again, however correct the work was.
		time.Sleep(h.opts.Delay)
	}
	answer(w, status, msg)
}

// handle does the event's work and returns the answer to give.
func (h *handler) handle(ctx context.Context, ev *event) (status int, msg string, err error) {
	switch ev.Type {
	case "invoice.payment_succeeded", "invoice.paid":
		inv, err := ev.invoice()
		if err != nil {
			return http.StatusBadRequest, err.Error(), nil
		}
		var credited bool
		variant := h.opts.Variant
		if variant == PaidNaive && ev.Type == "invoice.paid" {
			// BUG (paidnaive): one event type of two is credited without
			// a dedupe, as a handler added later for a new type might be.
			variant = Naive
		}
		switch variant {
		case Naive:
			credited, err = h.creditNaive(ctx, ev, inv)
		case Racy:
			credited, err = h.creditRacy(ctx, ev, inv)
		case ClaimFirst:
			credited, err = h.creditClaimFirst(ctx, ev, inv)
		case WorkFirst:
			credited, err = h.creditWorkFirst(ctx, ev, inv)
		default:
			credited, err = h.creditFixed(ctx, ev, inv)
		}
		if err != nil {
			return 0, "", err
		}
		if !credited {
			h.log.Printf("%s %s: duplicate, nothing to do", ev.ID, ev.Type)
			if h.opts.Variant == Conflict {
				// BUG (conflict): a duplicate is answered with an error. The
				// work was done exactly once, but Stripe treats 409 as a failed
				// delivery and keeps retrying it for three days.
				return http.StatusConflict, "event already processed", nil
			}
			// A duplicate is a success: the event is handled.
			return http.StatusOK, "duplicate", nil
		}
		h.log.Printf("%s %s: credited %d to %s", ev.ID, ev.Type, inv.AmountPaid, inv.Customer)
		h.sendReceipt(ctx, inv)
		return http.StatusOK, "credited", nil

	case "customer.subscription.updated", "customer.subscription.deleted":
		sub, err := ev.subscription()
		if err != nil {
			return http.StatusBadRequest, err.Error(), nil
		}
		var applied bool
		if h.opts.Variant == LastWrite {
			applied, err = h.setSubscriptionLastWrite(ctx, ev, sub)
		} else {
			applied, err = h.setSubscription(ctx, ev, sub)
		}
		if err != nil {
			return 0, "", err
		}
		if !applied {
			h.log.Printf("%s %s: older than the stored state, ignored", ev.ID, ev.Type)
			return http.StatusOK, "stale event ignored", nil
		}
		h.log.Printf("%s %s: subscription %s is %s", ev.ID, ev.Type, sub.ID, sub.Status)
		return http.StatusOK, "subscription " + sub.Status, nil
	}
	// Stripe sends every event type the endpoint subscribes to; answering 2xx
	// to the ones we ignore stops it from retrying them.
	return http.StatusOK, "ignored " + ev.Type, nil
}

// sendReceipt tells the email API (when configured) that the customer paid.
// It runs after the credit committed: a failure is logged, not retried.
func (h *handler) sendReceipt(ctx context.Context, inv *invoice) {
	if h.opts.EmailURL == "" {
		return
	}
	body, _ := json.Marshal(map[string]any{"to": inv.Customer, "template": "payment_received", "amount": inv.AmountPaid})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.opts.EmailURL, "/")+"/v1/send", strings.NewReader(string(body)))
	if err != nil {
		h.log.Printf("receipt: %v", err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.http.Do(req)
	if err != nil {
		h.log.Printf("receipt: %v", err)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func (h *handler) serveBalance(w http.ResponseWriter, r *http.Request) {
	customer := r.URL.Query().Get("customer")
	if customer == "" {
		answer(w, http.StatusBadRequest, "want ?customer=ID")
		return
	}
	bal, err := h.db.balance(r.Context(), customer)
	if err != nil {
		answer(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, strconv.FormatInt(bal, 10))
}

// answer writes {"status": msg} with code.
func answer(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]string{"status": msg})
	_, _ = w.Write(append(b, '\n'))
}
