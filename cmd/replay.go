package cmd

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type replayOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	deliverySelector
	To           string
	N            int
	Concurrency  int
	Order        string
	Seed         int64
	Secret       string
	SecretEnv    string
	Raw          bool
	LoseResponse int
	LoseEarly    bool
	Schedule     string
	Speedup      float64
	Timeout      time.Duration
	JSON         bool
	Quiet        bool
	jsonOut      *jsonOutput // --json FIELDS, --jq, --template
	SetHeaders   []string
	DropHeaders  []string
	BodyFile     string
	JSONSet      []string
	Edit         bool
	Insecure     bool

	target *url.URL
	edits  replay.Edits
}

func newReplayCmd(f *factory, runF func(*replayOptions) error) *cobra.Command {
	o := &replayOptions{IO: f.IO, Store: f.ExistingWritableStore}
	cmd := &cobra.Command{
		Use:   "replay [ID...] --to URL",
		Short: "Resend stored deliveries the way providers do: copies, bursts, lost answers, retries",
		Long: `Replay sends copies of captured deliveries to --to and records every attempt
(see 'hookreplay runs'). Each copy is rebuilt from the stored request: same
method, headers in their stored order and case, byte-identical body; only Host
and the request-target change. The request goes to the stored path and query
when --to has no path (http://localhost:3000), else to --to's path (with --to's
query, or the stored one). --raw sends the exact stored wire bytes instead,
rewriting only the Host header when the host differs. --set-header 'Host: NAME'
sends that Host header instead of --to's (a virtual host), still connecting
to --to.

With --secret every copy is re-signed with a fresh timestamp; without it the
original signature is kept (and you are warned when it is older than the
provider's tolerance).

Orders: seq sends copies one after another (--concurrency N at a time);
burst opens every connection, writes every copy but its last byte and then
releases all last bytes together (the spread between the first and last
complete request is reported); shuffle mixes all copies of all deliveries in a
random order reproducible with --seed; reverse sends deliveries newest-given
first.

Exit status: 0 when the run completed (whatever the handler answered), 2 for
usage errors or when no copy could connect at all, 130 when interrupted (143
on SIGTERM, 129 on SIGHUP).`,
		Example: `  hookreplay replay 42 --to http://localhost:3000/webhooks/stripe -n 10
  hookreplay replay --last --to http://localhost:3000 -n 20 --order burst --secret-env STRIPE_WEBHOOK_SECRET
  hookreplay replay 41 42 43 --to http://localhost:3000 -n 3 --order shuffle --seed 7
  hookreplay replay 42 --to http://localhost:3000 --lose-response 1 --schedule stripe --speedup 3600
  hookreplay replay 42 --to http://localhost:3000 --json-set data.object.amount_paid=9900 --secret whsec_...
  hookreplay replay --event-id evt_1PqR2s --to http://localhost:3000 --raw --json | jq .summary
  hookreplay replay 42 --to https://localhost:8443/webhooks --insecure`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseDeliveryIDs(args)
			if err != nil {
				return err
			}
			for i, id := range ids {
				if slices.Contains(ids[:i], id) {
					// Twice would be two "copy 1" of one delivery; -n is how copies are asked for.
					return usageErr("delivery %d is given twice; use -n for more copies of it", id)
				}
			}
			o.IDs = ids
			if err := o.validateFilters(); err != nil {
				return err
			}
			if err := replayValidate(o, cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return replayRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	o.addLastFlag(fl, "replay")
	o.addEventIDFlag(fl, "replay")
	o.addSelectFilterFlags(fl)
	urlFlag(fl, &o.To, "to", "", "handler URL to send copies to (required), e.g. http://localhost:3000/webhooks or 3000/webhooks")
	fl.IntVarP(&o.N, "copies", "n", 1, "copies of each delivery")
	fl.IntVar(&o.Concurrency, "concurrency", 1, "copies in flight at once (seq, shuffle, reverse)")
	fl.StringVar(&o.Order, "order", "seq", "seq, burst, shuffle or reverse")
	fl.Int64Var(&o.Seed, "seed", 0, "seed for --order shuffle (default: random, printed)")
	fl.StringVar(&o.Secret, "secret", "", "provider signing secret: re-sign every copy with a fresh timestamp")
	fl.StringVar(&o.SecretEnv, "secret-env", "", "read the signing secret from this environment variable")
	fl.BoolVar(&o.Raw, "raw", false, "send the stored wire bytes unchanged (only Host rewritten when it differs)")
	fl.IntVar(&o.LoseResponse, "lose-response", 0, "for the first K copies, hang up without reading the answer")
	fl.BoolVar(&o.LoseEarly, "lose-early", false, "with --lose-response, hang up right after the request instead of once the answer arrived")
	fl.StringVar(&o.Schedule, "schedule", "none", "after a non-2xx, lost or failed copy, retry on this provider's timetable: "+scheduleHelp())
	fl.Float64Var(&o.Speedup, "speedup", 3600, "compress --schedule by this factor (3600: an hour passes in a second)")
	fl.DurationVar(&o.Timeout, "timeout", 30*time.Second, "per request: connect, send and wait for the answer")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "no line per copy while sending; only the summary")
	o.jsonOut = addJSONFlags(fl, &o.JSON, "the run (attempts and summary) as one document").knownFields(report.ReplayDoc{})
	fl.StringArrayVar(&o.SetHeaders, "set-header", nil, "set a header on every copy, 'Name: value' (repeatable; 'Host: NAME' is sent as is while connecting to --to)")
	fl.StringArrayVar(&o.DropHeaders, "drop-header", nil, "remove a header from every copy (repeatable)")
	fl.StringVar(&o.BodyFile, "body-file", "", "replace the body with this file's bytes")
	fl.StringArrayVar(&o.JSONSet, "json-set", nil, "set a JSON field, path=value (e.g. data.object.amount_paid=9900; repeatable)")
	fl.BoolVar(&o.Edit, "edit", false, "edit each request in $EDITOR before replaying it")
	fl.BoolVar(&o.Insecure, "insecure", false, "accept any TLS certificate from an https --to (a self-signed handler)")
	return cmd
}

// replayTLS is the TLS configuration of an https --to: nil verifies the
// certificate against the system roots; --insecure accepts any certificate.
func replayTLS(insecure bool) *tls.Config {
	if !insecure {
		return nil
	}
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
}

// replayValidate catches usage errors before the store is opened.
func replayValidate(o *replayOptions, cmd *cobra.Command) error {
	if o.To == "" {
		return usageErr("--to URL is required: where the handler listens, e.g. --to http://localhost:3000/webhooks")
	}
	u, err := handlerAddr("--to", o.To)
	if err != nil {
		return err
	}
	o.target = u
	switch sources := o.given(); {
	case sources == 0:
		return usageErr("which delivery? give an ID (see 'hookreplay list'), --last or --event-id E")
	case sources > 1:
		return usageErr("give delivery IDs, --last or --event-id, not several of them")
	}
	if err := replayValidateSending(o, cmd); err != nil {
		return err
	}
	secret, err := secretFlags(o.Secret, o.SecretEnv)
	if err != nil {
		return err
	}
	o.Secret = secret
	if err := replayEdits(o); err != nil {
		return err
	}
	if o.Raw && (!o.edits.Empty() || o.Edit) {
		return usageErr("--raw sends the stored bytes unchanged; drop --raw to edit copies")
	}
	if o.Raw && o.Secret != "" {
		return usageErr("--raw sends the stored bytes unchanged; drop --raw to re-sign copies with --secret")
	}
	if o.Order == string(replay.OrderBurst) && cmd.Flags().Changed("concurrency") {
		return usageErr("--concurrency does not apply to --order burst (every copy is in flight at once)")
	}
	if o.Edit && o.JSON {
		return usageErr("--edit is interactive; it cannot be combined with --json")
	}
	return nil
}

// replayValidateSending checks how copies are sent: how many, how many at
// once, in what order, on what retry timetable, and which answers are lost.
func replayValidateSending(o *replayOptions, cmd *cobra.Command) error {
	if err := intFlagIn("-n", o.N, 1, maxCopies); err != nil {
		return err
	}
	if err := intFlagIn("--concurrency", o.Concurrency, 1, maxConcurrency); err != nil {
		return err
	}
	if _, err := replay.ParseOrder(o.Order); err != nil {
		return usageErr("--order: %v", err)
	}
	if cmd.Flags().Changed("seed") && o.Order != string(replay.OrderShuffle) {
		return usageErr("--seed only applies to --order shuffle")
	}
	if _, err := replay.LookupSchedule(o.Schedule); err != nil {
		return usageErr("--schedule: %v", err)
	}
	if err := speedupIn(o.Speedup); err != nil {
		return err
	}
	if err := durationFlagIn("--timeout", o.Timeout, 1, maxDuration); err != nil {
		return err
	}
	if err := intFlagIn("--lose-response", o.LoseResponse, 0, maxCopies); err != nil {
		return err
	}
	if o.LoseEarly && o.LoseResponse == 0 {
		return usageErr("--lose-early needs --lose-response K")
	}
	return nil
}

// replayEdits parses --set-header, --drop-header, --json-set and --body-file
// into the edits applied to every copy.
func replayEdits(o *replayOptions) error {
	for _, h := range o.SetHeaders {
		hd, err := message.ParseHeaderLine(h)
		if err != nil {
			return usageErr("--set-header: %v", err)
		}
		o.edits.SetHeaders = append(o.edits.SetHeaders, hd)
	}
	o.edits.DropHeaders = o.DropHeaders
	o.edits.JSONSet = o.JSONSet
	for _, s := range o.JSONSet {
		if p, _, ok := strings.Cut(s, "="); !ok || p == "" {
			return usageErr("--json-set %q: want path=value, e.g. data.object.amount_paid=9900", s)
		}
	}
	if o.BodyFile != "" {
		b, err := readBodyFile("--body-file", o.BodyFile)
		if err != nil {
			return err
		}
		o.edits.Body, o.edits.BodyFile = b, o.BodyFile
	}
	return nil
}

func replayRun(ctx context.Context, o *replayOptions) error {
	tuneGC()
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	ds, err := o.load(ctx, st)
	if err != nil {
		return err
	}
	plan := replay.Plan{
		Deliveries:   ds,
		Target:       replay.Target{URL: o.target, Timeout: o.Timeout, TLS: replayTLS(o.Insecure)},
		Copies:       o.N,
		Order:        replay.Order(o.Order),
		Seed:         o.Seed,
		Concurrency:  o.Concurrency,
		LoseResponse: o.LoseResponse,
		LoseEarly:    o.LoseEarly,
		Schedule:     o.Schedule,
		Speedup:      o.Speedup,
		Edits:        o.edits,
		Secret:       o.Secret,
		Raw:          o.Raw,
	}
	if o.Edit {
		plan.Overrides = map[int64]replay.Override{}
		for _, d := range ds {
			req, desc, err := replay.EditInEditor(d.Request(), o.IO.In, o.IO.Out, o.IO.ErrOut)
			if err != nil {
				return usageErr("delivery %d: %v", d.ID, err)
			}
			if desc != "" {
				plan.Overrides[d.ID] = replay.Override{Req: req, Desc: desc}
			}
		}
	}
	job, err := replay.Prepare(plan)
	if err != nil {
		return usageErr("%v", err)
	}
	report.ReplayWarnings(o.IO.ErrOut, report.Colors(o.IO.ColorEnabled()), job.Warnings)
	live := replayLive(o, job)
	var also replay.AttemptSink
	if live != nil {
		also = live
	}
	rec, err := replay.Execute(ctx, st, job, "replay", replay.PlanOptions(job.Plan()), also)
	if live != nil {
		live.done()
	}
	if err != nil {
		return setupErr("%v", err)
	}
	if o.JSON {
		if err := writeReplayJSON(o, rec, job); err != nil {
			return err
		}
	} else {
		report.ReplayResult(o.IO.Out, report.Colors(o.IO.ColorEnabled()), rec, job)
	}
	sum := rec.Summary
	if rec.Result.Interrupted {
		return errInterrupted
	}
	if sum.Attempts > 0 && sum.Connected == 0 {
		first := ""
		for k := range sum.ErrorKinds {
			first = k
			break
		}
		return setupErr("no copy could reach %s (%s); is the handler running?", o.To, first)
	}
	return nil
}

// liveSink prints a line per attempt, or a progress line on a terminal when
// many attempts are planned (lines for non-2xx and errors are still printed).
type liveSink struct {
	o        *replayOptions
	p        report.Painter
	multi    bool
	progress *report.Progress // nil: a line per attempt
}

func replayLive(o *replayOptions, job *replay.Job) *liveSink {
	if o.JSON || o.Quiet {
		return nil
	}
	l := &liveSink{o: o, p: report.Colors(o.IO.ColorEnabled()), multi: len(job.Plan().Deliveries) > 1}
	if o.IO.IsTerminal() && job.Planned() > 50 {
		l.progress = report.NewProgress(job.Planned())
	}
	report.ReplayPlan(o.IO.Out, job, o.To)
	return l
}

func (l *liveSink) Attempt(_ context.Context, a *store.Attempt) error {
	w := l.o.IO.Out
	if l.progress == nil {
		fmt.Fprintln(w, report.AttemptLine(l.p, *a, l.multi))
		return nil
	}
	if o := l.progress.Add(*a); o != "2xx" && o != replay.OutcomeLost {
		fmt.Fprint(w, report.ClearLine)
		fmt.Fprintln(w, report.AttemptLine(l.p, *a, l.multi))
	}
	fmt.Fprint(w, report.ClearLine+l.progress.Bar())
	return nil
}

func (l *liveSink) done() {
	if l.progress != nil {
		fmt.Fprintln(l.o.IO.Out)
	}
}

func writeReplayJSON(o *replayOptions, rec *replay.Recorded, job *replay.Job) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	as, err := st.ListAttempts(context.Background(), rec.Run.ID)
	if err != nil {
		return setupErr("%v", err)
	}
	return o.jsonOut.write(o.IO, func(w io.Writer) error { return report.ReplayJSON(w, rec, job.Warnings, as) })
}
