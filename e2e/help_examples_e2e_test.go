package e2e

import (
	"strings"
	"testing"
)

// helpExamples are --help examples a reader can paste into an empty
// directory as they are (the others stand for the reader's own handler):
// the command, which example (paragraphs separated by blank lines,
// counted from 0) and the exit code the pasted lines end with.
// TestDocSnippetsRun runs each as a document of its own.
var helpExamples = []struct {
	args  []string
	index int
	exit  int
}{
	// The racy wallet caught by burst. It ran 'check --last' with nothing
	// captured: "no database at hookreplay.db".
	{[]string{"demo", "serve", "--help"}, 0, 1},
	// The example API's race caught by keycheck's burst.
	{[]string{"demo", "api", "--help"}, 0, 1},
	{[]string{"keycheck", "--help"}, 0, 1},
}

// helpExampleSnippets are helpExamples as snippets, each its own document
// named by its command.
func helpExampleSnippets(t *testing.T) []snippet {
	t.Helper()
	var out []snippet
	for _, ex := range helpExamples {
		name := "hookreplay " + strings.Join(ex.args, " ")
		r := runBin(t, "", nil, ex.args...)
		if r.Code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, r.Code, r.Stderr)
		}
		_, examples, ok := strings.Cut(r.Stdout, "\nExamples:\n")
		if !ok {
			t.Fatalf("%s has no examples:\n%s", name, r.Stdout)
		}
		examples, _, _ = strings.Cut(examples, "\n\nFlags:")
		paragraphs := strings.Split(examples, "\n\n")
		if ex.index >= len(paragraphs) {
			t.Fatalf("%s has %d examples, want number %d", name, len(paragraphs), ex.index)
		}
		var code []string
		for _, l := range strings.Split(paragraphs[ex.index], "\n") {
			code = append(code, strings.TrimPrefix(l, "  "))
		}
		out = append(out, snippet{File: name, Line: ex.index, Exit: ex.exit, Code: strings.Join(code, "\n") + "\n"})
	}
	return out
}
