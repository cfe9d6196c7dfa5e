package keycheck

import "fmt"

// Input is something the user gives a keycheck, as a message mentions it.
// The engine never names a command-line flag: it asks Options.Name (cmd
// answers "--slow-body"), or says it in plain words.
type Input int

// The inputs messages mention.
const (
	InputProbe Input = iota + 1
	InputSlowBody
	InputFailBody
	InputInvalidBody
	InputAlso
	InputOtherAccount
	InputStoreCmds
	InputTTL
	InputReplayHeader
	InputMaxKeyLength
	InputGetPath
	InputIDPath
	InputSettleMax
	InputBody
	InputHeader
	InputKeyHeader
	InputKeyPattern
	InputReset
)

// String names the input in plain words.
func (in Input) String() string {
	switch in {
	case InputProbe:
		return "a probe"
	case InputSlowBody:
		return "a slow body"
	case InputFailBody:
		return "a body that fails once with a 5xx"
	case InputInvalidBody:
		return "an invalid body"
	case InputAlso:
		return "other routes"
	case InputOtherAccount:
		return "another account's credentials"
	case InputStoreCmds:
		return "commands that stop and start the idempotency store"
	case InputTTL:
		return "the key's time to live"
	case InputReplayHeader:
		return "the replay header"
	case InputMaxKeyLength:
		return "the longest key"
	case InputGetPath:
		return "a path to GET"
	case InputIDPath:
		return "the JSON path of the id"
	case InputSettleMax:
		return "the longest settle time"
	case InputBody:
		return "the request body"
	case InputHeader:
		return "a request header"
	case InputKeyHeader:
		return "the key's header"
	case InputKeyPattern:
		return "the key pattern"
	case InputReset:
		return "the reset command"
	}
	return fmt.Sprintf("input %d", int(in))
}

// SetupError is a problem with the inputs or the environment (a probe that
// cannot be read, a command that fails, a first request the API refuses):
// exit 2, never a verdict.
type SetupError struct{ Err error }

func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *SetupError) Unwrap() error { return e.Err }

func setupf(format string, a ...any) error { return &SetupError{Err: fmt.Errorf(format, a...)} }
