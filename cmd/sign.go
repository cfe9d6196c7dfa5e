package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type signOptions struct{}

func newSignCmd(f *factory, runF func(*signOptions) error) *cobra.Command {
	return &cobra.Command{Use: "sign", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("sign is not built yet") }}
}
