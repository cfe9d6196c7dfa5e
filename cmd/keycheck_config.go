package cmd

// keycheck's config mode: `hookreplay keycheck` with no --to runs every
// keycheck of hookreplay.yaml's keychecks: section (`hookreplay keycheck
// NAME...` the named ones), and `hookreplay check` in config mode runs the
// file's keychecks after its checks. Each keycheck is mapped onto a flag
// set declared by keycheckFlags itself — the same defaults and the same
// validation as the command line — and the exit code is the worst of them.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/message"
)

// keycheckConfigPath is the config file this keycheck runs ("" : a
// keycheck typed on the command line): --config, or hookreplay.yaml in the
// working directory when neither --to nor --from is given.
func keycheckConfigPath(cmd *cobra.Command, configPath string) string {
	if configPath != "" {
		return configPath
	}
	if cmd.Flags().Changed("to") || cmd.Flags().Changed("from") {
		return ""
	}
	return config.Find(".")
}

// keycheckConfigRun runs the keychecks of the file at path named by names
// (all when none).
func keycheckConfigRun(ctx context.Context, cmd *cobra.Command, base *keycheckOptions, path string, names []string, runF func(*keycheckOptions) error) error {
	var extra []string
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		if !slices.Contains(configModeFlags, fl.Name) && cmd.InheritedFlags().Lookup(fl.Name) == nil {
			extra = append(extra, "--"+fl.Name)
		}
	})
	if len(extra) > 0 {
		return usageErr("%s: the keychecks' settings come from %s (edit them there, or give --to to keycheck without it)", strings.Join(extra, ", "), path)
	}
	cfg, err := config.Load(path, os.LookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	kcs, err := selectKeyChecks(cfg, names)
	if err != nil {
		return err
	}
	if len(kcs) == 0 {
		return usageErr("%s has no keychecks: section (see docs/keycheck.md, \"In CI\"), or give --to URL", cfg.Path)
	}
	var outs []configOutcome
	for i, kc := range kcs {
		if ctx != nil && ctx.Err() != nil {
			return context.Canceled
		}
		code, err := runConfigKeyCheck(ctx, base, cfg, kc, len(kcs) > 1 && runF == nil, i > 0, runF)
		if err != nil {
			return err
		}
		outs = append(outs, configOutcome{"keycheck " + kc.Name, code})
	}
	return configSummary(base.IO.Out, cfg, outs, runF == nil)
}

// configOutcome is the exit code one check or keycheck of a file ended with.
type configOutcome struct {
	name string
	code int
}

// configSummary prints the outcome of every check of cfg run (when there
// were several) and returns the worst exit code.
func configSummary(w io.Writer, cfg *config.File, outs []configOutcome, print bool) error {
	worst := 0
	for _, oc := range outs {
		if severity(oc.code) > severity(worst) {
			worst = oc.code
		}
	}
	if print && len(outs) > 1 {
		fmt.Fprintf(w, "\n== %s: %d checks\n", cfg.Path, len(outs))
		for _, oc := range outs {
			fmt.Fprintf(w, "  %-20s %s\n", oc.name, outcomeWord(oc.code))
		}
	}
	if worst != 0 {
		return silentExit(worst)
	}
	return nil
}

// runConfigKeyCheck runs one keycheck of cfg and returns its exit code; the
// error is an interruption, which stops the file.
func runConfigKeyCheck(ctx context.Context, base *keycheckOptions, cfg *config.File, kc *config.KeyCheck, head, gap bool, runF func(*keycheckOptions) error) (int, error) {
	io := base.IO
	if head {
		if gap {
			fmt.Fprintln(io.Out)
		}
		fmt.Fprintf(io.Out, "== keycheck %s (%s:%d)\n", kc.Name, cfg.Path, kc.Line)
		if !base.Quiet {
			fmt.Fprintf(io.ErrOut, "== keycheck %s\n", kc.Name)
		}
	}
	o, err := keycheckOptionsFromConfig(base, kc)
	if err == nil {
		o.probes.secrets.Add(cfg.FromEnv...)
		if runF != nil {
			err = runF(o)
		} else {
			err = redactExit(keycheckRun(ctx, o), &o.probes.secrets)
		}
	}
	err = redactExit(err, configSecrets(cfg))
	if err == nil {
		return 0, nil
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		ee = &ExitError{Code: 2, Err: err}
	}
	if ee.Code == 130 || errors.Is(err, context.Canceled) {
		return 0, err
	}
	if ee.Err != nil {
		// The error may quote the API's answers or a --serve handler's
		// output: escaped as main escapes every other error line.
		fmt.Fprintf(io.ErrOut, "hookreplay: keycheck %s (%s:%d): %s\n", kc.Name, cfg.Path, kc.Line, message.PrintableText(ee.Err.Error()))
	}
	return ee.Code, nil
}

// selectKeyChecks returns the keychecks named, in the order named (all when none).
func selectKeyChecks(cfg *config.File, names []string) ([]*config.KeyCheck, error) {
	if len(names) == 0 {
		return cfg.KeyChecks, nil
	}
	var out []*config.KeyCheck
	for _, n := range names {
		i := slices.IndexFunc(cfg.KeyChecks, func(c *config.KeyCheck) bool { return c.Name == n })
		if i < 0 {
			var known []string
			for _, c := range cfg.KeyChecks {
				known = append(known, c.Name)
			}
			return nil, usageErr("%s has no keycheck %q (its keychecks: %s)", cfg.Path, n, strings.Join(known, ", "))
		}
		out = append(out, cfg.KeyChecks[i])
	}
	return out, nil
}

// keycheckOptionsFromConfig builds the options the equivalent command line
// would: the flags declared by keycheckFlags, set from the file's values.
func keycheckOptionsFromConfig(base *keycheckOptions, kc *config.KeyCheck) (*keycheckOptions, error) {
	o := &keycheckOptions{IO: base.IO, Store: base.Store, ExistingStore: base.ExistingStore, Quiet: base.Quiet}
	fl := pflag.NewFlagSet("keycheck", pflag.ContinueOnError)
	var checks string
	keycheckFlags(fl, o, &checks)
	set := func(name, v string, line int) error {
		if err := fl.Set(name, v); err != nil {
			return usageErr("keycheck %s, line %d: %s: %v", kc.Name, line, strings.ReplaceAll(name, "-", "_"), err)
		}
		return nil
	}
	if err := set("to", kc.To, kc.Line); err != nil {
		return nil, err
	}
	for _, s := range kc.Settings {
		for _, v := range s.Values {
			if err := set(s.Flag, v, s.Line); err != nil {
				return nil, err
			}
		}
	}
	configProbes(&o.probes, kc.Probes)
	for _, r := range kc.Reports {
		o.Reports = append(o.Reports, r.Format+"="+r.Path)
	}
	if err := keycheckArgs(fl, o, checks); err != nil {
		return nil, err
	}
	return o, nil
}
