package report

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkRender renders the "mixed" check fixture in every format.
func BenchmarkRender(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "checks", "mixed.json"))
	if err != nil {
		b.Fatal(err)
	}
	var c Check
	if err := json.NewDecoder(bytes.NewReader(raw)).Decode(&c); err != nil {
		b.Fatal(err)
	}
	for _, f := range []struct {
		name   string
		render func(io.Writer, *Check) error
	}{
		{"text", func(w io.Writer, c *Check) error { return Text(w, c, false) }},
		{"color", func(w io.Writer, c *Check) error { return Text(w, c, true) }},
		{"json", JSON},
		{"junit", JUnit},
		{"markdown", Markdown},
	} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f.render(io.Discard, &c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
