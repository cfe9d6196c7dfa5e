package cmd

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

type deleteOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	deliverySelector
}

func newDeleteCmd(f *factory, runF func(*deleteOptions) error) *cobra.Command {
	o := &deleteOptions{IO: f.IO, Store: f.ExistingWritableStore}
	cmd := &cobra.Command{
		Use:   "delete [ID...]",
		Short: "Delete captured deliveries",
		Long:  "Delete the given deliveries. If any of them does not exist nothing is deleted.",
		Example: `  hookreplay delete 12 13 14
  hookreplay delete --event-id evt_1Nq2 --event-id evt_1Nq3
  hookreplay delete --last --provider stripe`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ids, err := parseDeliveryIDs(args)
			if err != nil {
				return err
			}
			o.IDs = ids
			if o.given() == 0 {
				return usageErr("which deliveries? give IDs (see 'hookreplay list'), --last or --event-id E")
			}
			if err := o.validateFilters(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return deleteRun(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	o.addLastFlag(fl, "delete")
	o.addEventIDFlag(fl, "delete")
	o.addSelectFilterFlags(fl)
	return cmd
}

func deleteRun(ctx context.Context, o *deleteOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	ds, err := o.load(ctx, st)
	if err != nil {
		return err
	}
	var ids []int64
	for _, d := range ds {
		if !slices.Contains(ids, d.ID) {
			ids = append(ids, d.ID)
		}
	}
	n, err := st.DeleteDeliveries(ctx, ids...)
	if err != nil {
		return setupErr("%v", err)
	}
	fmt.Fprintf(o.IO.Out, "deleted %d %s\n", n, deliveriesWord(n))
	return nil
}
