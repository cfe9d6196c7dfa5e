package replay

// This file is the contract the check command and the TUI use: one copy
// (Send), a synchronised burst (Burst) and the burst's spread (Spread).
// The exchange itself lives in conn.go.

import (
	"context"
	"crypto/tls"
	"github.com/hookreplay/hookreplay/internal/panics"
	"net/url"
	"sync"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// DefaultTimeout bounds one attempt (connect + write + wait for the answer)
// when Target.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// DefaultMaxBody is how much of a response body an attempt keeps when
// SendOptions.MaxBody is zero.
const DefaultMaxBody = 64 << 10

// Target is where copies are sent.
type Target struct {
	URL     *url.URL      // scheme http or https, host, base path
	Timeout time.Duration // per attempt: connect + write + wait for the answer
	// TLS configures https targets (nil: system roots, server name from URL).
	TLS *tls.Config
	// Host, when set, is the Host header rebuilt copies carry instead of
	// URL.Host (a virtual host); the connection still goes to URL.
	Host string
}

// SendOptions change how one copy is sent.
type SendOptions struct {
	// Lose: write the whole request, never read the answer, close the
	// connection (the handler did the work, the sender never saw the answer).
	// The connection is closed once the first byte of the answer has reached
	// our socket (or Timeout passed), so the handler finished its work before
	// the sender hung up — a response lost on the way back.
	Lose bool
	// LoseEarly, with Lose, closes right after the last request byte instead
	// of waiting for the answer to arrive: the sender gave up before the
	// handler answered (a Go handler then sees its request context cancelled).
	LoseEarly bool
	// Raw, when set, is sent instead of req encoded for Target (--raw mode).
	// Use RawFor to rewrite its Host line for Target.
	Raw []byte
	// MaxBody bounds the response body kept in the attempt (0: 64 KiB).
	MaxBody int
	// Written, when set, is called by Send as soon as the request's last
	// byte is written (with CompletedAt), before the answer is read: the
	// crash phase times its kills from that moment. It must not block.
	Written func(time.Time)
}

// Send sends req once to t and returns the attempt (Status, Latency, SentAt,
// CompletedAt, ResponseHeaders, ResponseBody or Err; Lost when opt.Lose).
// ConnID is set once a connection is established (0: never connected).
// RunID, DeliveryID, Phase, Copy and EventID are left for the caller to fill.
// The request goes to RequestTarget(t.URL, req.Target) with Host t.Host, or
// t.URL.Host when that is empty.
func Send(ctx context.Context, t Target, req *message.Request, opt SendOptions) store.Attempt {
	x := newExchange(t, wireFor(t, req, opt), opt)
	if x.open(ctx) && x.write(ctx) {
		x.finish(ctx)
	}
	x.close()
	return x.a
}

// Burst sends every request at once with last-byte synchronisation: all
// connections are opened and all requests written but their last byte, then
// the last bytes are released together. Attempts are returned in input order.
// With opt.Raw set, every request sends those bytes.
func Burst(ctx context.Context, t Target, reqs []*message.Request, opt SendOptions) []store.Attempt {
	ws := make([]wire, len(reqs))
	for i, r := range reqs {
		ws[i] = wireFor(t, r, opt)
	}
	return burst(ctx, t, ws, opt, releaseLoop)
}

// BurstWire is Burst over already encoded requests (one wire payload per
// copy, e.g. stored raw bytes of several deliveries).
func BurstWire(ctx context.Context, t Target, payloads [][]byte, opt SendOptions) []store.Attempt {
	ws := make([]wire, len(payloads))
	for i, p := range payloads {
		ws[i] = wire{b: p, method: methodOf(p)}
	}
	return burst(ctx, t, ws, opt, releaseLoop)
}

// releaseMode is how a burst releases its final bytes. BenchmarkBurstSpread*
// measures both; the tight loop wins on 2 cores (see the README's replay performance section).
type releaseMode int

const (
	// releaseLoop: one goroutine writes every final byte in a tight loop.
	releaseLoop releaseMode = iota
	// releaseBarrier: one goroutine per connection waits on a shared channel
	// and writes its own final byte when the channel closes.
	releaseBarrier
)

func burst(ctx context.Context, t Target, ws []wire, opt SendOptions, mode releaseMode) []store.Attempt {
	xs := make([]*exchange, len(ws))
	for i, w := range ws {
		xs[i] = newExchange(t, w, opt)
	}
	ready := make([]bool, len(xs))
	release := make(chan struct{})
	var prep, done sync.WaitGroup
	// A copy's panic (reading the handler's answer, a TLS handshake) is
	// raised on the caller's goroutine once every copy is done.
	var trap panics.Trap
	for i, x := range xs {
		prep.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			defer trap.Guard()
			prepared := sync.OnceFunc(prep.Done)
			defer prepared()
			ok := x.open(ctx) && x.writeHead(ctx)
			ready[i] = ok
			prepared()
			if !ok {
				return
			}
			<-release
			panics.TestHook("burst")
			if mode == releaseBarrier {
				if !x.writeLast() {
					x.readEarly(ctx)
					return
				}
			} else if x.a.CompletedAt.IsZero() {
				x.readEarly(ctx) // the loop's write failed and recorded why
				return
			}
			x.finish(ctx)
		}()
	}
	prep.Wait()
	if mode == releaseLoop {
		for i, x := range xs {
			if ready[i] {
				x.writeLast()
			}
		}
	}
	close(release)
	done.Wait()
	out := make([]store.Attempt, len(xs))
	for i, x := range xs {
		x.close()
		out[i] = x.a
	}
	trap.Rethrow()
	return out
}

// Spread is the time between the first and the last completed request of as
// (attempts that never completed their request are ignored).
func Spread(as []store.Attempt) time.Duration {
	var lo, hi time.Time
	for _, a := range as {
		if a.CompletedAt.IsZero() {
			continue
		}
		if lo.IsZero() || a.CompletedAt.Before(lo) {
			lo = a.CompletedAt
		}
		if hi.IsZero() || a.CompletedAt.After(hi) {
			hi = a.CompletedAt
		}
	}
	return hi.Sub(lo)
}
