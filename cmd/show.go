package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type showOptions struct{}

func newShowCmd(f *factory, runF func(*showOptions) error) *cobra.Command {
	return &cobra.Command{Use: "show", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("show is not built yet") }}
}
