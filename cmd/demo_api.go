package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/demo/idemapi"
	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// demoAPIVariants are the variants 'demo api' serves: the correct API
// first, then one per common mistake, each named as keycheck's tests name
// it, with the check that catches it.
var demoAPIVariants = []struct {
	name    string
	mistake idemapi.Mistake
	what    string
}{
	{"correct", idemapi.Correct, "honours the key: every check passes"},
	{"race", idemapi.Race, "checks the key, then records it 2 ms later: only burst fails"},
	{"5xx", idemapi.Store5xx, "keeps a 500 and replays it: 5xx fails"},
	{"fingerprint", idemapi.NoFingerprint, "replays the stored answer to another body: reuse-* and 4xx fail"},
	{"inflight", idemapi.NoInFlight, "records the key only when done: in-flight fails, and burst when its copies overlap"},
	{"replayheader", idemapi.NoReplayHeader, "does not mark replays: replay-header fails"},
	{"scope", idemapi.Unscoped, "shares keys between accounts: scope fails (a data leak)"},
}

// demoAPIMaxBody bounds a request body the stand-in reads.
const demoAPIMaxBody = 1 << 20

type demoAPIOptions struct {
	IO      *iostreams.IO
	Variant string
	Listen  string
}

// newDemoAPICmd is `hookreplay demo api VARIANT`: a small messaging API
// that honours Idempotency-Key (or makes one common mistake), so keycheck
// can be tried before it is pointed at a real API.
func newDemoAPICmd(f *factory, runF func(*demoAPIOptions) error) *cobra.Command {
	o := &demoAPIOptions{IO: f.IO}
	var names, lines []string
	for _, v := range demoAPIVariants {
		names = append(names, v.name)
		lines = append(lines, fmt.Sprintf("  %-13s%s", v.name, v.what))
	}
	cmd := &cobra.Command{
		Use:   "api " + strings.Join(names, "|"),
		Short: "Run an example API that honours Idempotency-Key (or makes one mistake), for keycheck",
		Long: `Run a small messaging API, written to the bird profile's Idempotency-Key
contract (docs/keycheck.md), to try 'hookreplay keycheck' on before your own
API. In one of these variants:

` + strings.Join(lines, "\n") + `

POST /v1/messages takes {"text": "...", "delay_ms": N, "fail_once": true}
(a body without "text" is refused with 400; "delay_ms" makes the operation
take that long; "fail_once" answers 500 the first time its text is seen);
GET, PATCH and DELETE /v1/messages/{id} work on one message. Every request
needs "Authorization: AccessKey ACCOUNT". GET /debug/count answers the number
of operations done, the side effect a keycheck probes (--probe-http). It keeps
everything in memory, prints one line when it accepts connections, and stops
on Ctrl-C or SIGTERM.`,
		Example: `  # a check-then-insert claim: every sequential check passes, burst does not (exit 1)
  hookreplay demo api race --listen 127.0.0.1:8080 &
  sleep 1
  hookreplay keycheck --to http://127.0.0.1:8080/v1/messages --body '{"text":"hi {{nonce}}"}' \
    -H 'Authorization: AccessKey acct_a' --other-account 'Authorization: AccessKey acct_b' \
    --probe-http count=http://127.0.0.1:8080/debug/count -q
  kill %1; wait   # stop the API`,
		ValidArgs: names,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErr("demo api takes one variant: %s (see '%s --help')", strings.Join(names, ", "), cmd.CommandPath())
			}
			for _, n := range names {
				if args[0] == n {
					return nil
				}
			}
			return usageErr("unknown variant %q: want %s", args[0], strings.Join(names, ", "))
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Variant = args[0]
			if runF != nil {
				return runF(o)
			}
			return demoAPIRun(cmd.Context(), o)
		},
	}
	listenFlag(cmd.Flags(), &o.Listen, "listen", "127.0.0.1:8080", "address to serve on (host:port)")
	return cmd
}

func demoAPIRun(ctx context.Context, o *demoAPIOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var api *idemapi.API
	for _, v := range demoAPIVariants {
		if v.name == o.Variant {
			api = idemapi.New(v.mistake)
		}
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return setupErr("demo api %s: listen on %s: %v%s", o.Variant, o.Listen, errors.Unwrap(err), portInUseHint(err, "--listen"))
	}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, demoAPIMaxBody)
			api.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(o.IO.Out, "api %s listening on http://%s/v1/messages (operations counted at /debug/count)\n", o.Variant, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return setupErr("demo api %s: %v", o.Variant, err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(shut)
	<-done
	return nil
}
