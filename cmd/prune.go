package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

type pruneOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	Now   func() time.Time

	OlderThan time.Duration
}

func newPruneCmd(f *factory, runF func(*pruneOptions) error) *cobra.Command {
	o := &pruneOptions{IO: f.IO, Store: f.ExistingWritableStore, Now: time.Now}
	var older string
	cmd := &cobra.Command{
		Use:     "prune --older-than AGE",
		Short:   "Delete deliveries received longer ago than AGE (retention)",
		Example: "  hookreplay prune --older-than 7d\n  hookreplay prune --older-than 12h",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if older == "" {
				return usageErr("prune needs --older-than, e.g. --older-than 7d")
			}
			d, err := capture.ParseAge(older)
			if err != nil {
				return usageErr("--older-than: %v", err)
			}
			o.OlderThan = d
			if runF != nil {
				return runF(o)
			}
			return pruneRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&older, "older-than", "", "age of the deliveries to remove: 7d, 36h, 2w")
	return cmd
}

func pruneRun(ctx context.Context, o *pruneOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	cutoff := o.Now().Add(-o.OlderThan)
	n, err := st.PruneDeliveries(ctx, cutoff)
	if err != nil {
		return setupErr("%v", err)
	}
	fmt.Fprintf(o.IO.Out, "removed %d %s received before %s\n", n, deliveriesWord(n),
		cutoff.Local().Format("2006-01-02 15:04:05"))
	return nil
}

// deliveriesWord is "delivery" or "deliveries" for n.
func deliveriesWord(n int64) string {
	if n == 1 {
		return "delivery"
	}
	return "deliveries"
}
