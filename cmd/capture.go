package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type captureOptions struct{}

func newCaptureCmd(f *factory, runF func(*captureOptions) error) *cobra.Command {
	return &cobra.Command{Use: "capture", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("capture is not built yet") }}
}
