package replay

// This file is the contract the check command and the TUI use. The bodies are
// placeholders until the replay engine lands (issue 5); signatures are fixed.

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// Target is where copies are sent.
type Target struct {
	URL     *url.URL      // scheme http (https when supported), host, base path
	Timeout time.Duration // per attempt: connect + write + wait for the answer
}

// SendOptions change how one copy is sent.
type SendOptions struct {
	// Lose: write the whole request, read nothing, close the connection
	// (the handler did the work, the sender never saw the answer).
	Lose bool
	// Raw, when set, is sent instead of req encoded for Target (--raw mode).
	Raw []byte
	// MaxBody bounds the response body kept in the attempt (0: 64 KiB).
	MaxBody int
}

var errNotBuilt = errors.New("replay engine not built yet")

// Send sends req once to t and returns the attempt (Status, Latency, SentAt,
// CompletedAt, ResponseHeaders, ResponseBody or Err; Lost when opt.Lose).
// RunID, DeliveryID, Phase, Copy and EventID are left for the caller to fill.
func Send(ctx context.Context, t Target, req *message.Request, opt SendOptions) store.Attempt {
	return store.Attempt{Err: errNotBuilt.Error()}
}

// Burst sends every request at once with last-byte synchronisation: all
// connections are opened and all requests written but their last byte, then
// the last bytes are released together. Attempts are returned in input order.
func Burst(ctx context.Context, t Target, reqs []*message.Request, opt SendOptions) []store.Attempt {
	out := make([]store.Attempt, len(reqs))
	for i := range out {
		out[i].Err = errNotBuilt.Error()
	}
	return out
}

// Spread is the time between the first and the last completed request of as.
func Spread(as []store.Attempt) time.Duration {
	return 0
}
