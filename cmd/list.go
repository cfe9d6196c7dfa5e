package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type listOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	Now   func() time.Time

	deliveryFilter
	Limit int
	JSON  bool
	// jsonOut narrows and filters the JSON (--json FIELDS, --jq, --template).
	jsonOut *jsonOutput
}

func newListCmd(f *factory, runF func(*listOptions) error) *cobra.Command {
	o := &listOptions{IO: f.IO, Store: f.ExistingStore, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List captured deliveries, newest first",
		Example: `  hookreplay list
  hookreplay list --provider stripe --type 'invoice.*' --since 2h
  hookreplay list --event-id evt_1Nq2 --json | jq '.[].id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if err := intFlagIn("--limit", o.Limit, 0, maxListLimit); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return listRun(cmd.Context(), o)
		},
	}
	o.addFilterFlags(cmd.Flags())
	o.addOnePerTypeFlag(cmd.Flags())
	cmd.Flags().IntVar(&o.Limit, "limit", defaultLimit, "at most this many (0 for all)")
	o.jsonOut = addJSONFlags(cmd.Flags(), &o.JSON, "the deliveries (an array of id, received_at, provider, event_id, event_type, verification, response_status, …)").
		knownFields(report.DeliverySummary{})
	return cmd
}

func listRun(ctx context.Context, o *listOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := o.storeFilter(ctx, st, o.Now())
	if err != nil {
		return err
	}
	f.Limit = o.Limit
	if o.JSON {
		// Streamed: a whole store is listed one summary at a time, bodies
		// never read (held whole only when --json FIELDS, --jq or
		// --template shape it).
		return o.jsonOut.write(o.IO, func(w io.Writer) error {
			js := report.NewDeliveriesJSON(w)
			if err := st.EachSummary(ctx, f, store.Page{Limit: f.Limit}, js.Add); err != nil {
				return setupErr("%v", err)
			}
			return js.Close()
		})
	}
	return listTable(ctx, o, st, f)
}

// listTable prints the table in two passes over the matching summaries
// (never the bodies): the first measures the columns, the second prints, so
// `list --limit 0` of a whole store holds one row at a time and looks as a
// short list does. The second pass mostly reads pages the first left in the
// OS cache (a store larger than memory is read from disk twice). The second pass
// prints only the rows the first measured (ids between the newest and the
// oldest it saw): deliveries captured in between are left out, and rows
// deleted in between are simply missing.
func listTable(ctx context.Context, o *listOptions, st *store.Store, f store.Filter) error {
	t := report.NewDeliveryTable(report.Colors(o.IO.ColorEnabled()))
	page := store.Page{Limit: f.Limit}
	var n int
	var oldest int64
	err := st.EachSummary(ctx, f, page, func(d store.DeliverySummary) error {
		if n == 0 {
			page.Before = d.ID + 1
		}
		n++
		oldest = d.ID
		t.Measure(d)
		return nil
	})
	if err != nil {
		return setupErr("%v", err)
	}
	if n == 0 {
		fmt.Fprintln(o.IO.ErrOut, "no deliveries match (capture some with 'hookreplay capture')")
		return nil
	}
	w := bufio.NewWriter(o.IO.Out)
	werr := t.WriteHeader(w)
	err = st.EachSummary(ctx, f, page, func(d store.DeliverySummary) error {
		if werr == nil && d.ID >= oldest {
			werr = t.Write(w, d)
		}
		return werr
	})
	if werr == nil {
		werr = w.Flush()
	}
	if werr != nil {
		return werr
	}
	if err != nil {
		return setupErr("%v", err)
	}
	if o.Limit > 0 && n == o.Limit {
		fmt.Fprintf(o.IO.ErrOut, "showing the %d newest; --limit 0 lists all\n", o.Limit)
	}
	return nil
}
