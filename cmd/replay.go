package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type replayOptions struct{}

func newReplayCmd(f *factory, runF func(*replayOptions) error) *cobra.Command {
	return &cobra.Command{Use: "replay", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("replay is not built yet") }}
}
