package cmd

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/store"
)

type showOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	ID   int64
	Raw  bool
	Body bool
	JSON bool
	// jsonOut narrows and filters the JSON (--json FIELDS, --jq, --template).
	jsonOut *jsonOutput
}

func newShowCmd(f *factory, runF func(*showOptions) error) *cobra.Command {
	o := &showOptions{IO: f.IO, Store: f.ExistingStore}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one captured delivery",
		Long: `Shows one captured delivery: who sent it, the request as parsed (headers in
wire order, a JSON body indented) and the answer. Text the sender chose is
escaped on the way to the terminal (control characters, C1, DEL, bidi controls
and bytes that are not UTF-8 as \x1b, \u009b, \u202e, \xff), so a delivery
cannot retitle, clear or reorder your terminal.

--raw and --body write the exact bytes, for a pipe or a file. On a terminal
they refuse bytes a terminal would act on, as curl does with a binary body:
pipe them ('| less', '> file') or read them escaped without the flag.`,
		Example: `  hookreplay show 42
  hookreplay show 42 --raw > delivery.http   # the exact bytes that arrived
  hookreplay show 42 --body | jq .
  hookreplay show 42 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseID("delivery", args[0])
			if err != nil {
				return err
			}
			o.ID = id
			n := 0
			for _, b := range []bool{o.Raw, o.Body, o.JSON} {
				if b {
					n++
				}
			}
			if n > 1 {
				return usageErr("--raw, --body and --json each choose the output; give one")
			}
			if runF != nil {
				return runF(o)
			}
			return showRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Raw, "raw", false, "write exactly the bytes received on the wire (to a terminal only when no byte of them is a control character: pipe them)")
	cmd.Flags().BoolVar(&o.Body, "body", false, "write the decoded body bytes (to a terminal only when no byte of them is a control character: pipe them)")
	o.jsonOut = addJSONFlags(cmd.Flags(), &o.JSON, "the delivery (ordered headers, raw_base64, body_base64, verification, response)").
		knownFields(report.DeliveryDetail{})
	return cmd
}

func showRun(ctx context.Context, o *showOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	d, err := getDelivery(ctx, st, o.ID)
	if err != nil {
		return err
	}
	if !o.Raw && !o.Body {
		startPager(o.IO)
		defer o.IO.StopPager()
	}
	switch {
	case o.Raw, o.Body:
		b, flag := d.Raw, "--raw"
		if o.Body {
			b, flag = d.Body, "--body"
		}
		// The exact bytes, as curl does with a binary body: through a pipe
		// or into a file always; on a terminal only when no byte of them
		// could act on it (an escape sequence in a body sets the title,
		// writes the clipboard or hides text).
		if o.IO.IsTerminal() && !message.TerminalSafe(b) {
			return usageErr("delivery %d: %s would write control characters or bytes that are not UTF-8 to the terminal, which acts on them; "+
				"pipe it ('hookreplay show %d %s | less', '> file') or read it escaped with 'hookreplay show %d'", d.ID, flag, d.ID, flag, d.ID)
		}
		_, err = o.IO.Out.Write(b)
	case o.JSON:
		err = o.jsonOut.write(o.IO, func(w io.Writer) error { return report.DeliveryJSON(w, d) })
	default:
		err = report.Delivery(o.IO.Out, report.Colors(o.IO.ColorEnabled()), d)
	}
	return err
}
