package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/tui"
)

type tuiOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	// Check holds check's engine flags (--to, probes, phases, timing,
	// --secret): c in the TUI checks the selected deliveries with them.
	Check checkOptions
	// Filter is list's filter flags: the view starts filtered by them.
	Filter deliveryFilter
	// target is --to parsed; nil when no check flags were given.
	target *url.URL
}

// tuiCheckSetup is what the check view says when tui got no check flags.
const tuiCheckSetup = `c checks the selected deliveries with the flags 'hookreplay check' takes, given
to 'hookreplay tui' (they are not asked for here). For example:

  hookreplay tui --to http://127.0.0.1:3000/webhooks \
    --probe-sql "SELECT count(*) FROM orders" --dsn sqlite:./app.db \
    --secret-env STRIPE_WEBHOOK_SECRET

See 'hookreplay check --help' for every probe and option. esc goes back.`

func newTUICmd(f *factory, runF func(*tuiOptions) error) *cobra.Command {
	o := &tuiOptions{IO: f.IO, Store: f.ExistingStore}
	o.Check.IO = f.IO
	var phases string
	cmd := &cobra.Command{
		Use:   "tui [check flags]",
		Short: "Browse, inspect, replay and check deliveries interactively",
		Long: `An interactive view of the database: deliveries appear live as 'hookreplay
capture' stores them (in another terminal, or run 'capture --tui'); enter
shows a delivery's headers, body, exact wire bytes, captured response,
signature and past attempts; r replays it at once (where it was last sent,
else --to; under capture --tui --forward, where capture forwards it), o opens
the replay form, E edits a copy (in $EDITOR or in place) and replays it, y
copies it as curl, its body or its headers, c checks, R lists past runs, /
filters (provider:stripe type:'invoice.*' event-id:E since:2h status:5xx
header:x-github-event=push, other words: body text; list's --provider,
--type, --event-id and --since start it filtered); ? lists every key.

c runs 'hookreplay check' on the selected deliveries with the check flags
given here (--to, --probe-sql/--dsn, --probe-cmd, --probe-http, --sink,
--phases, ...); without them it opens a form to set the check up, remembered
in the database and, given a name, saved to hookreplay.yaml. --secret also
verifies signatures in the delivery view and re-signs replays.`,
		Example: `  hookreplay tui
  hookreplay tui --provider stripe --type 'invoice.*' --since 2h
  hookreplay tui --db ci.db --secret-env STRIPE_WEBHOOK_SECRET
  hookreplay tui --to http://127.0.0.1:3000/webhooks --probe-sql 'SELECT count(*) FROM orders' --dsn sqlite:app.db`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(o.Filter.EventIDs) > 1 {
				return usageErr("tui: give one --event-id (the view filters by one)")
			}
			if err := o.Filter.validate(); err != nil {
				return err
			}
			if err := checkEngineArgs(cmd, &o.Check, phases); err != nil {
				return err
			}
			if tuiChecks(&o.Check) {
				u, err := checkValidateEngine(&o.Check)
				if err != nil {
					return err
				}
				o.target = u
			} else if o.Check.To != "" {
				// --to alone: where r replays; c needs probes too.
				if _, err := handlerAddr("--to", o.Check.To); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(o)
			}
			return redactExit(tuiRun(cmd.Context(), o, nil), &o.Check.secrets)
		},
	}
	o.Filter.addFilterFlags(cmd.Flags())
	checkEngineFlags(cmd.Flags(), &o.Check, &phases)
	// The view starts without --to; it is where c sends, not a requirement.
	cmd.Flags().Lookup("to").Usage = "the handler's URL that c (check) sends to, e.g. http://localhost:3000/webhooks or 3000/webhooks; a bare port means http://127.0.0.1:PORT"
	return cmd
}

// tuiQuery writes list's filter flags in the view's / language, so the view
// starts filtered and the filter can be edited there.
func tuiQuery(f *deliveryFilter) string {
	var q []string
	add := func(name, v string) {
		if v == "" {
			return
		}
		if strings.ContainsAny(v, " '\"") {
			v = "'" + strings.ReplaceAll(v, "'", "") + "'"
		}
		q = append(q, name+":"+v)
	}
	add("provider", f.Provider)
	add("source", f.Source)
	add("type", f.TypeGlob)
	for _, e := range f.EventIDs {
		add("event-id", e)
	}
	add("since", f.since)
	return strings.Join(q, " ")
}

// tuiChecks reports whether a probe was given (then --to is required and
// everything is checked as for check). --to alone is where r replays.
func tuiChecks(o *checkOptions) bool {
	return !checkProbeSpecs(o).Empty() || o.DSN != ""
}

// tuiCheckFunc checks deliveries of st with co against target, for c.
func tuiCheckFunc(st *store.Store, co *checkOptions, target *url.URL) tui.CheckFunc {
	return func(ctx context.Context, ids []int64, obs check.Observer) (*report.Check, error) {
		var ds []*store.Delivery
		for _, id := range ids {
			d, err := st.GetDelivery(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				return nil, fmt.Errorf("delivery %d is gone (deleted)", id)
			}
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		c, err := checkEngine(ctx, co, target, st, ds, obs)
		if err != nil {
			return c, redactExit(err, &co.secrets)
		}
		return c, nil
	}
}

// tuiSession is what capture --tui adds to a TUI session.
type tuiSession struct {
	store  *store.Store
	notes  <-chan string
	banner string
	// forward is capture's --forward: r in the TUI replays there.
	forward string
}

func tuiRun(ctx context.Context, o *tuiOptions, s *tuiSession) error {
	var st *store.Store
	if s != nil {
		st = s.store
	} else {
		var err error
		if st, err = o.Store(); err != nil {
			return err
		}
		defer st.Close()
	}
	if !o.IO.IsTerminal() {
		return usageErr("tui needs a terminal (in scripts use 'hookreplay list' and 'hookreplay show')")
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	opts := tui.Options{Store: st, DBPath: st.Path(), Secret: o.Check.Secret, In: o.IO.In, Out: o.IO.Out,
		NoColor: noColor || !o.IO.ColorEnabled(), Target: o.Check.To, CheckSetup: tuiCheckSetup,
		Filter: tuiQuery(&o.Filter)}
	if s != nil {
		opts.Notes, opts.Banner, opts.Forward = s.notes, s.banner, s.forward
	}
	if o.target != nil {
		opts.Check = tuiCheckFunc(st, &o.Check, o.target)
	} else {
		// c sets the check up in a form; cmd maps it onto check's options
		// as it maps a check of hookreplay.yaml.
		opts.NewCheck = func(c *config.Check) (tui.CheckFunc, error) {
			co, err := checkOptionsFromConfig(ctx, &o.Check, c)
			if err != nil {
				return nil, err
			}
			u, err := checkValidateEngine(co)
			if err != nil {
				return nil, err
			}
			return tuiCheckFunc(st, co, u), nil
		}
		opts.ConfigPath = config.Find(".")
	}
	if err := tui.Run(ctx, opts); err != nil {
		return setupErr("%v", err)
	}
	return nil
}
