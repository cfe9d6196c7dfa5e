package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hookreplay/hookreplay/internal/config"
	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/hookreplay/hookreplay/internal/verify"
)

type providersOptions struct {
	IO *iostreams.IO
	// Declared are the schemes declared for this run (hookreplay.yaml's
	// providers:, --declare), read when the command started.
	Declared func() []config.Provider
	JSON     bool
	jsonOut  *jsonOutput
}

func newProvidersCmd(f *factory, runF func(*providersOptions) error) *cobra.Command {
	o := &providersOptions{IO: f.IO, Declared: func() []config.Provider { return f.Declared }}
	cmd := &cobra.Command{
		Use:   "providers",
		Short: "List the provider schemes hookreplay knows: built in and declared",
		Long: `List every provider scheme: the built-in ones and those declared in the
providers: section of hookreplay.yaml (or with --declare for one run), with
the headers each signs in, its signature age tolerance, where its event id
is, its retry timetable and where it was declared.

A declared scheme works wherever a built-in one does: capture detects it,
verify and sign use it, check and replay re-sign and re-identify its copies.
docs/providers.md shows how to declare one.

Exit codes: 0 listed, 2 a declaration has a mistake (the line says where).`,
		Example: `  hookreplay providers
  hookreplay providers --json | jq '.[] | select(.declared_at != null) | .name'
  hookreplay providers --declare 'acme: {signature_header: Acme-Signature, format: "sha256={signature}"}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return providersRun(o)
		},
	}
	o.jsonOut = addJSONFlags(cmd.Flags(), &o.JSON, "the providers (an array of name, title, declared_at, signature_headers, signed, tolerance_seconds, identity, retries, …)").
		knownFields(report.Provider{})
	return cmd
}

func providersRun(o *providersOptions) error {
	at := map[string]string{}
	for _, p := range o.Declared() {
		at[p.Scheme.Name()] = p.Path
		if p.Line > 0 {
			at[p.Scheme.Name()] = fmt.Sprintf("%s:%d", p.Path, p.Line)
		}
	}
	var ps []report.Provider
	for _, s := range verify.Schemes() {
		ps = append(ps, report.ProviderOf(s, at[s.Name()]))
	}
	if o.JSON {
		return o.jsonOut.write(o.IO, func(w io.Writer) error { return report.WriteProvidersJSON(w, ps) })
	}
	return report.WriteProviders(o.IO.Out, ps)
}
