package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type checkOptions struct{}

func newCheckCmd(f *factory, runF func(*checkOptions) error) *cobra.Command {
	return &cobra.Command{Use: "check", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("check is not built yet") }}
}
