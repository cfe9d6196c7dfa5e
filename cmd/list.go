package cmd

import (
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
	cmd.Flags().IntVar(&o.Limit, "limit", defaultLimit, "at most this many (0 for all)")
	o.jsonOut = addJSONFlags(cmd.Flags(), &o.JSON, "a JSON array")
	return cmd
}

func listRun(ctx context.Context, o *listOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	f := o.storeFilter(o.Now())
	f.Limit = o.Limit
	if o.JSON {
		// Streamed: a whole store is listed one delivery at a time (held
		// whole only when --json FIELDS, --jq or --template shape it).
		return o.jsonOut.write(o.IO.Out, func(w io.Writer) error {
			js := report.NewDeliveriesJSON(w)
			if err := st.EachDelivery(ctx, f, js.Add); err != nil {
				return setupErr("%v", err)
			}
			return js.Close()
		})
	}
	ds, err := st.ListDeliveries(ctx, f)
	if err != nil {
		return setupErr("%v", err)
	}
	if len(ds) == 0 {
		fmt.Fprintln(o.IO.ErrOut, "no deliveries match (capture some with 'hookreplay capture')")
		return nil
	}
	if err := report.Deliveries(o.IO.Out, report.Colors(o.IO.ColorEnabled()), ds); err != nil {
		return err
	}
	if o.Limit > 0 && len(ds) == o.Limit {
		fmt.Fprintf(o.IO.ErrOut, "showing the %d newest; --limit 0 lists all\n", o.Limit)
	}
	return nil
}
