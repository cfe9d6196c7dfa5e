// Package cmd holds hookreplay's cobra commands. Each command parses its flags
// into an options struct and calls one internal entry point; no logic lives here.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/redact"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// Version is set at build time with -ldflags "-X github.com/hookreplay/hookreplay/cmd.Version=...".
var Version = "dev"

// version is Version, or, for a binary built without -ldflags (go install
// github.com/hookreplay/hookreplay@v1.2.0), the module version Go recorded.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionFrom(Version, bi, ok)
}

func versionFrom(ldflags string, bi *debug.BuildInfo, ok bool) string {
	if ldflags != "dev" || !ok || bi == nil {
		return ldflags
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	return ldflags
}

// factory carries what every command needs: streams and a lazily opened store.
type factory struct {
	IO     *iostreams.IO
	DBPath string
	// DBSchema is --db-schema: the Postgres schema of a postgres:// store.
	DBSchema string
	// DropForeignTriggers is --drop-foreign-triggers: drop the triggers and
	// views of a SQLite store that hookreplay did not create, rather than
	// refuse it.
	DropForeignTriggers bool
	// Store opens (creating when absent) the database at DBPath and makes
	// sure it can be written; the caller closes it.
	Store func() (*store.Store, error)
	// ExistingStore opens the database at DBPath only when it exists, so a
	// read-only command given a mistyped --db says so instead of creating an
	// empty database and reporting that it holds nothing.
	ExistingStore func() (*store.Store, error)
	// ExistingWritableStore is ExistingStore for the commands that change
	// it (replay, delete, prune): a store the user may only read (a
	// read-only Postgres role browsing a team store) is refused before
	// anything is sent or removed.
	ExistingWritableStore func() (*store.Store, error)
	// Declared are the provider schemes declared for this run (the
	// providers: section of hookreplay.yaml, then --declare), registered
	// with verify when the command starts: every command sees them.
	Declared []config.Provider
}

func newFactory(io *iostreams.IO) *factory {
	f := &factory{IO: io}
	open := func() (*store.Store, error) {
		if strings.TrimSpace(f.DBPath) == "" {
			return nil, usageErr("--db is empty: give the database file, e.g. --db hookreplay.db, or a postgres:// URL")
		}
		if f.DBSchema != "" && !store.IsURL(f.DBPath) {
			return nil, usageErr("--db-schema is for a postgres:// --db; %s is a SQLite file", f.DBPath)
		}
		opts := []store.Option{store.WithSchema(f.DBSchema)}
		if f.DropForeignTriggers {
			opts = append(opts, store.WithDropForeignTriggers(func(objects []string) {
				fmt.Fprintf(f.IO.ErrOut, "hookreplay: dropped %s from %s (--drop-foreign-triggers)\n", message.Printable(strings.Join(objects, ", ")), store.Display(f.DBPath))
			}))
		}
		s, err := store.Open(context.Background(), f.DBPath, opts...)
		var fe *store.ForeignObjectsError
		if errors.As(err, &fe) {
			if store.IsURL(f.DBPath) {
				return nil, setupErr("%v; read them (psql: \\d+ TABLE), then drop them with --drop-foreign-triggers (as a role that owns the tables), or use another --db or --db-schema", message.Printable(f.redact(err).Error()))
			}
			return nil, setupErr("%v; read them (sqlite3 %s .schema), then drop them with --drop-foreign-triggers, or use another --db", message.Printable(f.redact(err).Error()), f.DBPath)
		}
		if err != nil {
			return nil, setupErr("%v", f.redact(err))
		}
		return s, nil
	}
	writable := func(s *store.Store, err error) (*store.Store, error) {
		if err != nil {
			return nil, err
		}
		if err := s.CheckWritable(context.Background()); err != nil {
			s.Close()
			return nil, setupErr("%v", f.redact(err))
		}
		return s, nil
	}
	// The commands that create the database also write to it on every
	// delivery: a read-only file is refused now, not answered 503 later.
	f.Store = func() (*store.Store, error) { return writable(open()) }
	f.ExistingStore = func() (*store.Store, error) {
		if store.IsURL(f.DBPath) {
			return open() // a Postgres store is created on first use by any command
		}
		if _, err := os.Stat(f.DBPath); errors.Is(err, os.ErrNotExist) && strings.TrimSpace(f.DBPath) != "" {
			return nil, setupErr("no database at %s (capture or import deliveries first, or pass --db / HOOKREPLAY_DB)", f.DBPath)
		}
		return open()
	}
	f.ExistingWritableStore = func() (*store.Store, error) { return writable(f.ExistingStore()) }
	return f
}

// declare reads the provider schemes declared for this run, the providers:
// section of the config file (--config when the command has it, else
// hookreplay.yaml in the working directory) and then each --declare, and
// registers them with verify, so that every command (capture's detection,
// the TUI, check) sees the same registry.
func (f *factory) declare(cmd *cobra.Command, declares []string) error {
	path := config.Find(".")
	if fl := cmd.Flags().Lookup("config"); fl != nil && fl.Changed {
		path = fl.Value.String()
	}
	var ps []config.Provider
	if path != "" {
		var err error
		if ps, err = config.LoadProviders(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return usageErr("%v", err)
		}
	}
	for _, d := range declares {
		more, err := config.ParseDeclare(d)
		if err != nil {
			return usageErr("%v", err)
		}
		for _, m := range more {
			ps = slices.DeleteFunc(ps, func(p config.Provider) bool { return p.Scheme.Name() == m.Scheme.Name() })
			ps = append(ps, m)
		}
	}
	schemes := make([]verify.Scheme, len(ps))
	for i, p := range ps {
		schemes[i] = p.Scheme
	}
	if err := verify.Register(schemes); err != nil {
		return usageErr("%v", err)
	}
	f.Declared = ps
	return nil
}

// redact removes the credentials of --db from err's message (the store
// never puts them there; this holds for whatever wraps its errors too).
func (f *factory) redact(err error) error {
	var s redact.Secrets
	s.AddURL(f.DBPath)
	return s.Error(err)
}

// NewRootCmd builds the command tree over io.
func NewRootCmd(io *iostreams.IO) *cobra.Command {
	f := newFactory(io)
	var noColor, noPager bool
	var declares []string
	root := &cobra.Command{
		Use:   "hookreplay",
		Short: "Prove that a webhook handler is idempotent",
		Long: `hookreplay captures real webhook deliveries byte for byte, replays them the way
providers really deliver (duplicates, concurrent bursts, lost responses, out of
order), verifies and re-signs provider signatures, and checks with side-effect
probes that only the first copy of an event changed anything.

Start with:  hookreplay demo

Exit codes (every command): 0 success, 1 a check or verification failed,
2 usage or setup error (the one line on stderr says what to do), 3
inconclusive (the probes saw no effect), 130 interrupted (143 SIGTERM,
129 SIGHUP). Each command's --help says what its own codes mean.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if noColor {
				f.IO.SetColor(false)
			}
			if noPager {
				f.IO.SetPager("")
			}
			return f.declare(cmd, declares)
		},
	}
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetIn(io.In)
	defaultDB := "hookreplay.db"
	if env := os.Getenv("HOOKREPLAY_DB"); env != "" {
		defaultDB = env
	}
	root.PersistentFlags().StringVar(&f.DBPath, "db", defaultDB, "the store: a SQLite file, or a postgres://user@host:5432/db?sslmode=... URL for a team store shared by many machines (password from PGPASSWORD or ~/.pgpass; see docs/postgres.md) (env HOOKREPLAY_DB)")
	// --help shows HOOKREPLAY_DB's value as the default: never its password.
	root.PersistentFlags().Lookup("db").DefValue = store.Display(defaultDB)
	markEnvDefault(root.PersistentFlags(), "db", "hookreplay.db")
	root.PersistentFlags().StringVar(&f.DBSchema, "db-schema", "", "with a postgres:// --db: the schema hookreplay's tables live in (default: the URL's search_path, else hookreplay)")
	root.PersistentFlags().BoolVar(&f.DropForeignTriggers, "drop-foreign-triggers", false, "drop the triggers, rules and views on the --db's tables that hookreplay did not create (they could change or remove deliveries as capture stores them); without it such a database is refused")
	root.PersistentFlags().StringArrayVar(&declares, "declare", nil, "declare a provider scheme for this run, as an entry of hookreplay.yaml's providers: in YAML flow style: 'acme: {signature_header: Acme-Signature, format: \"t={timestamp},v1={signature}\", signed: \"{timestamp}.{body}\"}' (repeatable; replaces a declaration of the same name; see docs/providers.md)")
	root.PersistentFlags().BoolVar(&noPager, "no-pager", false, "do not page long output (show, runs show, check's report) through $PAGER; it is paged only when stdout is a terminal")
	root.PersistentFlags().BoolVar(&noColor, "no-color", false, "disable colour (also NO_COLOR, and off when stdout is not a terminal)")
	addCommands(root, f)
	wordCommandLine(root)
	addCompletions(root, f)
	return root
}

// Execute runs hookreplay with os.Args; nil means exit 0, otherwise the
// *ExitError carries the exit code and the line to print.
func Execute(ctx context.Context) *ExitError {
	root := NewRootCmd(iostreams.System())
	root.SetArgs(joinJSONFields(root, os.Args[1:]))
	return asExitError(root.ExecuteContext(ctx))
}

// secretFlags resolves --secret S / --secret-env NAME into the secret ("" when
// neither is given). The secret is only ever held in memory.
func secretFlags(secret, env string) (string, error) {
	if env == "" {
		return secret, nil
	}
	if secret != "" {
		return "", usageErr("give either --secret or --secret-env, not both")
	}
	secret = os.Getenv(env)
	if secret == "" {
		return "", usageErr("--secret-env %s: the environment variable is not set or empty", env)
	}
	return secret, nil
}

// ExitError is an error with the exit code hookreplay ends with: 1 a check or
// verification failed, 2 usage or setup error, 3 inconclusive, 130
// interrupted. Err is the one line printed on stderr; a nil Err exits
// without printing (the command already reported). main maps it to the
// process exit code; nothing else exits.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

func usageErr(format string, a ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, a...)}
}

func setupErr(format string, a ...any) error {
	// A store or probe cut short by Ctrl-C (or SIGTERM, SIGHUP) is no setup
	// error: 'replay --last' interrupted while reading its delivery exited 2
	// with 'read delivery: context canceled'.
	var pe *panics.Error
	for _, v := range a {
		if err, ok := v.(error); ok && errors.Is(err, context.Canceled) {
			return errInterrupted
		}
		if err, ok := v.(error); ok && pe == nil {
			errors.As(err, &pe)
		}
	}
	err := fmt.Errorf(format, a...)
	if pe != nil {
		// A panic an engine caught, worded here: main still tells it
		// for a bug to report (internal error, exit 2).
		err = &caughtPanic{text: err.Error(), pe: pe}
	}
	return &ExitError{Code: 2, Err: err}
}

// caughtPanic is a command's words for an error that holds a panic.
type caughtPanic struct {
	text string
	pe   *panics.Error
}

func (c *caughtPanic) Error() string { return c.text }
func (c *caughtPanic) Unwrap() error { return c.pe }

func failErr(format string, a ...any) error {
	return &ExitError{Code: 1, Err: fmt.Errorf(format, a...)}
}

// silentExit ends the process with code without printing (the command already reported).
func silentExit(code int) error {
	return &ExitError{Code: code}
}

// ExitInterrupted is the exit code of a command stopped by a signal; main
// makes it 128 + the signal's number (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
const ExitInterrupted = 130

// Interrupt is the cause a command's context is cancelled with when a
// signal stops it (main cancels it so): check names the signal in its
// report (check.Signaller).
type Interrupt struct{ Signal os.Signal }

func (i Interrupt) Error() string { return "interrupted by " + i.SignalName() }

// SignalName is the signal's usual name: SIGINT, SIGTERM, SIGHUP.
func (i Interrupt) SignalName() string {
	switch i.Signal {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return i.Signal.String()
}

// errInterrupted ends a run stopped by SIGINT, SIGTERM or SIGHUP.
var errInterrupted = &ExitError{Code: ExitInterrupted, Err: interrupted{}}

// interrupted is errInterrupted's message; it is a context.Canceled, as the
// TUI and callers that stop a run themselves test for.
type interrupted struct{}

func (interrupted) Error() string        { return "interrupted" }
func (interrupted) Is(target error) bool { return target == context.Canceled }

// asExitError gives what the command tree returned its exit code: an
// *ExitError keeps its own, an interrupted context is 130, and anything else
// (cobra's own unknown-command, unknown-flag and argument-count errors
// included) is a usage or setup error, 2.
func asExitError(err error) *ExitError {
	if err == nil {
		return nil
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee
	}
	if errors.Is(err, context.Canceled) {
		return errInterrupted
	}
	if w := wordCobraError(err); w != err {
		return asExitError(w)
	}
	return &ExitError{Code: 2, Err: err}
}
