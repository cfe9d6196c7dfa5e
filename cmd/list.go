package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type listOptions struct{}

func newListCmd(f *factory, runF func(*listOptions) error) *cobra.Command {
	return &cobra.Command{Use: "list", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("list is not built yet") }}
}
