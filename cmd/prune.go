package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type pruneOptions struct{}

func newPruneCmd(f *factory, runF func(*pruneOptions) error) *cobra.Command {
	return &cobra.Command{Use: "prune", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("prune is not built yet") }}
}
