package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type importOptions struct{}

func newImportCmd(f *factory, runF func(*importOptions) error) *cobra.Command {
	return &cobra.Command{Use: "import", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("import is not built yet") }}
}
