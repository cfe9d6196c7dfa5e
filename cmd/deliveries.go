package cmd

// How commands name deliveries, in one place: the ID parser, the selector
// (IDs, --last, --event-id, --one-per-type, --shard) that show, replay,
// check, export and delete resolve through, and the filter flags list and
// export share.

import (
	"cmp"
	"context"
	"errors"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

// defaultLimit is how many rows list and runs show unless --limit says.
const defaultLimit = 50

// parseID reads the id of a delivery or a run ("42" or "#42", as list and
// runs print them).
func parseID(kind, s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "#"), 10, 64)
	if err != nil || id <= 0 {
		listing := "list"
		if kind == "run" {
			listing = "runs"
		}
		return 0, usageErr("invalid %s id %q: not a positive number, so not a %s id (see 'hookreplay %s')", kind, s, kind, listing)
	}
	return id, nil
}

// parseDeliveryIDs reads positional delivery ids.
func parseDeliveryIDs(args []string) ([]int64, error) {
	var ids []int64
	for _, a := range args {
		id, err := parseID("delivery", a)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// deliverySelector is how a command names the deliveries it works on:
// positional IDs, --last and --event-id. One rule for which capture is
// meant: --last is the newest capture; --event-id E is E's oldest capture
// (the provider's first delivery of the event; later ones are its retries).
type deliverySelector struct {
	IDs      []int64
	Last     bool
	EventIDs []string
	// OnlyProvider and OnlyType, when set (addSelectFilterFlags), narrow
	// --last and --event-id as list's --provider and --type do: --last
	// --provider stripe is the newest Stripe capture, not a stray request.
	OnlyProvider string
	OnlyType     string
	// OnlySource, from --source, narrows them to one capture's deliveries.
	OnlySource string
	// OnlySince, from --since, narrows them to deliveries received within
	// that long, as list's --since does.
	OnlySince time.Duration
	since     string
	// OnePerType (--one-per-type) selects the newest delivery of each
	// provider and event type the filters match, in that order.
	OnePerType    bool
	hasOnePerType bool // the command declares --one-per-type
	// handshakesLeft names the providers' handshakes --one-per-type left
	// out (handshakes.go).
	handshakesLeft []string
	// Shard (--shard K/N) keeps the K-th of N parts of the selection
	// (shard.go).
	Shard    shardSpec
	shardArg string
}

// addSelectFilterFlags declares --provider, --source, --type and --since,
// which narrow --last, --event-id and (declared before them) --one-per-type.
func (s *deliverySelector) addSelectFilterFlags(fl *pflag.FlagSet) {
	with := "with --last or --event-id: "
	if s.hasOnePerType {
		with = "with --last, --event-id or --one-per-type: "
	}
	fl.StringVar(&s.OnlyProvider, "provider", "", with+"only deliveries of this provider ("+providers(anyProvider)+")")
	fl.StringVar(&s.OnlySource, "source", "", with+"only deliveries captured with this capture --source name")
	fl.StringVar(&s.OnlyType, "type", "", with+"only event types matching this glob, e.g. 'invoice.*'")
	fl.StringVar(&s.since, "since", "", with+"only deliveries received within this long, e.g. 2h or 7d")
}

// addOnePerTypeFlag declares --one-per-type; verb says what the command
// does with the deliveries.
func (s *deliverySelector) addOnePerTypeFlag(fl *pflag.FlagSet, verb string) {
	s.hasOnePerType = true
	fl.BoolVar(&s.OnePerType, "one-per-type", false, verb+" the newest delivery of each provider and event type (narrowed by --since, --provider, --source, --type): of the --from files when given, else of the store")
}

// addShardFlag declares --shard K/N.
func (s *deliverySelector) addShardFlag(fl *pflag.FlagSet) {
	fl.StringVar(&s.shardArg, "shard", "", "K/N: only the K-th of N equal parts of the selected deliveries, the same parts on every machine and store (CI jobs side by side; join their JSON reports with 'hookreplay report merge')")
}

// validateFilters lower-cases --provider and refuses a malformed --type
// glob or filters with nothing to narrow, as list does.
func (s *deliverySelector) validateFilters() error {
	if err := checkEventIDs(s.EventIDs); err != nil {
		return err
	}
	p, err := providerFlag(s.OnlyProvider, anyProvider)
	if err != nil {
		return err
	}
	s.OnlyProvider = p
	if s.shardArg != "" {
		if s.Shard, err = parseShard(s.shardArg); err != nil {
			return err
		}
	}
	if s.since != "" {
		d, err := capture.ParseAge(s.since)
		if err != nil {
			return usageErr("--since: %v", err)
		}
		s.OnlySince = d
	}
	if s.OnlyProvider == "" && s.OnlySource == "" && s.OnlyType == "" && s.OnlySince == 0 {
		return nil
	}
	if !s.Last && len(s.EventIDs) == 0 && !s.OnePerType {
		if s.hasOnePerType {
			return usageErr("--provider, --source, --type and --since narrow --last, --event-id and --one-per-type: give one of them")
		}
		return usageErr("--provider, --source, --type and --since narrow --last and --event-id: give one of them")
	}
	if strings.Contains(s.OnlyType, "[") {
		if _, err := path.Match(s.OnlyType, ""); err != nil {
			return usageErr("--type %q: malformed glob (an unclosed [ ?)", s.OnlyType)
		}
	}
	return nil
}

// checkEventIDs refuses an empty --event-id: the store reads an empty
// event id as no filter at all, so 'delete --event-id ""' would name the
// oldest delivery of any event.
func checkEventIDs(ids []string) error {
	for _, e := range ids {
		if strings.TrimSpace(e) == "" {
			return usageErr("--event-id is empty: give a provider event id, e.g. --event-id evt_1Nq2 (see 'hookreplay list')")
		}
	}
	return nil
}

// filtered says which filters narrowed --last and --event-id, for messages.
func (s *deliverySelector) filtered() string {
	var f []string
	if s.OnlyProvider != "" {
		f = append(f, "--provider "+s.OnlyProvider)
	}
	if s.OnlySource != "" {
		f = append(f, "--source "+s.OnlySource)
	}
	if s.OnlyType != "" {
		f = append(f, "--type "+s.OnlyType)
	}
	if s.since != "" {
		f = append(f, "--since "+s.since)
	}
	return strings.Join(f, " ")
}

// addLastFlag declares --last; verb says what the command does with it.
func (s *deliverySelector) addLastFlag(fl *pflag.FlagSet, verb string) {
	fl.BoolVar(&s.Last, "last", false, verb+" the newest captured delivery")
}

// addEventIDFlag declares the repeatable --event-id of replay and check.
func (s *deliverySelector) addEventIDFlag(fl *pflag.FlagSet, verb string) {
	fl.StringArrayVar(&s.EventIDs, "event-id", nil, verb+" the (oldest) capture of this provider event id (repeatable)")
}

// maxBatchCandidates bounds the deliveries laterEventID reads whose body
// holds the id it looks for.
const maxBatchCandidates = 50

// laterEventID finds the oldest delivery that carries event id e as one of
// several (a WhatsApp POST batching messages, whose event_id is the first):
// among the deliveries whose body holds e, the first that lists it.
func (s *deliverySelector) laterEventID(ctx context.Context, st *store.Store, e string) ([]*store.Delivery, error) {
	found, err := st.ListDeliveries(ctx, s.narrow(store.Filter{Text: e, Oldest: true, Limit: maxBatchCandidates}))
	if err != nil {
		return nil, err
	}
	for _, d := range found {
		if slices.Contains(report.SeveralEventIDs(d.EventID, d.Identity), e) {
			return []*store.Delivery{d}, nil
		}
	}
	return nil, nil
}

// given is how many of the ways (IDs, --last, --event-id, --one-per-type)
// were used.
func (s *deliverySelector) given() int {
	n := 0
	for _, used := range []bool{len(s.IDs) > 0, s.Last, len(s.EventIDs) > 0, s.OnePerType} {
		if used {
			n++
		}
	}
	return n
}

// load resolves the selection: the IDs in the order given, then --last,
// then each --event-id, then --one-per-type's, by provider and event type.
// --shard is applied by the caller (shard), once every source of
// deliveries (a --from file too) is read.
func (s *deliverySelector) load(ctx context.Context, st *store.Store) ([]*store.Delivery, error) {
	var out []*store.Delivery
	for _, id := range s.IDs {
		d, err := getDelivery(ctx, st, id)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	if s.Last && s.filtered() != "" {
		found, err := st.ListDeliveries(ctx, s.narrow(store.Filter{Limit: 1}))
		if err != nil {
			return nil, setupErr("%v", err)
		}
		if len(found) == 0 {
			return nil, usageErr("--last %s: no captured delivery matches (see 'hookreplay list %s')", s.filtered(), s.filtered())
		}
		out = append(out, found[0])
	} else if s.Last {
		d, err := st.LastDelivery(ctx)
		if errors.Is(err, store.ErrNotFound) {
			return nil, usageErr("--last: no deliveries captured yet in %s (start with 'hookreplay capture')", st.Path())
		}
		if err != nil {
			return nil, setupErr("%v", err)
		}
		out = append(out, d)
	}
	for _, e := range s.EventIDs {
		found, err := st.ListDeliveries(ctx, s.narrow(store.Filter{EventID: e, Oldest: true, Limit: 1}))
		if err == nil && len(found) == 0 {
			found, err = s.laterEventID(ctx, st, e)
		}
		if err != nil {
			return nil, setupErr("%v", err)
		}
		if len(found) == 0 && s.filtered() != "" {
			return nil, usageErr("no captured delivery has event id %q with %s (see 'hookreplay list')", e, s.filtered())
		}
		if len(found) == 0 {
			return nil, usageErr("no captured delivery has event id %q (see 'hookreplay list')", e)
		}
		out = append(out, found[0])
	}
	if s.OnePerType {
		found, err := st.ListDeliveries(ctx, s.narrow(store.Filter{OnePerType: true}))
		if err != nil {
			return nil, setupErr("%v", err)
		}
		sel := strings.TrimSpace("--one-per-type " + s.filtered())
		if len(found) == 0 {
			return nil, usageErr("%s: no captured delivery with an event type matches (see 'hookreplay list %s')", sel, sel)
		}
		if found, s.handshakesLeft = withoutHandshakes(found); len(found) == 0 {
			return nil, onlyHandshakesErr(sel, s.handshakesLeft)
		}
		slices.SortStableFunc(found, func(a, b *store.Delivery) int {
			return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.EventType, b.EventType))
		})
		out = append(out, found...)
	}
	return out, nil
}

// onePerTypeOf is --one-per-type (and its filters) over deliveries read
// from files, in provider and event-type order, as load orders the store's.
func (s *deliverySelector) onePerTypeOf(ds []*store.Delivery) ([]*store.Delivery, error) {
	found := store.Select(ds, s.narrow(store.Filter{OnePerType: true}))
	sel := strings.TrimSpace("--one-per-type " + s.filtered())
	if len(found) == 0 {
		return nil, usageErr("%s: no delivery with an event type in the --from files matches", sel)
	}
	if found, s.handshakesLeft = withoutHandshakes(found); len(found) == 0 {
		return nil, onlyHandshakesErr(sel, s.handshakesLeft)
	}
	slices.SortStableFunc(found, func(a, b *store.Delivery) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.EventType, b.EventType))
	})
	return found, nil
}

// narrow adds --provider, --source, --type and --since to f.
func (s *deliverySelector) narrow(f store.Filter) store.Filter {
	f.Provider, f.Source, f.TypeGlob = s.OnlyProvider, s.OnlySource, s.OnlyType
	if s.OnlySince > 0 {
		f.Since = time.Now().Add(-s.OnlySince)
	}
	return f
}

// getDelivery reads delivery id; a missing one is a usage error.
func getDelivery(ctx context.Context, st *store.Store, id int64) (*store.Delivery, error) {
	d, err := st.GetDelivery(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, usageErr("no delivery %d", id)
	}
	if err != nil {
		return nil, setupErr("%v", err)
	}
	return d, nil
}

// deliveryFilter is the filter flags list and export share, declared and
// validated once.
type deliveryFilter struct {
	Provider string
	Source   string
	TypeGlob string
	EventIDs []string
	Since    time.Duration
	since    string // --since as typed, parsed by validate
	// OnePerType (--one-per-type, list and export) keeps the newest of
	// each provider and event type, as check --one-per-type picks them.
	OnePerType bool
}

// addOnePerTypeFlag declares list's and export's --one-per-type.
func (f *deliveryFilter) addOnePerTypeFlag(fl *pflag.FlagSet) {
	fl.BoolVar(&f.OnePerType, "one-per-type", false, "only the newest delivery of each provider and event type (what 'check --one-per-type' picks)")
}

// addFilterFlags declares --provider, --source, --type, --event-id and --since.
func (f *deliveryFilter) addFilterFlags(fl *pflag.FlagSet) {
	fl.StringVar(&f.Provider, "provider", "", "only this provider ("+providers(anyProvider)+")")
	fl.StringVar(&f.Source, "source", "", "only deliveries captured with this capture --source name (by default a capture's host name)")
	fl.StringVar(&f.TypeGlob, "type", "", "only event types matching this glob, e.g. 'invoice.*'")
	fl.StringArrayVar(&f.EventIDs, "event-id", nil, "only deliveries of this event id (repeatable)")
	fl.StringVar(&f.since, "since", "", "only deliveries received within this long, e.g. 2h or 7d")
}

// validate parses --since, lower-cases --provider (stored provider names are
// lower case: --provider GitHub means github) and rejects a malformed --type
// glob, which would otherwise match nothing without saying why.
func (f *deliveryFilter) validate() error {
	if err := checkEventIDs(f.EventIDs); err != nil {
		return err
	}
	if f.since != "" {
		d, err := capture.ParseAge(f.since)
		if err != nil {
			return usageErr("--since: %v", err)
		}
		f.Since = d
	}
	p, err := providerFlag(f.Provider, anyProvider)
	if err != nil {
		return err
	}
	f.Provider = p
	if strings.Contains(f.TypeGlob, "[") {
		if _, err := path.Match(f.TypeGlob, ""); err != nil {
			return usageErr("--type %q: malformed glob (an unclosed [ ?)", f.TypeGlob)
		}
	}
	return nil
}

// set reports whether any filter was given.
func (f *deliveryFilter) set() bool {
	return f.Provider != "" || f.Source != "" || f.TypeGlob != "" || len(f.EventIDs) > 0 || f.Since > 0 || f.OnePerType
}

// storeFilter is the store query for the filters, --since counted back
// from now. An --event-id that is one of several a delivery carries (a
// WhatsApp batch's later wamid) selects that delivery, as check's does.
func (f *deliveryFilter) storeFilter(ctx context.Context, st *store.Store, now time.Time) (store.Filter, error) {
	sf := store.Filter{Provider: f.Provider, Source: f.Source, TypeGlob: f.TypeGlob, EventIDs: f.EventIDs, OnePerType: f.OnePerType}
	if f.Since > 0 {
		sf.Since = now.Add(-f.Since)
	}
	if len(f.EventIDs) > 0 {
		ids, err := st.BatchEventIDs(ctx, f.EventIDs)
		if err != nil {
			return sf, setupErr("%v", err)
		}
		sf.EventIDs = ids
	}
	return sf, nil
}
