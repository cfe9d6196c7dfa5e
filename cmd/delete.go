package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type deleteOptions struct{}

func newDeleteCmd(f *factory, runF func(*deleteOptions) error) *cobra.Command {
	return &cobra.Command{Use: "delete", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("delete is not built yet") }}
}
