package check

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// SetupError is a problem with the check's inputs or environment (a probe
// that cannot be read, a reset command that fails): exit 2, never a verdict.
// Err is often one of the typed errors below, which the caller words for
// its users (cmd names its flags).
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *SetupError) Unwrap() error { return e.Err }

func setupf(format string, a ...any) error { return &SetupError{Err: fmt.Errorf(format, a...)} }

// Input is something the user gives a check run, as a message mentions it.
// The engine never names a CLI flag: messages that tell the user what to
// give ask Options.Name for the input's name (cmd answers with its flag,
// "--secret"), and errors carry the Input typed.
type Input int

// The inputs messages mention.
const (
	// InputProbe is at least one probe.
	InputProbe Input = iota + 1
	// InputSecret is the handler's signing secret.
	InputSecret
	// InputSecretSources is the signing secret, mentioning every way to give it.
	InputSecretSources
	// InputServe is the command that starts the handler.
	InputServe
	// InputReset is the command that restores the handler's state.
	InputReset
	// InputTwoDeliveries is two or more deliveries to check.
	InputTwoDeliveries
	// InputSettle is how long probes must hold still before a reading counts.
	InputSettle
	// InputSettleMax is the longest wait for probes to settle.
	InputSettleMax
	// InputProviderTimeout is the answer timeout latency is judged against.
	InputProviderTimeout
	// InputSeed is the seed of the order phase's shuffles.
	InputSeed
	// InputTarget is the handler's URL.
	InputTarget
	// InputCopies is the number of copies first and dups send.
	InputCopies
	// InputSinkMatch selects the sink calls that count.
	InputSinkMatch
	// InputProviderFilter picks the newest delivery of one provider.
	InputProviderFilter
	// InputDedupeTTL is how long the handler remembers an event id.
	InputDedupeTTL
	// InputForget is the command that makes the handler forget an event id.
	InputForget
	// InputRedisProbe is a Redis probe that reads the handler's keys.
	InputRedisProbe
	// InputKill is the command that kills the handler (with the one that
	// starts it again).
	InputKill
)

// String names the input in plain words: what messages say when
// Options.Name does not name it.
func (in Input) String() string {
	switch in {
	case InputProbe:
		return "a probe"
	case InputSecret, InputSecretSources:
		return "the signing secret"
	case InputServe:
		return "the command that starts the handler"
	case InputReset:
		return "a reset command"
	case InputTwoDeliveries:
		return "two or more deliveries"
	case InputSettle:
		return "the settle time"
	case InputSettleMax:
		return "the longest settle time"
	case InputProviderTimeout:
		return "the provider timeout"
	case InputSeed:
		return "the seed"
	case InputTarget:
		return "the handler's URL"
	case InputCopies:
		return "a copy count of"
	case InputSinkMatch:
		return "call pattern"
	case InputProviderFilter:
		return "a provider filter"
	case InputDedupeTTL:
		return "how long the handler remembers an event id"
	case InputForget:
		return "a command that makes the handler forget an event id"
	case InputRedisProbe:
		return "a Redis probe counting the dedupe keys"
	case InputKill:
		return "the command that kills the handler"
	}
	return fmt.Sprintf("input %d", int(in))
}

// MissingInput is a check that cannot start without an input: Phase is the
// phase that needs it, or "" when the whole check does.
type MissingInput struct {
	Need  Input
	Phase string
}

func (e *MissingInput) Error() string {
	if e.Phase == "" {
		return "no " + e.Need.String() + " given"
	}
	return "phase " + e.Phase + " needs " + e.Need.String()
}

// SecretError is a secret that a delivery's provider scheme cannot sign
// with (a Standard Webhooks secret that is not whsec_ + base64).
type SecretError struct {
	DeliveryID int64
	Provider   string
	Err        error
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("the secret cannot sign delivery %d (%s): %v", e.DeliveryID, e.Provider, e.Err)
}

// Unwrap returns the underlying error.
func (e *SecretError) Unwrap() error { return e.Err }

// ResetError is a reset command that failed or did not finish.
type ResetError struct{ Err error }

func (e *ResetError) Error() string { return "reset command: " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ResetError) Unwrap() error { return e.Err }

// NotListeningError is a first copy that found nothing listening at the
// target: a handler that is not running (or a wrong URL), not a handler
// that dropped a delivery. Err is the connection error.
type NotListeningError struct {
	Target *url.URL
	Err    string
}

func (e *NotListeningError) Error() string {
	return fmt.Sprintf("nothing is listening at %s (%s): start the handler", e.Target, e.Err)
}

// ServeProblem is what went wrong starting the handler process.
type ServeProblem int

// The ways starting the handler fails.
const (
	// ServeAddrInUse: something already accepted connections on Addr before
	// the handler was started.
	ServeAddrInUse ServeProblem = iota + 1
	// ServeNoStart: the process could not be started (Err).
	ServeNoStart
	// ServeExited: the process exited (State) before Addr accepted connections.
	ServeExited
	// ServeNotReady: nothing accepted connections on Addr within Timeout.
	ServeNotReady
	// ServeNotRunning: no command starts the handler (only a kill
	// command restarts it), and nothing accepts connections on Addr.
	ServeNotRunning
	// ServeKillFailed: the kill command (Cmd) failed (Err), or Addr still
	// accepted connections Timeout after it.
	ServeKillFailed
)

// ServeError is a handler process (Server) that did not start serving.
// Restart is set when it was the crash phase's restart that failed. Output
// is the tail of what the process printed, indented.
type ServeError struct {
	Problem ServeProblem
	// ByStartCmd: Cmd is the Server's StartCmd (a restart after a kill).
	ByStartCmd bool
	Cmd        string
	Addr       string
	State      string
	Timeout    time.Duration
	Output     string
	Err        error
	Restart    bool
}

func (e *ServeError) Error() string {
	if e.Problem == ServeAddrInUse && e.Restart && !e.ByStartCmd {
		return fmt.Sprintf("crash phase: restart: %s still accepts connections after the handler's process group was killed: the server left the group (setsid, a daemon), so the kill did not stop it; give kill and start commands", e.Addr)
	}
	var s string
	switch e.Problem {
	case ServeAddrInUse:
		s = fmt.Sprintf("%s already accepts connections before the handler was started: stop whatever listens there", e.Addr)
	case ServeNoStart:
		s = fmt.Sprintf("start the handler %q: %v", e.Cmd, e.Err)
	case ServeExited:
		s = fmt.Sprintf("the handler %q exited (%s) before %s accepted connections; its output:\n%s", e.Cmd, e.State, e.Addr, e.Output)
	case ServeNotRunning:
		s = fmt.Sprintf("nothing accepts connections on %s: start the handler first, or give the command that starts it", e.Addr)
	case ServeKillFailed:
		if e.Err != nil {
			s = fmt.Sprintf("the kill command: %v", e.Err)
		} else {
			s = fmt.Sprintf("the kill command %q ran, but %s still accepted connections %s later: it did not stop the handler", e.Cmd, e.Addr, e.Timeout)
		}
	default:
		s = fmt.Sprintf("the handler %q: %snothing accepted connections on %s within %s; its output:\n%s", e.Cmd, exitedText(e.State), e.Addr, e.Timeout, e.Output)
	}
	if e.Restart {
		return "crash phase: restart: " + s
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ServeError) Unwrap() error { return e.Err }

// CapturedSignatureError is a delivery whose own captured signature does not
// verify with the secret given: the secret is not the one the provider
// signed with, so every re-signed copy would carry a signature the handler
// rejects.
type CapturedSignatureError struct {
	DeliveryID int64
	Provider   string
	Reason     string
	// Providers names, sorted, every provider whose deliveries the run
	// holds when there are several: each signs with a secret of its own,
	// so one secret cannot be right for all of them.
	Providers []string
}

func (e *CapturedSignatureError) Error() string {
	if len(e.Providers) > 1 {
		return fmt.Sprintf("delivery %d's captured %s signature does not verify with the secret given (%s): the deliveries are of %d providers (%s), each signing with a secret of its own; check one provider at a time",
			e.DeliveryID, e.Provider, e.Reason, len(e.Providers), strings.Join(e.Providers, ", "))
	}
	return fmt.Sprintf("delivery %d's captured %s signature does not verify with the secret given (%s): it is not the secret the delivery was signed with", e.DeliveryID, e.Provider, e.Reason)
}

// RejectedError is a handler that refused a correctly re-signed first copy
// (Status 400, 401 or 403) without any effect: a wrong secret, a wrong
// route, or a handler that verifies something other than the raw body — a
// setup problem, not an idempotency bug. Body is the start of its answer,
// escaped; CapturedStatus the answer the delivery got when it was captured.
type RejectedError struct {
	DeliveryID     int64
	Status         int
	Body           string
	CapturedStatus int
	// Refusal, when set, is a reason the provider's own libraries refuse
	// a correctly signed delivery such as this one (verify.LibraryRefusal).
	Refusal string
	// Provider is the delivery's; SignedURL, when its provider signs the
	// URL it posts to, the URL the copy was signed for.
	Provider  string
	SignedURL string
}

func (e *RejectedError) Error() string {
	return e.Text("the secret", "the URL")
}

// Text is the error's message naming the secret's and the target's inputs
// as the user gave them (--secret and --to on the command line).
func (e *RejectedError) Text(secret, target string) string {
	s := fmt.Sprintf("the handler rejected a correctly signed copy of delivery %d (answered %d%s)", e.DeliveryID, e.Status, bodyText(e.Body))
	if rejectsSignature(e.CapturedStatus) {
		s += fmt.Sprintf("; it answered %d to the captured delivery too, so the provider's own request fails the same check", e.CapturedStatus)
	}
	s += fmt.Sprintf("; the copy is signed with %s, so %s", secret, verify.MismatchCauses(verify.ByHandler, secret))
	if e.Refusal != "" {
		s += ", or " + e.Refusal
	}
	if e.Status == http.StatusBadRequest {
		// 400 is also what handlers answer an event they will not take
		// (a field missing, a type they do not handle): not a signature.
		s += ", or it refused the event itself, not its signature (a field it requires, an event type or shape it does not take"
		if e.Body != "" {
			s += ": its answer may say which"
		}
		s += ")"
	}
	return s + fmt.Sprintf(", or %s is not its webhook route", target)
}

// RouteError is a first copy answered 404 or 405 without any effect: no
// webhook route at the target's path, most likely — a setup problem, not a
// handler bug. CapturedPath is the path the delivery was captured at.
type RouteError struct {
	DeliveryID   int64
	Status       int
	Body         string
	Method       string
	Path         string
	CapturedPath string
}

func (e *RouteError) Error() string {
	return e.Text("the URL")
}

// Text is the error's message naming the target's input as the user gave
// it (--to on the command line).
func (e *RouteError) Text(target string) string {
	s := fmt.Sprintf("the handler answered %d to the first copy of delivery %d (%s%s) and changed nothing: nothing serves %s at %s's path %s",
		e.Status, e.DeliveryID, http.StatusText(e.Status), bodyText(e.Body), e.Method, target, e.Path)
	if e.CapturedPath != "" && e.CapturedPath != e.Path {
		s += fmt.Sprintf(" (the delivery was captured at %s)", e.CapturedPath)
	}
	return s + fmt.Sprintf(": give %s the handler's webhook route", target)
}

// bodyText is ": BODY" for an answer body worth showing, else "".
func bodyText(b string) string {
	if b == "" {
		return ""
	}
	return ": " + b
}

// exitedText says that a command waited for exited with state (exit status
// 0), when it did.
func exitedText(state string) string {
	if state == "" {
		return ""
	}
	return "it exited (" + state + ") and "
}
