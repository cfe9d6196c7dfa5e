package cmd

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/iostreams"
)

type demoServeOptions struct {
	IO *iostreams.IO

	Variant    string
	Listen     string
	DBPath     string // --db: SQLite file, used when DSN is empty
	DSN        string // --dsn: sqlite:PATH or postgres://…
	Secret     string // from --secret or --secret-env; never printed
	SecretEnv  string
	RaceWindow time.Duration
	Delay      time.Duration
	Cold       time.Duration
	EmailURL   string
	Quiet      bool
}

// newDemoServeCmd is `hookreplay demo serve VARIANT`: one example wallet
// handler on its own, for tutorials and for checking it by hand.
func newDemoServeCmd(f *factory) *cobra.Command {
	o := &demoServeOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "serve naive|racy|fixed",
		Short: "Run one variant of the example wallet webhook handler",
		Long: `Run the example Stripe webhook handler that the demo checks (its code is in
examples/wallet). invoice.payment_succeeded and invoice.paid credit
data.object.amount_paid (cents) to the wallet of data.object.customer:

  naive  credits on every delivery: a duplicate credits twice
  racy   SELECTs the event id, then INSERTs it and credits, without a unique
         constraint: sequential duplicates are skipped, concurrent ones are not
  fixed  claims the event id with INSERT ... ON CONFLICT DO NOTHING in the same
         transaction as the credit: exactly once

The handler creates its tables (wallets, processed_events, subscriptions) in
--db (SQLite) or --dsn (SQLite or Postgres). With --secret it verifies the
Stripe-Signature header and answers 400 to unsigned, tampered or replayed
deliveries. GET /balance?customer=ID answers the balance in cents. With
--email-url (or EMAIL_API_URL) it POSTs a receipt to URL/v1/send after each
credit, so a --sink can count the emails.

It prints one line when it accepts connections, one line per delivery on
stderr (unless --quiet), and stops cleanly on Ctrl-C or SIGTERM.`,
		Example: `  # capture a signed sample, then check the racy variant: with a secret, check
  # re-signs copies with fresh event ids, so the burst phase runs and catches the race
  export STRIPE_SECRET=whsec_test_secret
  hookreplay demo serve racy --listen 127.0.0.1:4242 --db racy.db --secret-env STRIPE_SECRET -q &
  hookreplay capture --listen 127.0.0.1:9000 --secret-env STRIPE_SECRET -q &
  sleep 1
  hookreplay send --provider stripe --event invoice.payment_succeeded --secret-env STRIPE_SECRET \
    --to http://127.0.0.1:4242/webhooks/stripe --via http://127.0.0.1:9000
  hookreplay check --last --to http://127.0.0.1:4242/webhooks/stripe --secret-env STRIPE_SECRET -q \
    --probe-sql "SELECT COALESCE(SUM(balance), 0) FROM wallets" --dsn sqlite:racy.db
  kill %1 %2; wait   # stop the handler and capture

  # Postgres, verifying signatures, sending receipts to a hookreplay sink
  STRIPE_SECRET=whsec_... EMAIL_API_URL=http://127.0.0.1:9100 \
    hookreplay demo serve fixed --dsn postgres://localhost/wallet --secret-env STRIPE_SECRET`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("demo serve takes one variant: %s (see '%s --help')", strings.Join(wallet.Variants, ", "), cmd.CommandPath())
			}
			if !wallet.IsVariant(args[0]) {
				return usageErr("unknown variant %q: want %s", args[0], strings.Join(wallet.Variants, ", "))
			}
			return nil
		},
		ValidArgs: wallet.Variants,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Variant = args[0]
			secret, err := secretFlags(o.Secret, o.SecretEnv)
			if err != nil {
				return err
			}
			o.Secret = secret
			if o.DSN != "" && cmd.Flags().Changed("db") {
				return usageErr("give either --db or --dsn, not both")
			}
			if o.DSN == "" {
				if o.DBPath == "" {
					o.DBPath = "wallet-" + o.Variant + ".db"
				}
				o.DSN = "sqlite:" + o.DBPath
			}
			if o.DSN != "" && !strings.HasPrefix(o.DSN, "sqlite:") && !strings.HasPrefix(o.DSN, "postgres://") && !strings.HasPrefix(o.DSN, "postgresql://") {
				return usageErr("--dsn %q: use sqlite:PATH or postgres://USER@HOST/DB", demoServeRedact(o.DSN))
			}
			if err := durationFlagIn("--race-window", o.RaceWindow, 0, maxDuration); err != nil {
				return err
			}
			if err := durationFlagIn("--delay", o.Delay, 0, maxDuration); err != nil {
				return err
			}
			if err := durationFlagIn("--cold", o.Cold, 0, maxDuration); err != nil {
				return err
			}
			return demoServeRun(cmd.Context(), o)
		},
	}
	listenFlag(cmd.Flags(), &o.Listen, "listen", "127.0.0.1:4242", "address to serve on (host:port)")
	cmd.Flags().StringVar(&o.DBPath, "db", "", "SQLite file for the wallet (default wallet-VARIANT.db)")
	cmd.Flags().StringVar(&o.DSN, "dsn", "", "database instead of --db: sqlite:PATH or postgres://USER@HOST/DB")
	cmd.Flags().StringVar(&o.Secret, "secret", "", "Stripe endpoint secret (whsec_...): verify Stripe-Signature")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "read the Stripe secret from this environment variable")
	cmd.Flags().DurationVar(&o.RaceWindow, "race-window", wallet.DefaultRaceWindow, "racy: time between checking and recording an event")
	cmd.Flags().DurationVar(&o.Delay, "delay", 0, "delay inside the handler, for the variants hookreplay's own tests use")
	cmd.Flags().DurationVar(&o.Cold, "cold", 0, "extra time the first delivery after a start takes (a cold start), for hookreplay's own tests")
	cmd.Flags().StringVar(&o.EmailURL, "email-url", os.Getenv("EMAIL_API_URL"), "POST a receipt to URL/v1/send after each credit (env EMAIL_API_URL)")
	markEnvDefault(cmd.Flags(), "email-url", "")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "do not log deliveries on stderr")
	return cmd
}

func demoServeRun(ctx context.Context, o *demoServeOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	opts := wallet.Options{
		Variant:    o.Variant,
		DSN:        o.DSN,
		Secret:     o.Secret,
		RaceWindow: o.RaceWindow,
		Delay:      o.Delay,
		Cold:       o.Cold,
		EmailURL:   o.EmailURL,
		OnListen: func(addr string) {
			fmt.Fprintf(o.IO.Out, "wallet %s listening on http://%s/ (database %s)\n", o.Variant, addr, demoServeRedact(o.DSN))
		},
	}
	if !o.Quiet {
		opts.Log = o.IO.ErrOut
	}
	if err := wallet.Serve(ctx, opts, o.Listen); err != nil {
		return setupErr("demo serve %s: %v%s", o.Variant, err, portInUseHint(err, "--listen"))
	}
	return nil
}

// demoServeRedact hides a password in a DSN.
func demoServeRedact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}
