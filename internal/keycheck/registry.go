package keycheck

import (
	"context"

	"github.com/hookreplay/hookreplay/internal/report"
)

// Check names: the report's, --checks' and the JSON's.
const (
	nameFirst           = "first"
	nameReplay          = "replay"
	nameReplayHeader    = "replay-header"
	nameLost            = "lost"
	nameBurst           = "burst"
	nameInFlight        = "in-flight"
	nameReuseBody       = "reuse-body"
	nameReuseWhitespace = "reuse-whitespace"
	nameReuseQuery      = "reuse-query"
	nameReuseMethod     = "reuse-method"
	nameNoKey           = "no-key"
	nameSafeGet         = "safe-get"
	nameMethods         = "methods"
	name5xx             = "5xx"
	name4xx             = "4xx"
	nameKeyLength       = "key-length"
	nameScope           = "scope"
	nameOutage          = "outage"
	nameExpiry          = "expiry"
)

// checkDef is one entry of the registry: adding a check is one file with
// its run function and one entry here.
type checkDef struct {
	name string
	// needs are the inputs without which the check is skipped.
	needs []Input
	// about says what the check proves (help, docs).
	about string
	// fresh: the check starts from a fresh operation (the body with a
	// fresh key, effect E) and needs no earlier check's key: the reset
	// command runs before it, as the API's state may refuse a second
	// operation (a unique email, a balance).
	fresh bool
	run   func(r *runner, ctx context.Context) (*report.KeyCheckResult, error)
}

// registry is every check in run and report order. first always runs:
// every other check is judged against its effect E.
var registry = []checkDef{
	{name: nameFirst, about: "the body with a fresh key: 2xx and the probes change by E", run: (*runner).checkFirst},
	{name: nameReplay, about: "the same key and bytes 3 times: the stored status and body, effect +0", run: (*runner).checkReplay},
	{name: nameReplayHeader, needs: []Input{InputReplayHeader}, about: "replays carry the profile's replay header, the first answer does not", run: (*runner).checkReplayHeader},
	{name: nameLost, fresh: true, about: "the first answer lost, then the retry: effect E once, the stored answer", run: (*runner).checkLost},
	{name: nameBurst, fresh: true, about: "copies with one key, last bytes released together: effect E once, no second 2xx", run: (*runner).checkBurst},
	{name: nameInFlight, fresh: true, needs: []Input{InputSlowBody}, about: "a copy while the slow body runs: the in-flight status, effect E once", run: (*runner).checkInFlight},
	{name: nameReuseBody, fresh: true, about: "the key with another body: the reuse status, effect +0", run: (*runner).checkReuseBody},
	{name: nameReuseWhitespace, fresh: true, about: "the key with the same JSON and extra spaces: the reuse status, effect +0", run: (*runner).checkReuseWhitespace},
	{name: nameReuseQuery, fresh: true, about: "the key with an extra query parameter: the reuse status, effect +0", run: (*runner).checkReuseQuery},
	{name: nameReuseMethod, fresh: true, about: "the key with another method: the reuse status, effect +0", run: (*runner).checkReuseMethod},
	{name: nameNoKey, fresh: true, about: "the body twice without a key: effect 2E", run: (*runner).checkNoKey},
	{name: nameSafeGet, about: "GET with a key, twice: 2xx, no replay header, no conflict", run: (*runner).checkSafeGet},
	{name: nameMethods, needs: []Input{InputAlso}, about: "each other route twice with one key: its effect once, the stored answer", run: (*runner).checkMethods},
	{name: name5xx, fresh: true, needs: []Input{InputFailBody}, about: "a 5xx, then the same retry: the retry runs (stripe: the stored 5xx)", run: (*runner).check5xx},
	{name: name4xx, fresh: true, needs: []Input{InputInvalidBody}, about: "a 4xx twice, then a valid body with the key: whether the 4xx is kept (info)", run: (*runner).check4xx},
	{name: nameKeyLength, fresh: true, needs: []Input{InputMaxKeyLength}, about: "a key one character over the maximum: the profile's status, effect +0; if accepted, kept whole", run: (*runner).checkKeyLength},
	{name: nameScope, fresh: true, needs: []Input{InputOtherAccount}, about: "the same key and body from another account: its own operation, never the first account's answer", run: (*runner).checkScope},
	{name: nameOutage, fresh: true, needs: []Input{InputStoreCmds}, about: "the idempotency store down: 503 before doing anything", run: (*runner).checkOutage},
	{name: nameExpiry, fresh: true, needs: []Input{InputTTL}, about: "the key again after the TTL: a new operation", run: (*runner).checkExpiry},
}

// Check describes one check of the registry.
type Check struct {
	Name  string
	Needs []Input
	About string
}

// Checks lists every check in run order.
func Checks() []Check {
	out := make([]Check, len(registry))
	for i, c := range registry {
		out[i] = Check{Name: c.name, Needs: c.needs, About: c.about}
	}
	return out
}

// CheckNames lists every check's name in run order.
func CheckNames() []string {
	out := make([]string, len(registry))
	for i, c := range registry {
		out[i] = c.name
	}
	return out
}

// unmet says why check c cannot run with these inputs ("" : it can).
func (r *runner) unmet(c checkDef) string {
	for _, in := range c.needs {
		if r.has(in) {
			continue
		}
		switch in {
		case InputReplayHeader:
			return "skip: " + r.o.Profile.title() + " defines no replay header; give " + r.name(InputReplayHeader) + " NAME to check one"
		case InputMaxKeyLength:
			return "skip: " + r.o.Profile.title() + " sets no maximum key length; give " + r.name(InputMaxKeyLength) + " N to check one"
		}
		return "skip: needs " + r.name(in)
	}
	return ""
}

func (r *runner) has(in Input) bool {
	switch in {
	case InputSlowBody:
		return r.o.SlowBody != nil
	case InputFailBody:
		return r.o.FailBody != nil
	case InputInvalidBody:
		return r.o.InvalidBody != nil
	case InputAlso:
		return len(r.o.Also) > 0
	case InputOtherAccount:
		return len(r.o.OtherAccount) > 0
	case InputStoreCmds:
		return r.o.StoreDownCmd != "" && r.o.StoreUpCmd != ""
	case InputTTL:
		return r.o.TTL > 0
	case InputReplayHeader:
		return r.o.Profile.ReplayHeader != ""
	case InputMaxKeyLength:
		return r.o.Profile.MaxKeyLength > 0
	}
	return true
}
