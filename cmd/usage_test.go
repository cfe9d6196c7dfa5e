package cmd

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
)

// runRoot runs the whole command tree as main does and returns the exit
// code, the error line and stdout.
func runRoot(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	io, _, out, _ := iostreams.Test()
	root := NewRootCmd(io)
	root.SetArgs(args)
	code, msg := exitCode(root.Execute())
	return code, msg, out.String()
}

func TestUsageErrorsAreWorded(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show"}, "show needs ID (usage: hookreplay show ID; see 'hookreplay show --help')"},
		{[]string{"show", "1", "2"}, "show takes ID, got 2 arguments (1 2)"},
		{[]string{"runs", "show"}, "runs show needs RUN"},
		{[]string{"list", "foo"}, `list takes no arguments, got "foo"`},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1", "--timeout", "5"}, "--timeout 5: give a unit, e.g. 5s"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1", "--timeout", "soon"}, "--timeout soon: not a duration; e.g. 500ms, 5s, 2m or 1h30m"},
		{[]string{"replay", "1", "--to", "http://127.0.0.1:1", "-n", "abc"}, "--copies abc: not a whole number"},
		{[]string{"list", "--limit", "99999999999999999999"}, "--limit 99999999999999999999: too large"},
		{[]string{"replay", "1", "--speedup", "fast"}, "--speedup fast: not a number"},
		{[]string{"replay", "--to"}, "--to needs a value (see 'hookreplay replay --help')"},
		{[]string{"completion", "tcsh"}, "completion tcsh: not a shell hookreplay writes completions for (bash, zsh, fish, powershell)"},
		{[]string{"capture", "--listen", "99999"}, "--listen 99999: port 99999 is out of range (0 to 65535)"},
		{[]string{"capture", "--listen", "127.0.0.1:abc"}, `--listen 127.0.0.1:abc: port "abc" is not a number from 0 to 65535`},
		{[]string{"capture", "--listen", "localhost"}, "--listen localhost: want a port (9000), host:port (127.0.0.1:9000) or [::1]:9000"},
		{[]string{"demo", "serve", "fixed", "--listen", "70000"}, "--listen 70000: port 70000 is out of range"},
		{[]string{"capture", "--forward", "ht!tp://x"}, "--forward ht!tp://x: want a URL (http://localhost:3000/webhooks), a port (3000) or host:port"},
		// Found trying every flag of every command with a bad value.
		{[]string{"show", "1", "--raw=maybe"}, "--raw maybe: want true or false (the flag alone means true)"},
		{[]string{"--no-color=maybe", "list"}, "--no-color maybe: want true or false"},
		{[]string{"replay", "1", "--to", "3000", "--json=run,nope"}, `--json: unknown field "nope" (fields: attempts, run, summary, warnings)`},
		{[]string{"runs", "--json=nope"}, `--json: unknown field "nope" (fields: attempts, finished_at, id,`},
		{[]string{"runs", "show", "1", "--json=nope"}, `--json: unknown field "nope" (fields: attempts, run)`},
		{[]string{"verify", "--json=nope"}, `--json: unknown field "nope" (fields: age_seconds,`},
		{[]string{"check", "1", "--to", "3000", "--probe-http", "zzz"}, "--probe-http zzz: want a URL (http://localhost:3000/webhooks)"},
		{[]string{"check", "1", "--to", "3000", "--probe-http", "http://127.0.0.1:99999/x"}, "--probe-http http://127.0.0.1:99999/x: port 99999 is out of range"},
		{[]string{"check", "1", "--to", "3000", "--probe-cmd", ""}, `--probe-cmd "": empty command`},
		{[]string{"check", "1", "--to", "3000", "--probe-sql", "SELECT 1", "--dsn", "w.db"}, "--dsn w.db: want sqlite:PATH or postgres://USER@HOST/DB (a SQLite file: --dsn sqlite:w.db)"},
		{[]string{"check", "1", "--to", "3000", "--probe-cmd", "true", "--sink", "zzz"}, "--sink zzz: want a port (9000), host:port"},
		{[]string{"check", "1", "--to", "3000", "--probe-cmd", "true", "--sink", "n=99999"}, "--sink 99999: port 99999 is out of range"},
		{[]string{"replay", "--event-id", "", "--to", "3000"}, "--event-id is empty: give a provider event id"},
		{[]string{"check", "--event-id", " ", "--to", "3000", "--probe-cmd", "true"}, "--event-id is empty"},
		{[]string{"delete", "--event-id", ""}, "--event-id is empty"},
		{[]string{"list", "--event-id", ""}, "--event-id is empty"},
		{[]string{"export", "--event-id", ""}, "--event-id is empty"},
		{[]string{"--db", "", "list"}, "--db is empty: give the database file"},
		{[]string{"--db", " ", "capture"}, "--db is empty: give the database file"},
		{[]string{"sign", "--provider", "stripe", "--secret", "x", "--algo", "sha1"}, "--algo is for --provider generic: stripe's scheme fixes"},
		{[]string{"verify", "--provider", "github", "--secret", "x", "--encoding", "base64"}, "--encoding is for --provider generic"},
		// Unknown flags: the nearest flag, an alias, a prefix, a single dash.
		{[]string{"check", "--lastt"}, "unknown flag: --lastt; did you mean --last? (see 'hookreplay check --help')"},
		{[]string{"capture", "--port", "9000"}, "unknown flag: --port; did you mean --listen?"},
		{[]string{"replay", "--target", "x"}, "unknown flag: --target; did you mean --to?"},
		{[]string{"check", "--prov", "stripe"}, "unknown flag: --prov; did you mean --provider?"},
		{[]string{"verify", "--secretenv", "X"}, "unknown flag: --secretenv; did you mean --secret-env?"},
		{[]string{"--dbb", "x", "list"}, "unknown flag: --dbb; did you mean --db?"},
		{[]string{"capture", "-listen", "9000"}, "unknown flag -l in -listen; did you mean --listen?"},
		// Unknown commands: one line, the nearest command (cobra's took four
		// lines; 'help lst' exited 0 with the whole usage; 'runs shw 3'
		// said runs takes no arguments).
		{[]string{"lst"}, `unknown command "lst" for hookreplay; did you mean list? (see 'hookreplay --help')`},
		{[]string{"--db", "x.db", "chek", "--last"}, `unknown command "chek" for hookreplay; did you mean check?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" for hookreplay (see 'hookreplay --help')`},
		{[]string{"help", "lst"}, `unknown command "lst" for hookreplay; did you mean list?`},
		{[]string{"help", "runs", "shw"}, `unknown command "shw" for hookreplay runs; did you mean show?`},
		{[]string{"runs", "shw", "3"}, `unknown command "shw" for hookreplay runs; did you mean show? (see 'hookreplay runs --help')`},
		{[]string{"demo", "serv", "racy"}, `unknown command "serv" for hookreplay demo; did you mean serve?`},
	} {
		code, msg, _ := runRoot(t, tt.args...)
		if code != 2 || !strings.Contains(msg, tt.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", tt.args, code, msg, tt.want)
		}
		for _, internal := range []string{"arg(s)", "strconv", "time: ", "invalid argument", "\n", "missing port", "lookup tcp", "parse \"", "no such file or directory", "write: ", "unsupported protocol scheme"} {
			if strings.Contains(msg, internal) {
				t.Errorf("%v: %q shows %q", tt.args, msg, internal)
			}
		}
	}
	if code, msg, out := runRoot(t, "completion", "bash"); code != 0 || !strings.Contains(out, "bash completion") {
		t.Errorf("completion bash: %d %q", code, msg)
	}
}

// A duration flag whose usage says what its default is does not end in
// "(default 0s)" because the value is wrapped for worded errors.
// TestHelpStillHelps: with no command the root prints its help, and help
// NAME (its unknown NAME now an error) still helps.
func TestHelpStillHelps(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"help", "runs", "show"}, {"--no-color"}} {
		code, msg, out := runRoot(t, args...)
		if code != 0 || msg != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d %q, want 0 and the help on stdout:\n%s", args, code, msg, out)
		}
	}
	if _, _, out := runRoot(t, "help", "runs", "show"); !strings.Contains(out, "hookreplay runs show RUN") {
		t.Errorf("help runs show is not runs show's help:\n%s", out)
	}
	// A new user's first --help says what the exit codes mean (only the
	// commands that judge said it before).
	if _, _, out := runRoot(t, "--help"); !strings.Contains(out, "Exit codes (every command): 0 success, 1 a check or verification failed,\n2 usage or setup error") {
		t.Errorf("hookreplay --help does not say what the exit codes mean:\n%s", out)
	}
}

func TestHelpHasNoZeroDurationDefault(t *testing.T) {
	for _, args := range [][]string{{"check", "--help"}, {"verify", "--help"}, {"tui", "--help"}} {
		code, msg, out := runRoot(t, args...)
		if code != 0 || !strings.Contains(out, "--provider-timeout") && !strings.Contains(out, "--tolerance") {
			t.Fatalf("%v: exit %d %q", args, code, msg)
		}
		if strings.Contains(out, "(default 0s)") {
			t.Errorf("%v prints (default 0s):\n%s", args, out)
		}
	}
}

// tui starts without --to: its help does not call it required.
func TestTUIHelpDoesNotRequireTo(t *testing.T) {
	code, msg, out := runRoot(t, "tui", "--help")
	if code != 0 || !strings.Contains(out, "--to url") {
		t.Fatalf("tui --help: exit %d %q", code, msg)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "--to url") && strings.Contains(l, "(required)") {
			t.Errorf("tui --help calls --to required: %s", l)
		}
	}
}

// A file a command is told to read and cannot is named in hookreplay's
// words, not Go's "open NAME: no such file or directory".
func TestMissingFilesAreNamed(t *testing.T) {
	db := filepath.Join(t.TempDir(), "f.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	d := &store.Delivery{Method: "POST", Target: "/h", Provider: "stripe", EventID: "evt_1", EventType: "invoice.paid",
		Raw: []byte("POST /h HTTP/1.1\r\nHost: x\r\n\r\n")}
	if err := st.InsertDelivery(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "/nonexistent/x.har"}, "import /nonexistent/x.har: no such file"},
		{[]string{"check", "--from", "/nonexistent/x.jsonl", "--to", "3000", "--probe-cmd", "true"}, "--from /nonexistent/x.jsonl: no such file"},
		{[]string{"replay", "1", "--to", "3000", "--body-file", "/nonexistent/b"}, "--body-file /nonexistent/b: no such file"},
		{[]string{"send", "--provider", "stripe", "--event", "invoice.paid", "--to", "3000", "--secret", "whsec_x", "--body", "/nonexistent/b.json"}, "--body /nonexistent/b.json: no such file"},
	} {
		code, msg, _ := runRoot(t, append([]string{"--db", db}, tt.args...)...)
		if code != 2 || msg != tt.want {
			t.Errorf("%v: exit %d %q, want 2 and %q", tt.args, code, msg, tt.want)
		}
	}
	// An empty --event-id named the oldest delivery of any event: delete
	// deleted it.
	if code, msg, _ := runRoot(t, "--db", db, "delete", "--event-id", ""); code != 2 || !strings.Contains(msg, "--event-id is empty") {
		t.Errorf("delete --event-id '': exit %d %q", code, msg)
	}
	if code, msg, out := runRoot(t, "--db", db, "list", "--json=id"); code != 0 || !strings.Contains(out, `"id": 1`) {
		t.Errorf("the delivery is gone after delete --event-id '': %d %q %s", code, msg, out)
	}
}

// TestUnknownFlagWithoutNeighbour: nothing near, nothing suggested; a
// hidden flag is never suggested.
func TestUnknownFlagWithoutNeighbour(t *testing.T) {
	for _, args := range [][]string{{"list", "--zzzzzz"}, {"list", "-z"}, {"capture", "--port"}} {
		code, msg, _ := runRoot(t, args...)
		if code != 2 || !strings.HasPrefix(msg, "unknown flag") {
			t.Errorf("%v: exit %d %q", args, code, msg)
		}
		if args[1] != "--port" && strings.Contains(msg, "did you mean") {
			t.Errorf("%v: %q suggests a flag far from what was typed", args, msg)
		}
	}
	if got := editDistance("lastt", "last"); got != 1 {
		t.Errorf("editDistance(lastt, last) = %d", got)
	}
}
