package cmd

// Shell completion with values, in one place: delivery IDs (described by
// their event type) for the commands that take them, run IDs for
// 'runs show', and the fixed values of --provider, --event, --order,
// --phases, --format, --kind and --schedule, all read from the registries
// that validate them.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/keycheck"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/replay"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// completionLimit is how many of the newest deliveries or runs are offered.
const completionLimit = 200

// addCompletions registers the completions of every command under root.
func addCompletions(root *cobra.Command, f *factory) {
	// The values are the same for every command: built once, not once a
	// command (every run of hookreplay builds the tree).
	providers, sendable := verify.ProviderNames(anyProvider), verify.ProviderNames(hasSamples)
	orders := []string{string(replay.OrderSeq), string(replay.OrderBurst), string(replay.OrderShuffle), string(replay.OrderReverse)}
	kinds, profiles, schedules := []string{"replay", "check", keycheck.Kind}, keycheck.ProfileNames(), replay.ScheduleNames()
	walkCommands(root, func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		switch path {
		case "show", "verify":
			c.ValidArgsFunction = completeDeliveryIDs(f, 1)
		case "replay", "check", "export", "delete":
			c.ValidArgsFunction = completeDeliveryIDs(f, -1)
		case "runs show":
			c.ValidArgsFunction = completeRunIDs(f)
		}
		fixed := map[string][]string{"provider": providers, "order": orders, "kind": kinds, "profile": profiles, "schedule": schedules}
		switch path {
		case "export":
			fixed["format"] = formatNames(exchange.ExportFormats)
		case "import":
			fixed["format"] = formatNames(exchange.ImportFormats)
		case "send":
			fixed["provider"] = sendable
		}
		for name, values := range fixed {
			if c.Flags().Lookup(name) == nil {
				continue
			}
			if _, done := c.GetFlagCompletionFunc(name); done {
				continue
			}
			_ = c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
		}
		if path == "keycheck" && c.Flags().Lookup("checks") != nil {
			_ = c.RegisterFlagCompletionFunc("checks", completeList(keycheck.CheckNames()))
		}
		if c.Flags().Lookup("phases") != nil {
			_ = c.RegisterFlagCompletionFunc("phases", completeList(check.AllPhases))
		}
		if fl := c.Flags().Lookup("report"); fl != nil && fl.Value.Type() == "stringArray" {
			_ = c.RegisterFlagCompletionFunc("report", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return []string{"text=", "json=", "junit=", "markdown="}, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
			})
		}
	})
}

func formatNames(fs []exchange.Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// completeList completes a comma-separated list (--phases first,dups,…):
// the values not yet in it, after what was typed up to the last comma.
func completeList(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		done, _ := splitLast(toComplete)
		prefix := ""
		if done != "" {
			prefix = done + ","
		}
		have := strings.Split(done, ",")
		var out []string
		for _, v := range values {
			if !slices.Contains(have, v) {
				out = append(out, prefix+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// splitLast splits "a,b,c" into "a,b" and "c".
func splitLast(s string) (string, string) {
	i := strings.LastIndex(s, ",")
	if i < 0 {
		return "", s
	}
	return s[:i], s[i+1:]
}

// completeDeliveryIDs offers the newest deliveries' IDs, each described by
// its event type and provider; max is how many arguments the command takes
// (-1: any). A missing or unreadable store offers nothing, never an error.
func completeDeliveryIDs(f *factory, max int) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if max >= 0 && len(args) >= max {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := f.ExistingStore()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer st.Close()
		ds, err := st.ListDeliveries(context.Background(), store.Filter{Limit: completionLimit})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, d := range ds {
			id := strconv.FormatInt(d.ID, 10)
			if slices.Contains(args, id) {
				continue
			}
			desc := d.EventType
			if desc == "" {
				desc = d.Method + " " + d.Target
			}
			if d.Provider != "" {
				desc += " (" + d.Provider + ")"
			}
			// A shell shows the description on the terminal, and a line
			// break or tab in it would break the completion protocol.
			out = append(out, id+"\t"+message.Printable(desc))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRunIDs offers the newest runs' IDs, described by kind, target and verdict.
func completeRunIDs(f *factory) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := f.ExistingStore()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer st.Close()
		runs, err := st.ListRuns(context.Background(), "", completionLimit)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, r := range runs {
			desc := fmt.Sprintf("%s → %s", r.Kind, r.Target)
			if r.Verdict != "" {
				desc += " " + r.Verdict
			}
			out = append(out, strconv.FormatInt(r.ID, 10)+"\t"+message.Printable(desc))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
