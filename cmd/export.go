package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/redact"
	"github.com/hookreplay/hookreplay/internal/store"
)

type exportOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)
	Now   func() time.Time

	deliverySelector // IDs or --last
	deliveryFilter
	Format string
	Output string // "" or "-" is stdout
	// Redact replaces credentials (redact.CredentialHeaders, RedactRules).
	Redact      bool
	RedactRules redact.Rules
}

func newExportCmd(f *factory, runF func(*exportOptions) error) *cobra.Command {
	o := &exportOptions{IO: f.IO, Store: f.ExistingStore, Now: time.Now}
	cmd := &cobra.Command{
		Use:   "export [ID...]",
		Short: "Write captured deliveries as JSONL, HAR, curl commands or raw HTTP",
		Long: `Export writes captured deliveries, oldest first. --format says how:

  jsonl  (default) one JSON object per line: every field, the exact wire
         bytes and the body in base64, headers in their order. Commit the
         file next to your tests and run 'hookreplay check --from FILE' in
         CI without a database, or load it elsewhere with 'hookreplay import'.
  har    one HAR 1.2 log for browser devtools, proxies and HAR viewers;
         each entry also carries the delivery's JSONL line as "_hookreplay",
         so importing it back keeps every byte
  curl   a bash file of curl commands sending each delivery with its exact
         headers (order and case) and body; HOOKREPLAY_TO=http://host:port
         sends them elsewhere. Binary bodies are written beside -o FILE.
  raw    the exact wire bytes, one request after another (a pipelined
         HTTP/1.1 stream)

Every format holds the deliveries' headers and bodies as received,
signatures and credentials included. See docs/import-export.md.

With IDs, exactly those deliveries; otherwise every delivery that matches
the filters.

An export holds what was captured, verbatim: request headers such as
Authorization and Cookie, the body, and the handler's recorded response
(Set-Cookie included). Export warns when it writes such credentials. --redact
replaces the values of Authorization, Proxy-Authorization, Cookie, Set-Cookie,
every --redact-header NAME and the JSON values at every --redact-json PATH
with [REDACTED]; the exact wire bytes are rewritten to match (Content-Length
fixed up). A new -o file is created with mode 0600; an existing regular file
keeps its mode; symbolic links, FIFOs and devices are refused.`,
		Example: `  hookreplay export 3 4 -o testdata/webhooks/subscription.jsonl
  hookreplay export --provider stripe --type 'invoice.*' --since 7d > invoices.jsonl
  hookreplay export --last --redact --redact-header X-Api-Key --redact-json data.object.customer_email -o shared.jsonl
  hookreplay export 3 --format curl -o replay.sh && HOOKREPLAY_TO=http://127.0.0.1:3000 bash replay.sh
  hookreplay export --format har -o deliveries.har
  hookreplay check --from testdata/webhooks/subscription.jsonl --to http://localhost:3000/webhooks --probe-sql '...' --dsn sqlite:app.db`,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := exchange.ParseFormat(o.Format, exchange.ExportFormats)
			if err != nil {
				return usageErr("--format: %v", err)
			}
			o.Format = string(f)
			ids, err := parseDeliveryIDs(args)
			if err != nil {
				return err
			}
			o.IDs = ids
			if err := o.validate(); err != nil {
				return err
			}
			if o.given() > 1 {
				return usageErr("give delivery IDs or --last, not both")
			}
			if o.given() > 0 && o.set() {
				return usageErr("give delivery IDs or filters (--provider, --source, --type, --event-id, --since, --one-per-type), not both")
			}
			if err := exportRedactRules(o); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return exportRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "jsonl", "jsonl, har, curl or raw (see docs/import-export.md)")
	o.addLastFlag(cmd.Flags(), "export")
	o.addFilterFlags(cmd.Flags())
	o.deliveryFilter.addOnePerTypeFlag(cmd.Flags())
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "write to this file instead of stdout (replaced whole; new files get mode 0600)")
	cmd.Flags().BoolVar(&o.Redact, "redact", false, "replace Authorization, Proxy-Authorization, Cookie and Set-Cookie values with [REDACTED]")
	cmd.Flags().StringArrayVar(&o.RedactRules.Headers, "redact-header", nil, "also redact this header (repeatable; implies --redact)")
	cmd.Flags().StringArrayVar(&o.RedactRules.JSONPaths, "redact-json", nil, "also redact the JSON body value at this dotted path, e.g. data.object.email (repeatable; implies --redact)")
	return cmd
}

// exportRedactRules checks --redact-header names and --redact-json paths;
// either implies --redact.
func exportRedactRules(o *exportOptions) error {
	if len(o.RedactRules.Headers) > 0 || len(o.RedactRules.JSONPaths) > 0 {
		o.Redact = true
	}
	for _, h := range o.RedactRules.Headers {
		if _, err := message.ParseHeaderLine(h + ":"); err != nil || strings.Contains(h, ":") {
			return usageErr("--redact-header %q: want a header name, e.g. X-Api-Key", h)
		}
	}
	for _, p := range o.RedactRules.JSONPaths {
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") {
			return usageErr("--redact-json %q: want a dotted path, e.g. data.object.customer_email", p)
		}
	}
	return nil
}

func exportRun(ctx context.Context, o *exportOptions) error {
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	var each exchange.Each
	wo := exchange.WriteOptions{Version: version()}
	if o.given() > 0 {
		ds, err := o.load(ctx, st)
		if err != nil {
			return err
		}
		each, wo.Count = exchange.Slice(ds), len(ds)
	} else {
		// Filters: walked from the store one delivery at a time, so a whole
		// store is exported in constant memory. The walk stops at the count
		// (the oldest first): deliveries captured meanwhile are left out.
		f, err := o.storeFilter(ctx, st, o.Now())
		if err != nil {
			return err
		}
		f.Oldest = true
		if wo.Count, err = st.CountDeliveries(ctx, f); err != nil {
			return setupErr("%v", err)
		}
		if wo.Count == 0 {
			return usageErr("no deliveries match in %s (see 'hookreplay list'); nothing exported", st.Path())
		}
		f.Limit = wo.Count
		each = func(fn func(*store.Delivery) error) error { return st.EachDelivery(ctx, f, fn) }
	}
	var creds credentialNote
	n := 0
	redacted := func(fn func(*store.Delivery) error) error {
		return each(func(d *store.Delivery) error {
			if o.Redact {
				redact.Delivery(d, o.RedactRules)
			} else {
				creds.add(d)
			}
			n++
			return fn(d)
		})
	}
	format := exchange.Format(o.Format)
	if o.Output == "" || o.Output == "-" {
		each := redacted
		if format == exchange.Raw && o.IO.IsTerminal() {
			// Exact bytes, as show --raw: on a terminal only when none
			// could act on it (JSONL, HAR and curl escape what would).
			each = func(fn func(*store.Delivery) error) error {
				return redacted(func(d *store.Delivery) error {
					if !message.TerminalSafe(d.Raw) {
						return usageErr("delivery %d: --format raw would write control characters or bytes that are not UTF-8 to the terminal, which acts on them; "+
							"write it to a file (-o FILE) or pipe it ('| less'), or read it escaped with 'hookreplay show %d'", d.ID, d.ID)
					}
					return fn(d)
				})
			}
		}
		if err := exchange.Write(o.IO.Out, format, each, wo); err != nil {
			var ee *ExitError
			if errors.As(err, &ee) {
				return err
			}
			return setupErr("export: %v", err)
		}
		creds.warn(o.IO.ErrOut)
		return nil
	}
	created, err := exchange.WriteFile(o.Output, format, redacted, wo)
	if created != "" {
		fmt.Fprintf(o.IO.ErrOut, "created directory %s\n", created)
	}
	if err != nil {
		return setupErr("export: %v", err)
	}
	creds.warn(o.IO.ErrOut)
	fmt.Fprintf(o.IO.ErrOut, "exported %s to %s\n", exportCount(n), o.Output)
	return nil
}

func exportCount(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return fmt.Sprintf("%d deliveries", n)
}

// credentialNote gathers, delivery by delivery, which credential headers an
// unredacted export carries and in which deliveries (the first ten named).
type credentialNote struct {
	ids  []string
	more bool
	seen map[string]bool
}

func (c *credentialNote) add(d *store.Delivery) {
	hs := redact.Credentials(d)
	if len(hs) == 0 {
		return
	}
	if len(c.ids) < 10 {
		c.ids = append(c.ids, strconv.FormatInt(d.ID, 10))
	} else {
		c.more = true
	}
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	for _, h := range hs {
		c.seen[h] = true
	}
}

// warn says which credentials the export holds, if any.
func (c *credentialNote) warn(w io.Writer) {
	if len(c.ids) == 0 {
		return
	}
	var names []string
	for _, h := range redact.CredentialHeaders {
		if c.seen[h] {
			names = append(names, h)
		}
	}
	ids := c.ids
	if c.more {
		ids = append(ids, "...")
	}
	fmt.Fprintf(w, "warning: exported verbatim, with credentials in %s (deliveries %s); pass --redact to replace them\n",
		strings.Join(names, ", "), strings.Join(ids, ", "))
}
