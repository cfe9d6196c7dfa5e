package replay

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

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
	pd = &prepared{d: d, scheme: verify.Lookup(d.Provider), req: d.Request()}
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
		if note := pd.scheme.BodyEdited(pd.req); note != "" {
			pd.edit = joinEdit(pd.edit, note)
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
	if p.Secret != "" && !verify.CanSign(pd.scheme, p.Secret) {
		// A key-pair scheme's public key: it verifies, and cannot sign.
		pd.keepSig = true
		warnings = append(warnings, fmt.Sprintf("delivery %d: %s signs with a private key and the key given is a public key: copies keep their captured signature "+
			"(to re-sign them, configure the handler with the public key of a test key pair and give its private key)", d.ID, pd.scheme.Title()))
		return pd, append(warnings, signatureWarnings(p, pd, now)...), nil
	}
	if p.Secret != "" {
		// Fail early (before anything is sent) when copies cannot be signed.
		if _, err := verify.ResignWith(pd.scheme, pd.req, p.Secret, now, verify.Options{URL: pd.url}); err != nil {
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
	if at, ok := pd.scheme.SignedAt(d.Request()); ok {
		if tol := pd.scheme.Tolerance(); tol > 0 && now.Sub(at) > tol {
			out = append(out, fmt.Sprintf("delivery %d: its %s signature was made %s ago, beyond the %s tolerance; a handler that checks signature age will reject these copies (pass --secret to re-sign)",
				d.ID, provider, roundAge(now.Sub(at)), tol))
		}
	}
	if pd.edit != "" && !p.Raw && verify.Known(pd.scheme) && !onlyHostChanged(pd.req, d, pd.scheme) {
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
