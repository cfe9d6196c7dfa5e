package cmd

import "github.com/spf13/cobra"

// PLACEHOLDER: replaced by the owner of this command.
type verifyOptions struct{}

func newVerifyCmd(f *factory, runF func(*verifyOptions) error) *cobra.Command {
	return &cobra.Command{Use: "verify", Short: "(not built yet)", Hidden: true,
		RunE: func(*cobra.Command, []string) error { return usageErr("verify is not built yet") }}
}
