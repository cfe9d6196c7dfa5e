package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type sendOptions struct{}

func newSendCmd(f *factory, runF func(*sendOptions) error) *cobra.Command {
	return &cobra.Command{Use: "send", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("send is not built yet") }}
}
