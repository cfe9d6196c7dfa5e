package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type importOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	File    string // "-" is stdin
	Format  string // "" detects it from the content
	MaxBody int64
	JSON    bool
}

func newImportCmd(f *factory, runF func(*importOptions) error) *cobra.Command {
	o := &importOptions{IO: f.IO, Store: f.Store}
	var maxBody string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add deliveries from a JSONL, HAR, ngrok, curl or raw HTTP file to the database",
		Long: `Import reads deliveries from a file and adds every one as a new row with a
new id. FILE - reads stdin. The format is detected from the content unless
--format is given:

  jsonl  written by 'hookreplay export' (or by hand: a line needs raw, or
         method, target, headers and body); every field is kept
  har    HAR 1.2 from browser devtools, proxies or mitmproxy; each entry's
         request is rebuilt from method, URL, headers in order and body
         (postData with encoding base64 honoured; HTTP/2 :authority becomes
         Host). A HAR written by 'hookreplay export' imports byte for byte.
  ngrok  the JSON of the ngrok agent's /api/requests/http (or one request):
         request.raw holds the exact bytes ngrok forwarded
  curl   curl commands, as 'export --format curl' and "Copy as cURL (bash)"
         write them: -H, -d/--data/--data-raw/--data-binary (@FILE too),
         -X, --url, -u, -A, -b, quoting and line continuations
  raw    HTTP/1.1 requests one after another, as 'export --format raw'
         writes them

Deliveries without a provider get provider and event detection as captured
ones do, and each records where it came from (its origin, e.g.
"har:devtools.har"). The file is checked whole before anything is added,
and the deliveries are added in one transaction: all or none. See
docs/import-export.md.`,
		Example: `  hookreplay import testdata/webhooks/subscription.jsonl
  hookreplay import devtools.har
  curl -s http://127.0.0.1:4040/api/requests/http | hookreplay import - --format ngrok
  hookreplay --db other.db export | hookreplay import -
  hookreplay import captured.jsonl --json | jq '.ids'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if o.Format != "" {
				f, err := exchange.ParseFormat(o.Format, exchange.ImportFormats)
				if err != nil {
					return usageErr("--format: %v", err)
				}
				o.Format = string(f)
			}
			n, err := capture.ParseSize(maxBody)
			if err != nil {
				return usageErr("--max-body: %v", err)
			}
			if n > maxMaxBody {
				return usageErr("--max-body %s is out of range (1 byte to %s): a body is held in memory whole", maxBody, capture.FormatSize(maxMaxBody))
			}
			o.MaxBody = n
			if runF != nil {
				return runF(o)
			}
			return importRun(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Format, "format", "", "jsonl, har, ngrok, curl or raw (default: detected from the content)")
	cmd.Flags().StringVar(&maxBody, "max-body", "10MiB", "largest request body accepted, as capture's --max-body")
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"imported": N, "ids": [...]}`)
	return cmd
}

func importRun(ctx context.Context, o *importOptions) error {
	var in io.Reader = o.IO.In
	name, dir := "stdin", ""
	if o.File != "-" {
		f, err := os.Open(o.File)
		if err != nil {
			return usageErr("import: %v", err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > exchange.MaxFile {
			return usageErr("import %s: %d MiB is larger than the %d MiB one import reads; split it", o.File, st.Size()>>20, exchange.MaxFile>>20)
		}
		in, name, dir = f, o.File, filepath.Dir(o.File)
	}
	data, err := exchange.ReadAll(in)
	if err != nil {
		return usageErr("import %s: %v", name, err)
	}
	format := exchange.Format(o.Format)
	if format == "" {
		if format, err = exchange.Detect(data); err != nil {
			return usageErr("import %s: %v", name, err)
		}
	}
	ds, err := exchange.Read(data, format, exchange.ReadOptions{
		Name: name, MaxBody: o.MaxBody, ReadFile: exchange.LimitedReadFile(dir, o.MaxBody),
		Note: func(s string) { fmt.Fprintf(o.IO.ErrOut, "import %s: %s\n", name, s) }})
	if err != nil {
		return usageErr("import %s (%s): %v", name, format, err)
	}
	if len(ds) == 0 {
		return usageErr("import %s: no deliveries in it (want one JSON object per line, as 'hookreplay export' writes)", name)
	}
	for _, d := range ds {
		if d.Provider == "" {
			// Not named by the file: name the provider and event as capture would.
			id := verify.Detect(d.Request())
			d.Provider, d.EventID, d.EventType = id.Provider, id.EventID, id.EventType
			if d.Identity == nil {
				d.Identity = id.Extra
			}
		}
	}
	st, err := o.Store()
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.ImportDeliveries(ctx, ds); err != nil {
		return setupErr("%v", err)
	}
	ids := make([]int64, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	if o.JSON {
		return json.NewEncoder(o.IO.Out).Encode(struct {
			Imported int     `json:"imported"`
			IDs      []int64 `json:"ids"`
		}{len(ds), ids})
	}
	fmt.Fprintf(o.IO.Out, "imported %s from %s as %s\n", exportCount(len(ds)), name, idRange(ids))
	return nil
}

// idRange prints consecutive ids as "ids 5-9", others as "ids 5, 7".
func idRange(ids []int64) string {
	if len(ids) == 1 {
		return fmt.Sprintf("id %d", ids[0])
	}
	consecutive := true
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			consecutive = false
		}
	}
	if consecutive {
		return fmt.Sprintf("ids %d-%d", ids[0], ids[len(ids)-1])
	}
	s := "ids"
	for i, id := range ids {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" %d", id)
	}
	return s
}
