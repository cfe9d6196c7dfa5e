package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

type deleteOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	IDs []int64
}

func newDeleteCmd(f *factory, runF func(*deleteOptions) error) *cobra.Command {
	o := &deleteOptions{IO: f.IO, Store: f.ExistingStore}
	cmd := &cobra.Command{
		Use:     "delete ID...",
		Short:   "Delete captured deliveries",
		Long:    "Delete the given deliveries. If any id does not exist nothing is deleted.",
		Example: "  hookreplay delete 12 13 14",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseDeliveryIDs(args)
			if err != nil {
				return err
			}
			o.IDs = ids
			if runF != nil {
				return runF(o)
			}
			return deleteRun(cmd.Context(), o)
		},
	}
	return cmd
}

func deleteRun(ctx context.Context, o *deleteOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	sel := deliverySelector{IDs: o.IDs}
	if _, err := sel.load(ctx, st); err != nil {
		return err
	}
	n, err := st.DeleteDeliveries(ctx, o.IDs...)
	if err != nil {
		return setupErr("%v", err)
	}
	fmt.Fprintf(o.IO.Out, "deleted %d %s\n", n, deliveriesWord(n))
	return nil
}
