package cmd

import (
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type captureOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	Listen    string
	Forward   string
	Status    int
	MaxBody   int64
	MaxConns  int
	Source    string
	Retain    time.Duration // --retain: prune older deliveries while capturing
	Secret    string        // from --secret or --secret-env; never stored or printed
	SecretEnv string
	TUI       bool
	Sync      string // --sync: normal or full
	Quiet     bool   // no forwarder hints at start-up
}

func newCaptureCmd(f *factory, runF func(*captureOptions) error) *cobra.Command {
	o := &captureOptions{IO: f.IO, Store: f.Store}
	var maxBody, retain string
	cmd := &cobra.Command{
		Use:   "capture",
		Short: "Record every webhook delivery byte for byte (and forward it to your handler)",
		Long: `Run an HTTP/1.1 endpoint that stores every request it receives in the database:
the exact bytes read from the wire (request line, headers in their original
order and case, the body framing as sent), the decoded body, and the detected
provider, event id and event type. A delivery is committed before any byte of
the answer is written, so whatever got a 2xx is in the store.

Without --forward the answer is --status with body {"id":N}. With --forward the
request goes on to your handler (method, path and query appended to the URL's
path, headers minus hop-by-hop ones, Host set to the handler's and the sender's
passed as X-Forwarded-Host) and the handler's answer goes back unchanged; if
the handler cannot be reached the sender gets 502 and the delivery is kept with
the error. One line per delivery is printed on stdout.`,
		Example: `  # point a provider's forwarder or a tunnel at :9000, answer 200
  hookreplay capture --listen 127.0.0.1:9000

  # sit in front of the real handler and verify Stripe signatures as they arrive:
  # a delivery to http://127.0.0.1:9000/webhooks/stripe goes on to http://localhost:3000/webhooks/stripe
  STRIPE_SECRET=whsec_... hookreplay capture --forward http://localhost:3000 --secret-env STRIPE_SECRET`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := capture.ParseSize(maxBody)
			if err != nil {
				return usageErr("--max-body: %v", err)
			}
			if n > maxMaxBody {
				return usageErr("--max-body %s is out of range (1 byte to %s): a body is held in memory whole", maxBody, capture.FormatSize(maxMaxBody))
			}
			o.MaxBody = n
			if err := intFlagIn("--max-conns", o.MaxConns, 1, maxMaxConns); err != nil {
				return err
			}
			if o.Forward != "" {
				if cmd.Flags().Changed("status") {
					return usageErr("--status answers in place of a handler; it cannot be combined with --forward")
				}
				if _, err := handlerAddr("--forward", o.Forward); err != nil {
					return err
				}
			}
			if o.Status < 200 || o.Status > 599 {
				return usageErr("--status %d is not a final HTTP status (200-599)", o.Status)
			}
			secret, err := secretFlags(o.Secret, o.SecretEnv)
			if err != nil {
				return err
			}
			o.Secret = secret
			if retain != "" {
				d, err := capture.ParseAge(retain)
				if err != nil {
					return usageErr("--retain: %v", err)
				}
				if d < capture.MinRetain {
					return usageErr("--retain %s is shorter than the %s minimum: a delivery still being received or answered could be pruned", retain, strings.TrimSuffix(capture.MinRetain.String(), "0s"))
				}
				o.Retain = d
			}
			if !cmd.Flags().Changed("source") {
				o.Source = hostSource()
			}
			if _, err := store.ParseSync(o.Sync); err != nil {
				return usageErr("--sync %s: want normal or full", o.Sync)
			}
			if runF != nil {
				return runF(o)
			}
			return captureRun(cmd, o)
		},
	}
	listenFlag(cmd.Flags(), &o.Listen, "listen", "127.0.0.1:9000", "address to listen on")
	urlFlag(cmd.Flags(), &o.Forward, "forward", "", "handler base URL to forward each delivery to (the request's path and query are appended), e.g. http://localhost:3000 or 3000")
	cmd.Flags().IntVar(&o.Status, "status", 200, "status to answer with when not forwarding")
	cmd.Flags().StringVar(&maxBody, "max-body", "10MiB", "largest body accepted (10MiB, 512KB, or bytes); larger gets 413 and is not stored")
	cmd.Flags().IntVar(&o.MaxConns, "max-conns", capture.DefaultMaxConns(), "connections served at once (256 unless the open-file limit is low); beyond it idle keep-alive ones are closed, else new ones get 503")
	cmd.Flags().StringVar(&o.Source, "source", "", "name stored with every delivery, so that list --source and the TUI's source: tell apart captures writing one store (default: this host's name)")
	cmd.Flags().StringVar(&retain, "retain", "", "keep deliveries this long (7d, 36h; at least 10m): older ones are pruned at start and then every tenth of it, and at least hourly, while capturing, as 'hookreplay prune --older-than' does")
	cmd.Flags().StringVar(&o.Secret, "secret", "", "signing secret to verify each delivery with (prefer --secret-env)")
	cmd.Flags().StringVar(&o.SecretEnv, "secret-env", "", "name of the environment variable holding the signing secret")
	cmd.Flags().StringVar(&o.Sync, "sync", string(store.DefaultSync), "how a commit waits for the disk: normal keeps every answered delivery across a crash of hookreplay, full also across a power cut (an fsync per commit)")
	cmd.Flags().BoolVar(&o.TUI, "tui", false, "show deliveries in the interactive view (as 'hookreplay tui') while capturing")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "no start-up lines for forwarders and tunnels on stderr")
	return cmd
}

func captureRun(cmd *cobra.Command, o *captureOptions) error {
	if o.TUI && !o.IO.IsTerminal() {
		return usageErr("--tui needs a terminal (without it capture prints a line per delivery)")
	}
	sync, _ := store.ParseSync(o.Sync) // checked in RunE
	tuneGC()
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	if sync != store.DefaultSync {
		if err := st.SetSync(sync); err != nil {
			return setupErr("%v", err)
		}
	}
	var obs capture.Observer = captureLines{o.IO}
	var notes chan string
	if o.TUI {
		notes = make(chan string, 64)
		obs = captureNotes(notes)
	}
	srv, err := capture.New(st, capture.Options{Forward: o.Forward, Status: o.Status, MaxBody: o.MaxBody,
		MaxConns: o.MaxConns, Source: o.Source, Secret: o.Secret, Retain: o.Retain, Observer: obs})
	if err != nil {
		return usageErr("%v", err)
	}
	ln, err := capture.Listen(o.Listen)
	if err != nil {
		return setupErr("%v%s", err, portInUseHint(err, "--listen"))
	}
	addr := ln.Addr().String()
	answer := fmt.Sprintf("answering %d", o.Status)
	if o.Forward != "" {
		answer = "forwarding to " + o.Forward
	}
	warning := ""
	if !capture.IsLoopback(o.Listen) {
		warning = fmt.Sprintf("warning: %s is not a loopback address: anyone who can reach it on the network can write into %s", o.Listen, st.Path())
	}
	if o.TUI {
		return captureTUI(cmd.Context(), o, st, srv, ln, notes, fmt.Sprintf("capturing on http://%s, %s %s", addr, answer, warning))
	}
	fmt.Fprintf(o.IO.ErrOut, "hookreplay: capturing on http://%s into %s, %s (Ctrl-C to stop)\n", addr, st.Path(), answer)
	if warning != "" {
		fmt.Fprintf(o.IO.ErrOut, "hookreplay: %s\n", warning)
	}
	if !o.Quiet {
		for _, l := range forwarderHints(addr) {
			fmt.Fprintln(o.IO.ErrOut, l)
		}
	}
	return srv.Serve(cmd.Context(), ln)
}

// captureTUI serves captures while the TUI shows them; quitting the TUI
// stops the capture.
func captureTUI(ctx context.Context, o *captureOptions, st *store.Store, srv *capture.Server, ln net.Listener, notes <-chan string, banner string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	// A panic of the capture's goroutine stops the TUI (the terminal
	// restored) and is raised here, for main's one line.
	trap := panics.Trap{OnPanic: cancel}
	go func() {
		var err error
		defer func() { served <- err }()
		defer trap.Guard()
		err = srv.Serve(ctx, ln)
	}()
	t := &tuiOptions{IO: o.IO}
	t.Check.IO, t.Check.Secret = o.IO, o.Secret
	t.Check.Store, t.Check.ExistingStore = o.Store, o.Store
	err := tuiRun(ctx, t, &tuiSession{store: st, notes: notes, banner: strings.TrimSpace(banner), forward: o.Forward})
	cancel()
	serr := <-served
	trap.Rethrow()
	if err == nil && serr != nil && !errors.Is(serr, context.Canceled) {
		return setupErr("%v", serr)
	}
	return err
}

// captureNotes shows capture's problems in the TUI's status bar; deliveries
// need no note (the TUI sees them in the store).
type captureNotes chan string

func (c captureNotes) Delivered(*store.Delivery, time.Duration) {}

func (c captureNotes) Problem(msg string) {
	select {
	case c <- msg:
	default: // the TUI is behind: the newest problem can wait for the next
	}
}

// captureLines prints capture's live view: a line per delivery on stdout,
// problems on stderr.
type captureLines struct{ io *iostreams.IO }

func (c captureLines) Delivered(d *store.Delivery, latency time.Duration) {
	fmt.Fprintln(c.io.Out, report.CaptureLine(report.Colors(c.io.ColorEnabled()), d, latency))
}

func (c captureLines) Problem(msg string) { fmt.Fprintf(c.io.ErrOut, "hookreplay: %s\n", msg) }

// Pruned says on stderr what --retain removed.
func (c captureLines) Pruned(n int64, cutoff time.Time) {
	fmt.Fprintf(c.io.ErrOut, "hookreplay: --retain: removed %d %s received before %s\n", n, deliveriesWord(n),
		cutoff.Local().Format("2006-01-02 15:04:05"))
}

// Pruned shows in the TUI's status bar what --retain removed.
func (c captureNotes) Pruned(n int64, cutoff time.Time) {
	c.Problem(fmt.Sprintf("--retain: removed %d %s received before %s", n, deliveriesWord(n),
		cutoff.Local().Format("2006-01-02 15:04:05")))
}

// hostSource is capture's --source when none is given: the host's name, so
// that deliveries several machines capture into one store say where each came in.
func hostSource() string {
	h, err := os.Hostname()
	if err != nil {
		return ""
	}
	return h
}

// tuneGC trades memory for CPU in capture and replay, unless the user set
// GOGC or GOMEMLIMIT: collections at 4× the live heap rather than 2× (the
// default collects their few-MB heaps very often: capture's CPU per
// forwarded delivery about 235 → 147 µs, replay's copies/s about +10 %,
// see docs/performance.md), with a soft limit of 256 MiB that brings the
// default's pace back when the heap grows (many large bodies at once).
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(300)
	debug.SetMemoryLimit(256 << 20)
}

// portInUseHint says what to do about a port another process holds (the
// error said only "bind: address already in use"): most often a capture or
// handler an earlier command left running in the background. flag is the
// one that names the port.
func portInUseHint(err error, flag string) string {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return ""
	}
	return fmt.Sprintf(": something else listens there (a capture or handler still running in the background? 'jobs' lists a shell's); stop it, or give %s another port", flag)
}
