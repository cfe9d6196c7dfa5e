package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/capture"
	"github.com/hookreplay/hookreplay/internal/exchange"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
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
"har:devtools.har"). The deliveries are added in one transaction: all or
none, a bad line adds nothing. A JSONL file (what export writes) is read a
line at a time, whatever its size; the other formats are read whole (at
most 512 MiB). See docs/import-export.md.`,
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

// detectPeek is how much of an import is read to tell its format.
const detectPeek = 1 << 20

func importRun(ctx context.Context, o *importOptions) error {
	var in io.Reader = o.IO.In
	name, dir := "stdin", ""
	size := int64(-1)
	if o.File != "-" {
		f, err := os.Open(o.File)
		if err != nil {
			return openErr("import", o.File, err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
		in, name, dir = f, o.File, filepath.Dir(o.File)
	}
	// The file's name as shown: a name is text from outside too.
	shown := message.Printable(name)
	br := bufio.NewReaderSize(in, detectPeek)
	format := exchange.Format(o.Format)
	if format == "" {
		head, err := br.Peek(detectPeek)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return usageErr("import %s: %v", shown, err)
		}
		if format, err = exchange.Detect(head); err != nil {
			return usageErr("import %s: %v", shown, err)
		}
	}
	// Every local file a curl command names is read into a body: the user
	// is told which, so a file that reads what it should not is seen.
	var read []string
	readFile := exchange.LimitedReadFile(dir, o.MaxBody)
	ro := exchange.ReadOptions{
		Name: name, MaxBody: o.MaxBody, ReadFile: func(f string) ([]byte, error) {
			b, err := readFile(f)
			if err == nil && !slices.Contains(read, f) {
				read = append(read, f)
			}
			return b, err
		},
		Note: func(s string) { fmt.Fprintf(o.IO.ErrOut, "import %s: %s\n", shown, s) }}
	switch format {
	case exchange.JSONL:
		return importStream(ctx, o, shown, format, func(fn func(*store.Delivery) error) error { return exchange.EachJSONL(br, ro, fn) })
	case exchange.HAR:
		return importStream(ctx, o, shown, format, func(fn func(*store.Delivery) error) error { return exchange.EachHAR(br, ro, fn) })
	}
	if size > exchange.MaxFile {
		return usageErr("import %s: %d MiB is larger than the %d MiB one %s import reads; split it", shown, size>>20, exchange.MaxFile>>20, format)
	}
	data, err := exchange.ReadAll(br)
	if err != nil {
		return usageErr("import %s: %v", shown, err)
	}
	ds, err := exchange.Read(data, format, ro)
	if err != nil {
		return usageErr("import %s (%s): %v", shown, format, err)
	}
	if len(ds) == 0 {
		return usageErr("import %s: no deliveries in it (want one JSON object per line, as 'hookreplay export' writes)", shown)
	}
	if len(read) > 0 {
		names := make([]string, len(read))
		for i, f := range read {
			names[i] = message.Printable(f)
		}
		fmt.Fprintf(o.IO.ErrOut, "import %s: read %d local %s: %s\n", shown, len(read), map[bool]string{true: "file", false: "files"}[len(read) == 1], strings.Join(names, ", "))
	}
	for _, d := range ds {
		detectProvider(d)
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
	return importDone(o, shown, ids)
}

// importStream streams a JSONL import (what export writes, whatever the
// store's size) or a HAR file: each delivery is parsed and added as it is
// read (each reads them one at a time into fn), in one transaction
// committed at the end, so a bad one still adds nothing. The store is
// opened with the first delivery: a file bad from its start creates no
// database.
func importStream(ctx context.Context, o *importOptions, name string, format exchange.Format, each func(fn func(*store.Delivery) error) error) error {
	var st *store.Store
	var im *store.Importer
	defer func() {
		if im != nil {
			im.Rollback()
		}
		if st != nil {
			st.Close()
		}
	}()
	var ids []int64
	var setup error // the store's, not the file's
	err := each(func(d *store.Delivery) error {
		if st == nil {
			if st, setup = o.Store(); setup != nil {
				st = nil
				return setup
			}
			var err error
			if im, err = st.BeginImport(ctx); err != nil {
				setup = setupErr("%v", err)
				return setup
			}
		}
		detectProvider(d)
		id, _, err := im.Add(ctx, d)
		if err != nil {
			setup = setupErr("import delivery %d: %v", len(ids)+1, err)
			return setup
		}
		ids = append(ids, id)
		return nil
	})
	if setup != nil {
		return setup
	}
	if err != nil {
		return usageErr("import %s (%s): %v", name, format, err)
	}
	if len(ids) == 0 && format == exchange.JSONL {
		return usageErr("import %s: no deliveries in it (want one JSON object per line, as 'hookreplay export' writes)", name)
	}
	if len(ids) == 0 {
		return usageErr("import %s: no deliveries in it", name)
	}
	err = im.Commit()
	im = nil
	if err != nil {
		return setupErr("%v", err)
	}
	return importDone(o, name, ids)
}

// detectProvider names the provider and event of a delivery its file did
// not name, as capture would.
func detectProvider(d *store.Delivery) {
	if d.Provider != "" {
		return
	}
	id := verify.Detect(d.Request())
	d.Provider, d.EventID, d.EventType = id.Provider, id.EventID, id.EventType
	if d.Identity == nil {
		d.Identity = id.Extra
	}
}

// importDone says what was imported.
func importDone(o *importOptions, name string, ids []int64) error {
	if o.JSON {
		return report.NewJSONEncoder(o.IO.Out).Encode(struct {
			Imported int     `json:"imported"`
			IDs      []int64 `json:"ids"`
		}{len(ids), ids})
	}
	fmt.Fprintf(o.IO.Out, "imported %s from %s as %s\n", exportCount(len(ids)), name, idRange(ids))
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
