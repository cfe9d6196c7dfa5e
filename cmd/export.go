package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

type exportOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	Now   func() time.Time

	IDs      []int64
	Format   string
	Provider string
	TypeGlob string
	EventID  string
	Since    time.Duration
	Output   string // "" or "-" is stdout
}

func newExportCmd(f *factory, runF func(*exportOptions) error) *cobra.Command {
	o := &exportOptions{IO: f.IO, Store: f.ExistingStore, Now: time.Now}
	var since string
	cmd := &cobra.Command{
		Use:   "export [ID...]",
		Short: "Write captured deliveries to a JSONL file (for check --from and import)",
		Long: `Export writes captured deliveries, oldest first, one JSON object per line:
every field, the exact wire bytes and the body in base64, headers in their
order. Commit the file next to your tests and run 'hookreplay check --from FILE'
in CI without a database, or load it elsewhere with 'hookreplay import FILE'.

With IDs, exactly those deliveries; otherwise every delivery that matches
the filters.`,
		Example: `  hookreplay export 3 4 -o testdata/webhooks/subscription.jsonl
  hookreplay export --provider stripe --type 'invoice.*' --since 7d > invoices.jsonl
  hookreplay check --from testdata/webhooks/subscription.jsonl --to http://localhost:3000/webhooks --probe-sql '...' --dsn sqlite:app.db`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f := strings.ToLower(o.Format); f != "jsonl" {
				return usageErr("--format %s: only jsonl is supported", o.Format)
			}
			for _, a := range args {
				id, err := capture.ParseID(a)
				if err != nil {
					return usageErr("%v", err)
				}
				o.IDs = append(o.IDs, id)
			}
			if since != "" {
				d, err := capture.ParseAge(since)
				if err != nil {
					return usageErr("--since: %v", err)
				}
				o.Since = d
			}
			if len(o.IDs) > 0 && (o.Provider != "" || o.TypeGlob != "" || o.EventID != "" || o.Since > 0) {
				return usageErr("give delivery IDs or filters (--provider, --type, --event-id, --since), not both")
			}
			if runF != nil {
				return runF(o)
			}
			return exportRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "jsonl", "output format (only jsonl for now)")
	cmd.Flags().StringVar(&o.Provider, "provider", "", "only this provider ("+providers(anyProvider)+")")
	cmd.Flags().StringVar(&o.TypeGlob, "type", "", "only event types matching this glob, e.g. 'invoice.*'")
	cmd.Flags().StringVar(&o.EventID, "event-id", "", "only deliveries of this event id")
	cmd.Flags().StringVar(&since, "since", "", "only deliveries received within this long, e.g. 2h or 7d")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to this file instead of stdout (replaced whole)")
	return cmd
}

func exportRun(ctx context.Context, o *exportOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	var ds []*store.Delivery
	if len(o.IDs) > 0 {
		for _, id := range o.IDs {
			d, err := st.GetDelivery(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				return usageErr("no delivery %d in %s (see 'hookreplay list')", id, st.Path())
			}
			if err != nil {
				return setupErr("%v", err)
			}
			ds = append(ds, d)
		}
	} else {
		f := store.Filter{Provider: o.Provider, TypeGlob: o.TypeGlob, EventID: o.EventID, Oldest: true}
		if o.Since > 0 {
			f.Since = o.Now().Add(-o.Since)
		}
		if ds, err = st.ListDeliveries(ctx, f); err != nil {
			return setupErr("%v", err)
		}
		if len(ds) == 0 {
			return usageErr("no deliveries match in %s (see 'hookreplay list'); nothing exported", st.Path())
		}
	}
	if o.Output == "" || o.Output == "-" {
		if err := store.WriteJSONL(o.IO.Out, ds); err != nil {
			return setupErr("export: %v", err)
		}
		return nil
	}
	if err := store.WriteJSONLFile(o.Output, ds); err != nil {
		return setupErr("export: %v", err)
	}
	fmt.Fprintf(o.IO.ErrOut, "exported %s to %s\n", exportCount(len(ds)), o.Output)
	return nil
}

func exportCount(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}
