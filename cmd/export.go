package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type exportOptions struct{}

func newExportCmd(f *factory, runF func(*exportOptions) error) *cobra.Command {
	return &cobra.Command{Use: "export", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("export is not built yet") }}
}
