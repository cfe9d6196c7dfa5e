package cmd

// check's config mode: `hookreplay check` with no delivery named runs every
// check of hookreplay.yaml (`hookreplay check NAME...` the named ones). Each
// config check is mapped onto the same checkOptions the flags build, with
// the flags' own defaults, and goes through the same validation and run as a
// check typed on the command line; the exit code is the worst of them.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/redact"
	"github.com/hookreplay/hookreplay/internal/store"
)

// addConfigFlag declares --config.
func addConfigFlag(fl *pflag.FlagSet, path *string) {
	fl.StringVar(path, "config", "", "run the checks of this file (default: "+config.Names[0]+" in the working directory when no delivery is named)")
}

// configModeFlags are the flags that may go with a config file: the rest
// are settings of a check, which the file holds.
var configModeFlags = []string{"config", "quiet", "jobs"}

// checkConfigPath returns the config file this invocation runs, or "" when
// it is a check typed on the command line: --config, or hookreplay.yaml in
// the working directory when no delivery and no --to are given (args are
// then check names).
func checkConfigPath(cmd *cobra.Command, configPath string, args []string) string {
	if configPath != "" {
		return configPath
	}
	fl := cmd.Flags()
	for _, name := range []string{"to", "last", "event-id", "from"} {
		if fl.Changed(name) {
			return ""
		}
	}
	for _, a := range args {
		if _, err := strconv.ParseInt(strings.TrimPrefix(a, "#"), 10, 64); err == nil {
			return "" // a delivery id
		}
	}
	return config.Find(".")
}

// checkConfigRun runs the checks of the file at path named by names (all
// when none), one after the other; base holds the streams, the store and
// --quiet. runF, when set, receives each check's options instead of running
// it (tests of the mapping).
func checkConfigRun(ctx context.Context, cmd *cobra.Command, base *checkOptions, path string, names []string, runF func(*checkOptions) error) error {
	var extra []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !slices.Contains(configModeFlags, fl.Name) && cmd.InheritedFlags().Lookup(fl.Name) == nil {
			extra = append(extra, "--"+fl.Name) // -n is --copies now

		}
	})
	if len(extra) > 0 {
		return usageErr("%s: the checks' settings come from %s (edit them there, or name deliveries and --to to check without it)", strings.Join(extra, ", "), path)
	}
	cfg, err := config.Load(path, os.LookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	fromEnv := configSecrets(cfg)
	// Names of keychecks select those; the rest name checks. With no
	// names, every check runs, then every keycheck: CI runs both kinds.
	var checkNames, keyNames []string
	for _, n := range names {
		if slices.ContainsFunc(cfg.KeyChecks, func(k *config.KeyCheck) bool { return k.Name == n }) {
			keyNames = append(keyNames, n)
		} else {
			checkNames = append(checkNames, n)
		}
	}
	checks, err := selectConfigChecks(cfg, checkNames)
	if err != nil {
		return err
	}
	if len(names) > 0 && len(checkNames) == 0 {
		checks = nil
	}
	keychecks, err := selectKeyChecks(cfg, keyNames)
	if err != nil {
		return err
	}
	if len(names) > 0 && len(keyNames) == 0 {
		keychecks = nil
	}
	total := len(checks) + len(keychecks)
	var outcomes []configOutcome
	for i, c := range checks {
		if ctx != nil && ctx.Err() != nil {
			return context.Canceled
		}
		if total > 1 && runF == nil {
			if i > 0 {
				fmt.Fprintln(base.IO.Out)
			}
			fmt.Fprintf(base.IO.Out, "== check %s (%s:%d)\n", c.Name, cfg.Path, c.Line)
			if !base.Quiet {
				fmt.Fprintf(base.IO.ErrOut, "== check %s\n", c.Name)
			}
		}
		o, err := checkOptionsFromConfig(ctx, base, c)
		if err == nil {
			o.secrets.Add(cfg.FromEnv...)
			if runF != nil {
				err = runF(o)
			} else {
				err = redactExit(checkRun(ctx, o), &o.secrets)
			}
		}
		err = redactExit(err, fromEnv)
		code := 0
		if err != nil {
			var ee *ExitError
			if !errors.As(err, &ee) {
				ee = &ExitError{Code: 2, Err: err}
			}
			if ee.Code == ExitInterrupted || errors.Is(err, context.Canceled) {
				return err
			}
			code = ee.Code
			if ee.Err != nil {
				fmt.Fprintf(base.IO.ErrOut, "hookreplay: check %s (%s:%d): %v\n", c.Name, cfg.Path, c.Line, message.PrintableText(ee.Err.Error()))
			}
		}
		outcomes = append(outcomes, configOutcome{c.Name, code})
	}
	kbase := &keycheckOptions{IO: base.IO, Store: base.Store, ExistingStore: base.ExistingStore, Quiet: base.Quiet}
	for i, kc := range keychecks {
		if ctx != nil && ctx.Err() != nil {
			return context.Canceled
		}
		// runF receives check options; a keycheck is run for real only
		// when the checks are.
		if runF != nil {
			continue
		}
		code, err := runConfigKeyCheck(ctx, kbase, cfg, kc, total > 1, len(checks)+i > 0, nil)
		if err != nil {
			return err
		}
		outcomes = append(outcomes, configOutcome{"keycheck " + kc.Name, code})
	}
	return configSummary(base.IO.Out, cfg, outcomes, runF == nil)
}

// severity orders exit codes for "the worst of them": a check that could not
// run (2) hides the most, then a violation (1), then inconclusive (3).
func severity(code int) int {
	switch code {
	case 0:
		return 0
	case 3:
		return 1
	case 1:
		return 2
	}
	return 3
}

func outcomeWord(code int) string {
	switch code {
	case 0:
		return "passed"
	case 1:
		return "VIOLATION (exit 1)"
	case 3:
		return "inconclusive (exit 3)"
	}
	return fmt.Sprintf("error (exit %d)", code)
}

// configSecrets are the values cfg took from the environment (${VAR}):
// any may be a credential, so each is redacted wherever a check or
// keycheck of the file prints or stores it, as --secret is.
func configSecrets(cfg *config.File) *redact.Secrets {
	var s redact.Secrets
	s.Add(cfg.FromEnv...)
	return &s
}

// selectConfigChecks returns the checks named, in the order named (every
// check of the file when none is).
func selectConfigChecks(cfg *config.File, names []string) ([]*config.Check, error) {
	if len(names) == 0 {
		return cfg.Checks, nil
	}
	var out []*config.Check
	for _, n := range names {
		i := slices.IndexFunc(cfg.Checks, func(c *config.Check) bool { return c.Name == n })
		if i < 0 {
			var known []string
			for _, c := range cfg.Checks {
				known = append(known, c.Name)
			}
			return nil, usageErr("%s has no check %q (its checks: %s)", cfg.Path, n, strings.Join(known, ", "))
		}
		out = append(out, cfg.Checks[i])
	}
	return out, nil
}

// checkOptionsFromConfig builds the options the equivalent command line would:
// the flags' defaults first (declared by checkEngineFlags itself), then the
// file's values.
func checkOptionsFromConfig(ctx context.Context, base *checkOptions, c *config.Check) (*checkOptions, error) {
	o := &checkOptions{IO: base.IO, Store: base.Store, ExistingStore: base.ExistingStore, Quiet: base.Quiet}
	var phases string
	checkEngineFlags(pflag.NewFlagSet("config", pflag.ContinueOnError), o, &phases)

	o.MaxTime = defaultCheckMaxTime // declared beside check's own flags, not the engine's

	d := c.Deliveries
	o.hasOnePerType = true // check declares --one-per-type
	o.From, o.IDs, o.Last, o.EventIDs = d.From, d.IDs, d.Last, d.EventIDs
	if d.Last || len(d.EventIDs) > 0 {
		o.OnlyProvider, o.OnlyType = d.Provider, d.Type
	}
	if d.OnePerType { // as check --one-per-type --provider P --type T --since S
		o.OnePerType = true
		o.OnlyProvider, o.OnlyType, o.OnlySince = d.Provider, d.Type, d.Since
	}
	o.To, o.SignedURL, o.Serve, o.ResetCmd = c.To, c.SignedURL, c.Serve, c.Reset
	o.KillCmd, o.StartCmd = c.Kill, c.Start
	o.DedupeTTL, o.ForgetCmd = c.DedupeTTL, c.Forget
	configProbes(o, c.Probes)
	o.Phases = c.Phases
	if c.Copies > 0 {
		o.N = c.Copies
	}
	if c.Burst > 0 {
		o.Burst = c.Burst
	}
	o.Jobs = c.Jobs
	if base.Jobs > 0 { // --jobs: this machine's choice, for every check
		o.Jobs = base.Jobs
	}
	if c.Settle > 0 {
		o.Settle, o.SettleSet = c.Settle, true
	}
	if c.SettleMax > 0 {
		o.SettleMax = c.SettleMax
	}
	if o.SettleMax < o.Settle {
		o.SettleMax = o.Settle
	}
	o.ProviderTimeout = c.ProviderTimeout
	if c.MaxTime > 0 {
		o.MaxTime = c.MaxTime
	}
	if c.Seed != nil {
		o.Seed, o.SeedSet = *c.Seed, true
	}
	o.Insecure = c.Insecure
	for _, r := range c.Reports {
		o.Reports = append(o.Reports, r.Format+"="+r.Path)
	}
	if c.SecretEnv != "" {
		if os.Getenv(c.SecretEnv) == "" {
			return nil, usageErr("secret_env %s: the environment variable is not set or empty", c.SecretEnv)
		}
		o.SecretEnv = c.SecretEnv
	}
	if err := resolveCheckSecret(o); err != nil {
		return nil, err
	}
	if d.Filtered() {
		ids, err := configFilterIDs(ctx, o, d)
		if err != nil {
			return nil, err
		}
		o.IDs = append(o.IDs, ids...)
	}
	return o, nil
}

// configFilterIDs resolves a check's store filters to the newest Limit
// matching deliveries, in the order they were captured.
func configFilterIDs(ctx context.Context, o *checkOptions, d config.Deliveries) ([]int64, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	st, err := o.openStore(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	f := store.Filter{Provider: d.Provider, TypeGlob: d.Type, Limit: d.Limit}
	if d.Since > 0 {
		f.Since = time.Now().Add(-d.Since)
	}
	ds, err := st.ListDeliveries(ctx, f)
	if err != nil {
		return nil, setupErr("%v", err)
	}
	if len(ds) == 0 {
		return nil, usageErr("no captured delivery in %s matches deliveries: provider %q, type %q, since %s", st.Path(), d.Provider, d.Type, d.Since)
	}
	ids := make([]int64, 0, len(ds))
	for _, x := range ds {
		ids = append(ids, x.ID)
	}
	slices.Sort(ids)
	return ids, nil
}

// configProbes sets the probe flags of o from a config file's probes (a
// check's or a keycheck's), as the command line names them.
func configProbes(o *checkOptions, ps []config.Probe) {
	for _, p := range ps {
		// A probe's name goes in front, as --probe-sql NAME=QUERY names one.
		named := func(spec string) string { return p.Name + "=" + spec }
		switch {
		case p.SQL != "":
			o.ProbeSQL, o.DSN = append(o.ProbeSQL, named(p.SQL)), p.DSN
		case p.Cmd != "":
			o.ProbeCmd = append(o.ProbeCmd, named(p.Cmd))
		case p.HTTP != "":
			o.ProbeHTTP = append(o.ProbeHTTP, named(p.HTTP))
		case p.Redis != "":
			o.ProbeRedis = append(o.ProbeRedis, named(p.Redis))
		case p.Sink != "":
			o.Sink, o.SinkMatch = named(p.Sink), p.Match
		case p.SMTP != "":
			o.SMTPSink, o.SMTPMatch = named(p.SMTP), p.Match
		}
	}
}
