package cmd

// JSON output as gh shapes it, in one place for every command that prints
// JSON (list, show, runs, runs show, replay, verify): --json alone prints
// the document as before; --json id,event_type keeps only those fields (of
// the object, or of each object in an array); --jq EXPR filters it with jq
// (gojq, so no jq binary is needed in CI); --template TMPL renders it with
// a Go template. Narrowing, --jq and --template hold the whole document in
// memory; plain --json is written as the command renders it.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"

	"github.com/itchyny/gojq"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// jsonAll is --json given without fields (pflag's NoOptDefVal).
const jsonAll = "*"

// jsonOutput holds --json [FIELDS], --jq and --template. Each is checked
// as it is parsed (a bad jq expression is a usage error before anything is
// sent) and sets the command's JSON switch, so commands only route their
// JSON through write.
type jsonOutput struct {
	on     *bool // the command's JSON switch
	fields []string
	// known are the document's fields, present or not: a field left out
	// when empty (verification, forward_error) may be asked for by name.
	known []string
	jq    string
	code  *gojq.Code
	tmpl  *template.Template
}

// knownFields declares the fields of doc's type (its json names, embedded
// structs included) as j's, so --json FIELD accepts one a document leaves
// out when empty; it returns j.
func (j *jsonOutput) knownFields(doc any) *jsonOutput {
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case tag == "-" || !f.IsExported() && !f.Anonymous:
			case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
				walk(f.Type)
			case tag != "":
				j.known = append(j.known, tag)
			default:
				j.known = append(j.known, f.Name)
			}
		}
	}
	walk(reflect.TypeOf(doc))
	return j
}

// addJSONFlags declares --json [FIELDS], --jq and --template, switching on
// when any is given; what says what the JSON document is.
func addJSONFlags(fl *pflag.FlagSet, on *bool, what string) *jsonOutput {
	j := &jsonOutput{on: on}
	fl.Var(jsonFlag{j, "json"}, "json", "print "+what+" as JSON; --json FIELD,… keeps only those fields")
	fl.Lookup("json").NoOptDefVal = jsonAll
	fl.Var(jsonFlag{j, "jq"}, "jq", "filter the JSON with a jq expression, e.g. '.[].id' (implies --json)")
	fl.Var(jsonFlag{j, "template"}, "template", `render the JSON with a Go template, e.g. '{{range .}}{{.id}}{{"\n"}}{{end}}' (implies --json)`)
	return j
}

// jsonFlag is one of the three flags, parsed into j.
type jsonFlag struct {
	j    *jsonOutput
	name string
}

func (f jsonFlag) String() string { return "" }

func (f jsonFlag) Type() string {
	switch f.name {
	case "json":
		return "fields"
	case "jq":
		return "expression"
	}
	return "string"
}

func (f jsonFlag) Set(s string) error {
	j := f.j
	*j.on = true
	switch f.name {
	case "json":
		j.fields = nil
		if s == jsonAll {
			return nil
		}
		for _, name := range strings.Split(s, ",") {
			if name = strings.TrimSpace(name); name != "" {
				j.fields = append(j.fields, name)
			}
		}
		if len(j.fields) == 0 {
			return errors.New("give field names separated by commas, e.g. --json id,event_type")
		}
		// A document's fields are known before it is made: a misspelt one
		// is refused before replay sends anything or runs finds no run.
		for _, f := range j.fields {
			if len(j.known) > 0 && !slices.Contains(j.known, f) {
				return j.unknownField(f, nil)
			}
		}
	case "jq":
		if j.tmpl != nil {
			return errors.New("--jq and --template each shape the output; give one")
		}
		q, err := gojq.Parse(s)
		if err != nil {
			return err
		}
		if j.code, err = gojq.Compile(q); err != nil {
			return err
		}
		j.jq = s
	case "template":
		if j.code != nil {
			return errors.New("--jq and --template each shape the output; give one")
		}
		t, err := template.New("template").Funcs(template.FuncMap{
			"json": func(v any) (string, error) { b, err := json.Marshal(v); return string(b), err },
			"join": func(sep string, v []any) string {
				s := make([]string, len(v))
				for i, x := range v {
					s[i] = fmt.Sprint(x)
				}
				return strings.Join(s, sep)
			},
		}).Parse(s)
		if err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "template: "))
		}
		j.tmpl = t
	}
	return nil
}

// shaped reports whether the document is changed before it is printed.
func (j *jsonOutput) shaped() bool {
	return j != nil && len(j.fields) > 0 || j.code != nil || j.tmpl != nil
}

// write prints the JSON document render produces on ios.Out, narrowed and
// filtered as asked. JSON is escaped by report.NewJSONEncoder; what --jq
// prints as raw strings and what --template renders is text, escaped by
// message.PrintableText on a terminal and byte-exact through a pipe.
func (j *jsonOutput) write(ios *iostreams.IO, render func(io.Writer) error) error {
	w := ios.Out
	if !j.shaped() {
		return render(w)
	}
	if ios.IsTerminal() {
		w = printableWriter{w}
	}
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber() // ids and nanosecond times stay exact
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("read the JSON output: %w", err)
	}
	if len(j.fields) > 0 {
		var err error
		if doc, err = j.narrow(doc); err != nil {
			return err
		}
	}
	switch {
	case j.code != nil:
		return j.runJQ(w, doc)
	case j.tmpl != nil:
		if err := j.tmpl.Execute(w, doc); err != nil {
			return usageErr("--template: %v", strings.TrimPrefix(err.Error(), "template: "))
		}
		return nil
	}
	enc := report.NewJSONEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// narrow keeps j.fields of an object, or of each object of an array; a
// field no object has is an error naming the fields there are.
func (j *jsonOutput) narrow(doc any) (any, error) {
	seen := map[string]bool{}
	for _, k := range j.known {
		seen[k] = true
	}
	keep := func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(j.fields))
		for k := range m {
			seen[k] = true
		}
		for _, f := range j.fields {
			if x, ok := m[f]; ok {
				out[f] = x
			}
		}
		return out
	}
	var out any
	switch d := doc.(type) {
	case []any:
		if len(d) == 0 {
			return d, nil // nothing to check the names against
		}
		a := make([]any, len(d))
		for i, v := range d {
			a[i] = keep(v)
		}
		out = a
	default:
		out = keep(d)
	}
	for _, f := range j.fields {
		if !seen[f] {
			return nil, j.unknownField(f, seen)
		}
	}
	return out, nil
}

// unknownField refuses --json field f, naming the fields there are: the
// known ones and those seen in the document.
func (j *jsonOutput) unknownField(f string, seen map[string]bool) error {
	names := slices.Clone(j.known)
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	names = slices.Compact(names)
	return usageErr("--json: unknown field %q (fields: %s)", f, strings.Join(names, ", "))
}

// runJQ prints each result of the jq expression on its own line: strings
// as they are (as jq -r), anything else as compact JSON.
func (j *jsonOutput) runJQ(w io.Writer, doc any) error {
	iter := j.code.Run(doc)
	for {
		v, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil
			}
			return usageErr("--jq %s: %v", j.jq, err)
		}
		if s, ok := v.(string); ok {
			if _, err := fmt.Fprintln(w, s); err != nil {
				return err
			}
			continue
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			return err
		}
		b = message.EscapeJSON(b)
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
}

// jsonFieldList matches what --json FIELDS looks like: names separated by commas.
var jsonFieldList = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(,[A-Za-z_][A-Za-z0-9_]*)*$`)

// joinJSONFields turns "--json id,event_type" into "--json=id,event_type"
// before cobra parses the line: --json takes an optional value, which
// pflag only reads when joined with '='. A following word that is a
// command name (runs --json show 3) or not a field list (an ID, a flag)
// is left alone.
func joinJSONFields(root *cobra.Command, args []string) []string {
	var names []string
	walkCommands(root, func(c *cobra.Command) { names = append(names, c.Name()) })
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--json" && i+1 < len(args) && jsonFieldList.MatchString(args[i+1]) && !slices.Contains(names, args[i+1]) {
			out = append(out, "--json="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

// printableWriter writes text for a terminal: each Write through
// message.PrintableText. A character split between two writes is shown as
// its bytes (\x..), never as a control.
type printableWriter struct{ w io.Writer }

func (p printableWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, message.PrintableText(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}
