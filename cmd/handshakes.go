package cmd

// --one-per-type and providers' handshakes: the newest delivery of each
// "event type" includes, for Meta, GitHub, Slack, Zoom, Twitch and Discord,
// the request the provider sends to verify the URL (Meta's GET
// hub.mode=subscribe, GitHub's ping, Slack's url_verification, …). It is no
// event, so a check of it is inconclusive however right the handler is: a
// nightly `check --since 24h --one-per-type` would exit 3 every time the app
// was re-pointed at its URL. check leaves them out of --one-per-type's
// choice and says so; a handshake named by its ID is still checked, and its
// report says what it is.

import (
	"fmt"
	"strings"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// withoutHandshakes returns ds without the providers' handshakes, and a
// description of each one left out.
func withoutHandshakes(ds []*store.Delivery) (kept []*store.Delivery, left []string) {
	for _, d := range ds {
		if what := verify.Handshake(verify.Lookup(d.Provider), d.Request()); what != "" {
			left = append(left, fmt.Sprintf("delivery %d (%s %s): %s", d.ID, d.Provider, d.EventType, what))
			continue
		}
		kept = append(kept, d)
	}
	return kept, left
}

// handshakesNote is the note (and progress line) naming the handshakes
// --one-per-type left out; "" when there were none.
func handshakesNote(left []string) string {
	if len(left) == 0 {
		return ""
	}
	return "--one-per-type left out " + strings.Join(left, "; ") + ": not an event, so there is no work to do exactly once (check it by its ID to see what the handler answers)"
}

// onlyHandshakesErr is --one-per-type's error when every delivery it would
// choose is a handshake.
func onlyHandshakesErr(sel string, left []string) error {
	return usageErr("%s: the only deliveries that match are handshakes, not events (%s): there is no work to do exactly once; capture a delivery of an event the handler acts on (see 'hookreplay list %s')",
		sel, strings.Join(left, "; "), sel)
}
