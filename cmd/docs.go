package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// envDefault marks a flag whose default is read from the environment
// (HOOKREPLAY_DB, EMAIL_API_URL). Its value is the default without the
// variable, which is what the generated reference shows: the pages must not
// depend on the environment of whoever generated them.
const envDefault = "hookreplay/env-default"

// markEnvDefault records on fs's flag name the default it has when the
// environment does not set one.
func markEnvDefault(fs *pflag.FlagSet, name, fallback string) {
	_ = fs.SetAnnotation(name, envDefault, []string{fallback})
}

func newDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "docs DIR",
		Short: "Write the command reference as Markdown, one page per command",
		Long: `Writes docs/reference: one Markdown page per command, generated from the
command tree (the same text as --help). Pages of commands that no longer exist
are removed. 'go generate ./...' runs 'hookreplay docs docs/reference'.`,
		Example: "  hookreplay docs docs/reference",
		Args:    exactArgs(1, "DIR"),
		Hidden:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := writeReference(cmd.Root(), args[0])
			if err != nil {
				return setupErr("docs %s: %v", args[0], err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d reference pages to %s\n", n, args[0])
			return nil
		},
	}
}

func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages, one per command",
		Long: `Writes a man page (section 1) per command into DIR, generated from the
command tree: hookreplay.1, hookreplay-capture.1, ... The release archives ship
them. SOURCE_DATE_EPOCH, when set, dates the pages (reproducible builds).`,
		Example: "  hookreplay man man/ && man ./man/hookreplay-check.1",
		Args:    exactArgs(1, "DIR"),
		Hidden:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := writeMan(cmd.Root(), args[0])
			if err != nil {
				return setupErr("man %s: %v", args[0], err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d man pages to %s\n", n, args[0])
			return nil
		},
	}
}

// exactArgs is cobra.ExactArgs worded for a user: which argument is missing.
func exactArgs(n int, name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s takes %s (see '%s --help')", cmd.CommandPath(), name, cmd.CommandPath())
		}
		return nil
	}
}

// lazyLongs holds the long help built when shown (lazyLong).
var lazyLongs sync.Map // *cobra.Command → func() string

// lazyLong gives cmd the long help long() returns, built when the help is
// shown (or the reference generated) rather than with the command tree,
// which every run of hookreplay builds: a handler restarted by check's
// crash phase a dozen times, every test that runs the binary.
func lazyLong(cmd *cobra.Command, long func() string) {
	lazyLongs.Store(cmd, long)
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		// cmd's, not c's: a command below cmd inherits this function.
		fillLong(cmd)
		cmd.SetHelpFunc(nil) // the inherited help, now that Long is there
		c.HelpFunc()(c, args)
	})
}

// fillLong sets c.Long when it is built lazily (lazyLong).
func fillLong(c *cobra.Command) {
	if long, ok := lazyLongs.Load(c); ok {
		c.Long = long.(func() string)()
	}
}

// prepareDocs makes the tree generate the same text wherever it runs: the
// completion command cobra adds at Execute is there, no "auto generated on
// DATE" footer, and defaults read from the environment show their fallback.
func prepareDocs(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		fillLong(c)
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if v, ok := f.Annotations[envDefault]; ok && len(v) == 1 {
					f.DefValue = v[0]
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// writeReference writes one Markdown page per available command into dir,
// removing pages (hookreplay*.md) of commands that are gone. It returns the
// number of pages written.
func writeReference(root *cobra.Command, dir string) (int, error) {
	prepareDocs(root)
	if err := clearPages(dir, "hookreplay*.md"); err != nil {
		return 0, err
	}
	prepend := func(string) string {
		return "<!-- Generated from the command tree by 'hookreplay docs docs/reference' (go generate ./...). Do not edit. -->\n\n"
	}
	link := func(name string) string { return name }
	if err := doc.GenMarkdownTreeCustom(root, dir, prepend, link); err != nil {
		return 0, err
	}
	pages, err := filepath.Glob(filepath.Join(dir, "hookreplay*.md"))
	return len(pages), err
}

// clearPages makes dir and removes the pages (glob) a previous run wrote:
// pages of commands that are gone go, and the generator, which creates
// each page with os.Create, never writes through a symbolic link planted
// at a page's name (removing a link removes the link, not its target).
func clearPages(dir, glob string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, glob))
	if err != nil {
		return err
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// writeMan writes a section-1 man page per available command into dir and
// returns how many.
func writeMan(root *cobra.Command, dir string) (int, error) {
	prepareDocs(root)
	if err := clearPages(dir, "hookreplay*.1"); err != nil {
		return 0, err
	}
	date := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s)
		}
		date = time.Unix(sec, 0).UTC()
	}
	header := &doc.GenManHeader{ // Title empty: each page gets its command's
		Section: "1",
		Source:  "hookreplay " + root.Version,
		Manual:  "hookreplay manual",
		Date:    &date,
	}
	if err := doc.GenManTree(root, header, dir); err != nil {
		return 0, err
	}
	pages, err := filepath.Glob(filepath.Join(dir, "*.1"))
	return len(pages), err
}
