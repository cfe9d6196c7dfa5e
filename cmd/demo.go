package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type demoOptions struct{}

func newDemoCmd(f *factory, runF func(*demoOptions) error) *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("demo is not built yet") }}
}
