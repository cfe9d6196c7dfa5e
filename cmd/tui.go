package cmd

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/tui"
)

type tuiOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	DB    func() string

	Secret    string
	SecretEnv string
}

func newTUICmd(f *factory, runF func(*tuiOptions) error) *cobra.Command {
	o := &tuiOptions{IO: f.IO, Store: f.ExistingStore, DB: func() string { return f.DBPath }}
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Browse, inspect, replay and check deliveries interactively",
		Long: `An interactive view of the database: deliveries appear live as 'hookreplay
capture' (in another terminal, or 'capture --tui') stores them; enter shows
one delivery's headers, body, exact wire bytes, captured response, signature
and past attempts; r replays, c checks, R lists past runs; ? lists every key.`,
		Example: `  hookreplay tui
  hookreplay tui --db ci.db --secret-env STRIPE_WEBHOOK_SECRET`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			secret, err := secretFlags(o.Secret, o.SecretEnv)
			if err != nil {
				return err
			}
			o.Secret = secret
			if runF != nil {
				return runF(o)
			}
			return tuiRun(cmd, o)
		},
	}
	cmd.Flags().StringVar(&o.Secret, "secret", "", "signing secret: verify signatures in the delivery view and re-sign replays (prefer --secret-env)")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	return cmd
}

func tuiRun(cmd *cobra.Command, o *tuiOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	if !o.IO.IsTerminal() {
		return usageErr("tui needs a terminal (in scripts use 'hookreplay list' and 'hookreplay show')")
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	err = tui.Run(cmd.Context(), tui.Options{Store: st, DBPath: st.Path(), Secret: o.Secret, In: o.IO.In, Out: o.IO.Out,
		NoColor: noColor || !o.IO.ColorEnabled()})
	if err != nil {
		return setupErr("%v", err)
	}
	return nil
}
