package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/store"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type importOptions struct {
	IO    *iostreams.IO
	Store func() (*store.Store, error)

	File string // "-" is stdin
	JSON bool
}

func newImportCmd(f *factory, runF func(*importOptions) error) *cobra.Command {
	o := &importOptions{IO: f.IO, Store: f.Store}
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Add deliveries from a JSONL file (written by export) to the database",
		Long: `Import reads a JSONL file written by 'hookreplay export' (or by hand: a line
needs raw, or method, target, headers and body) and adds every delivery as a
new row with a new id, keeping its received time, exact bytes, body, identity
and recorded response. The file is checked whole before anything is added,
and the deliveries are added in one transaction: all or none. FILE - reads
stdin.`,
		Example: `  hookreplay import testdata/webhooks/subscription.jsonl
  hookreplay --db other.db export | hookreplay import -
  hookreplay import captured.jsonl --json | jq '.ids'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if runF != nil {
				return runF(o)
			}
			return importRun(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, `print {"imported": N, "ids": [...]}`)
	return cmd
}

func importRun(ctx context.Context, o *importOptions) error {
	var in io.Reader = o.IO.In
	name := "stdin"
	if o.File != "-" {
		f, err := os.Open(o.File)
		if err != nil {
			return usageErr("import: %v", err)
		}
		defer f.Close()
		in, name = f, o.File
	}
	ds, err := store.ReadJSONL(in)
	if err != nil {
		return usageErr("import %s: %v", name, err)
	}
	if len(ds) == 0 {
		return usageErr("import %s: no deliveries in it (want one JSON object per line, as 'hookreplay export' writes)", name)
	}
	for _, d := range ds {
		if d.Provider == "" {
			// A hand-written line: name the provider and event as capture would.
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
