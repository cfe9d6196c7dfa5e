package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type runsOptions struct{}

func newRunsCmd(f *factory, runF func(*runsOptions) error) *cobra.Command {
	return &cobra.Command{Use: "runs", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("runs is not built yet") }}
}
