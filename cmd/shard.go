package cmd

// --shard K/N: the K-th of N parts of a selection of deliveries, the same
// parts on every machine and store. A CI matrix runs one job per part, each
// writing its own reports; 'hookreplay report merge' joins them.

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// maxShards bounds --shard's N: more CI jobs than this is a typo.
const maxShards = 1000

// shardSpec is --shard K/N; the zero value is no sharding.
type shardSpec struct{ K, N int }

// set reports whether --shard was given.
func (s shardSpec) set() bool { return s.N > 0 }

// String is the spec as --shard takes it.
func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// parseShard reads --shard K/N (1 ≤ K ≤ N ≤ maxShards).
func parseShard(arg string) (shardSpec, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(arg), "/")
	ki, err1 := strconv.Atoi(k)
	ni, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return shardSpec{}, usageErr("--shard %q: want K/N, the K-th of N parts, e.g. --shard 2/4", arg)
	}
	if ni < 1 || ni > maxShards || ki < 1 || ki > ni {
		return shardSpec{}, usageErr("--shard %q: K must be 1 to N and N 1 to %d, e.g. --shard 2/4", arg, maxShards)
	}
	return shardSpec{K: ki, N: ni}, nil
}

// shardedSelection is what a shard was cut from, recorded in its run's
// options so that 'report merge' can refuse shards of different selections.
type shardedSelection struct {
	Spec shardSpec
	// Selected is how many deliveries the whole selection held; Digest
	// names that set (a SHA-256 of the deliveries' keys, sorted).
	Selected int
	Digest   string
}

// options are the run options that record the selection.
func (s shardedSelection) options() map[string]any {
	return map[string]any{"shard": s.Spec.String(), "selected": s.Selected, "selection": s.Digest}
}

// shardKey names a delivery by what it is, never by its id, which differs
// between stores (an export imported elsewhere, SQLite and Postgres): its
// provider, event type, event id and a hash of its exact wire bytes.
func shardKey(d *store.Delivery) string {
	sum := sha256.Sum256(d.Raw)
	return d.Provider + "\x00" + d.EventType + "\x00" + d.EventID + "\x00" + hex.EncodeToString(sum[:])
}

// shard keeps sp's part of ds, in ds's order. The selection is ordered by
// shardKey and dealt out in turn, so the parts differ in size by one at
// most and are the same wherever the same deliveries are selected; what
// the whole selection was is returned for the run's options. A delivery
// selected twice (an id and --last naming it) counts once.
func shard(ds []*store.Delivery, sp shardSpec) ([]*store.Delivery, shardedSelection) {
	keys := make(map[*store.Delivery]string, len(ds))
	var uniq []string
	seen := map[string]bool{}
	for _, d := range ds {
		k := shardKey(d)
		keys[d] = k
		if !seen[k] {
			seen[k] = true
			uniq = append(uniq, k)
		}
	}
	slices.SortFunc(uniq, cmp.Compare)
	part := make(map[string]bool, len(uniq)/sp.N+1)
	h := sha256.New()
	for i, k := range uniq {
		h.Write([]byte(k + "\n"))
		if i%sp.N == sp.K-1 {
			part[k] = true
		}
	}
	var out []*store.Delivery
	for _, d := range ds {
		if k := keys[d]; part[k] {
			out = append(out, d)
			delete(part, k)
		}
	}
	return out, shardedSelection{Spec: sp, Selected: len(uniq), Digest: hex.EncodeToString(h.Sum(nil))[:16]}
}

// emptyShardReport is the report of a shard that no selected delivery fell
// to (--shard 4/4 of three deliveries): nothing was sent or judged, and it
// passes, so that a CI matrix of a fixed size stays green on a quiet day
// and 'report merge' finds every part.
func emptyShardReport(o *checkOptions, u *url.URL) *report.Check {
	now := time.Now().UTC()
	sel := o.selection
	return &report.Check{
		SchemaVersion: report.SchemaVersion, Target: u.String(), StartedAt: now, FinishedAt: now,
		Verdict: report.VerdictPass, Options: checkRunOptions(o), Probes: []string{}, Deliveries: []report.DeliveryResult{},
		Notes: []string{fmt.Sprintf("shard %s: none of the %d selected deliveries falls to this part", sel.Spec, sel.Selected)},
	}
}
