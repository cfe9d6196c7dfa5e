package cmd

// Usage errors in hookreplay's words, in one place: cobra's argument-count
// messages ("accepts 1 arg(s), received 0"), pflag's parse errors
// ("strconv.ParseInt: parsing …", "time: missing unit …") and the default
// completion command's help-on-anything are reworded here for every command
// at once, after the tree is built, so no command words them itself.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// completionShells are the shells cobra's completion command writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

// wordCommandLine rewords, for every command under root, what cobra and
// pflag would otherwise say in their own terms.
func wordCommandLine(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.RunE = func(c *cobra.Command, args []string) error {
				if len(args) == 0 {
					return c.Help()
				}
				return usageErr("completion %s: not a shell hookreplay writes completions for (%s)", args[0], strings.Join(completionShells, ", "))
			}
			c.Args = cobra.ArbitraryArgs
		}
	}
	wordUnknownCommands(root)
	root.SetFlagErrorFunc(flagError)
	walkCommands(root, func(c *cobra.Command) {
		if c.Args != nil {
			c.Args = wordedArgs(c.Args)
		}
		wordFlagValues(c.Flags())
		wordFlagValues(c.PersistentFlags())
	})
}

// wordUnknownCommands makes a mistyped command one line, exit 2, as a
// mistyped flag is: cobra says "unknown command" over four lines ("Did you
// mean this?" on a line of its own, worded again by wordCobraError), 'help
// lst' printed the whole usage and exited 0, and 'runs shw 3' said "runs
// takes no arguments" (argCountErr).
func wordUnknownCommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() != "help" {
			continue
		}
		c.Run = nil
		c.RunE = func(c *cobra.Command, args []string) error {
			target, rest, err := c.Root().Find(args)
			if err != nil {
				return wordCobraError(err)
			}
			if len(rest) > 0 {
				return unknownCommandErr(target, rest[0])
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		}
	}
}

// wordCobraError words the one error cobra makes before any of ours can
// run: a first argument that is no command of the root's, "unknown command
// "lst" for "hookreplay"\n\nDid you mean this?\n\tlist\n". Anything else is
// returned as it is.
func wordCobraError(err error) error {
	var typed, path string
	msg := err.Error()
	if _, e := fmt.Sscanf(msg, "unknown command %q for %q", &typed, &path); e != nil {
		return err
	}
	var near []string
	if _, rest, ok := strings.Cut(msg, "Did you mean this?"); ok {
		near = strings.Fields(rest)
	}
	return usageErr("unknown command %q for %s%s (see '%s --help')", typed, path, didYouMeanCommand(near), path)
}

// unknownCommandErr is the one line for a command c does not have, with
// the nearest of its commands when one is near.
func unknownCommandErr(c *cobra.Command, typed string) error {
	return usageErr("unknown command %q for %s%s (see '%s --help')", typed, c.CommandPath(), suggestCommand(c, typed), c.CommandPath())
}

// didYouMeanCommand is "; did you mean NAME?" for the commands near what
// was typed, or "" when there are none.
func didYouMeanCommand(near []string) string {
	if len(near) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(near, " or ") + "?"
}

// suggestCommand is "; did you mean NAME?" for the subcommand of c nearest
// to typed (cobra's suggestions: two edits, or a prefix), or "".
func suggestCommand(c *cobra.Command, typed string) string {
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = maxFlagDistance
	}
	return didYouMeanCommand(c.SuggestionsFor(typed))
}

// walkCommands calls fn for c and every command below it.
func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, fn)
	}
}

// wordedArgs runs cobra's argument validator and, when it refuses, says what
// the command takes in the words of its Use line.
func wordedArgs(inner cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := inner(c, args); err != nil {
			var ee *ExitError
			if errors.As(err, &ee) {
				return err // already worded by the command itself
			}
			return argCountErr(c, args)
		}
		return nil
	}
}

// argCountErr is the one line for a wrong number of arguments.
func argCountErr(c *cobra.Command, args []string) error {
	want := strings.TrimSpace(strings.TrimPrefix(c.Use, c.Name()))
	// Only the positional part of Use: "check [ID...] --to URL" takes [ID...].
	if i := strings.Index(want, "-"); i >= 0 {
		want = strings.TrimSpace(want[:i])
	}
	if len(args) > 0 && c.HasAvailableSubCommands() && suggestCommand(c, args[0]) != "" {
		return unknownCommandErr(c, args[0]) // runs shw 3: show was meant
	}
	name := strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" ")
	usage := fmt.Sprintf("(usage: %s; see '%s --help')", strings.TrimSpace(c.CommandPath()+" "+want), c.CommandPath())
	switch {
	case want == "" || want == "[flags]":
		return usageErr("%s takes no arguments, got %q %s", name, strings.Join(args, " "), usage)
	case len(args) == 0:
		return usageErr("%s needs %s %s", name, want, usage)
	default:
		return usageErr("%s takes %s, got %d arguments (%s) %s", name, want, len(args), strings.Join(args, " "), usage)
	}
}

// flagError words pflag's errors: an unknown flag, a flag without its
// value, a value that does not parse.
func flagError(c *cobra.Command, err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	help := fmt.Sprintf("(see '%s --help')", c.CommandPath())
	var bad *badValue
	if errors.As(err, &bad) {
		return usageErr("%s", bad.Error())
	}
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		return usageErr("--%s %s: %v %s", inv.GetFlag().Name, inv.GetValue(), errors.Unwrap(inv), help)
	}
	var req *pflag.ValueRequiredError
	if errors.As(err, &req) {
		return usageErr("--%s needs a value %s", req.GetFlag().Name, help)
	}
	var nx *pflag.NotExistError
	if errors.As(err, &nx) {
		if s := nx.GetSpecifiedShortnames(); s != "" && nx.GetSpecifiedName() != "" {
			// -listen for --listen: the letters were read as shorthands.
			return usageErr("unknown flag -%s in -%s%s %s", nx.GetSpecifiedName(), s, didYouMean(c, s, len(s) > 1), help)
		}
		return usageErr("unknown flag: --%s%s %s", nx.GetSpecifiedName(), didYouMean(c, nx.GetSpecifiedName(), true), help)
	}
	return usageErr("%v %s", err, help)
}

// didYouMean is "; did you mean --NAME?" for the flag of c nearest to
// typed, or "" when none is near or try is false.
func didYouMean(c *cobra.Command, typed string, try bool) string {
	if !try {
		return ""
	}
	if s := suggestFlag(c, typed); s != "" {
		return "; did you mean --" + s + "?"
	}
	return ""
}

// badValue is a flag value that did not parse, worded for the user.
type badValue struct {
	flag, value, why string
}

func (b *badValue) Error() string { return fmt.Sprintf("--%s %s: %s", b.flag, b.value, b.why) }

// wordedValue wraps a pflag value so its parse error says what to type
// instead of which Go function failed.
type wordedValue struct {
	pflag.Value
	name string
}

func (v *wordedValue) Set(s string) error {
	err := v.Value.Set(s)
	if err == nil {
		return nil
	}
	why := "not a valid value"
	switch v.Type() {
	case "duration":
		why = durationWhy(s)
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		why = "not a whole number"
		if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			why = "too large"
		}
	case "float32", "float64":
		why = "not a number"
	case "bool":
		why = "want true or false (the flag alone means true)"
	}
	return &badValue{flag: v.name, value: s, why: why}
}

// durationWhy explains a duration that did not parse.
func durationWhy(s string) string {
	if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		return "give a unit, e.g. " + strings.TrimSpace(s) + "s"
	}
	return "not a duration; e.g. 500ms, 5s, 2m or 1h30m"
}

// wordFlagValues wraps every value of fs whose parse errors come from strconv or time.
func wordFlagValues(fs *pflag.FlagSet) {
	fs.VisitAll(func(fl *pflag.Flag) {
		if _, done := fl.Value.(*wordedValue); done {
			return
		}
		switch fl.Value.Type() {
		case "bool", "duration", "float32", "float64",
			"int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
			fl.Value = &wordedValue{Value: fl.Value, name: fl.Name}
			// pflag knows a zero duration default only on its own type: wrapped,
			// "0s" would be printed as "(default 0s)" after a text that says
			// what the default really is (the provider's timeout, say).
			if fl.DefValue == "0s" {
				fl.DefValue = "0"
			}
		}
	})
}

// startPager pages the rest of a command's stdout when it is a terminal
// (iostreams.StartPager); a pager that cannot start is skipped with a
// note, the output still printed.
func startPager(io *iostreams.IO) {
	if err := io.StartPager(); err != nil {
		fmt.Fprintf(io.ErrOut, "note: %v; printing without it (--no-pager, or set PAGER)\n", err)
	}
}
