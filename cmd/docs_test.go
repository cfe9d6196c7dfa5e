package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

// TestReferenceDocsUpToDate fails when docs/reference differs from what the
// command tree generates: a flag or help text changed without
// 'go generate ./...'. The environment must not leak into the pages, so the
// variables that set defaults are set to something else here.
func TestReferenceDocsUpToDate(t *testing.T) {
	t.Setenv("HOOKREPLAY_DB", "/somewhere/else.db")
	t.Setenv("EMAIL_API_URL", "http://127.0.0.1:1")
	io, _, _, _ := iostreams.Test()
	root := NewRootCmd(io)
	got := t.TempDir()
	root.SetArgs([]string{"docs", got})
	if err := root.Execute(); err != nil {
		t.Fatalf("hookreplay docs: %v", err)
	}
	want := filepath.Join("..", "docs", "reference")
	gotPages, wantPages := mdPages(t, got), mdPages(t, want)
	if !slices.Equal(gotPages, wantPages) {
		t.Fatalf("docs/reference is stale: generated pages %v, committed %v; run 'go generate ./...'", gotPages, wantPages)
	}
	for _, name := range gotPages {
		g, _ := os.ReadFile(filepath.Join(got, name))
		w, _ := os.ReadFile(filepath.Join(want, name))
		if string(g) != string(w) {
			t.Errorf("docs/reference/%s is stale (run 'go generate ./...'); generated:\n%s", name, g)
		}
	}
	for _, name := range []string{"hookreplay.md", "hookreplay_check.md", "hookreplay_capture.md", "hookreplay_demo_serve.md"} {
		if !slices.Contains(gotPages, name) {
			t.Errorf("no page %s among %v", name, gotPages)
		}
	}
	for _, name := range []string{"hookreplay_docs.md", "hookreplay_man.md", "hookreplay_help.md"} {
		if slices.Contains(gotPages, name) {
			t.Errorf("page %s generated for a hidden or help command", name)
		}
	}
	root2, _ := os.ReadFile(filepath.Join(got, "hookreplay.md"))
	if !strings.Contains(string(root2), `(default "hookreplay.db")`) || strings.Contains(string(root2), "/somewhere/else.db") {
		t.Errorf("--db's default in the reference depends on HOOKREPLAY_DB:\n%s", root2)
	}
}

// TestDocsRemovesPagesOfGoneCommands: a page left from a removed command
// does not survive regeneration (the staleness test would not notice it in a
// fresh directory).
func TestDocsRemovesPagesOfGoneCommands(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "hookreplay_gone.md")
	other := filepath.Join(dir, "index.md")
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	io, _, _, errOut := iostreams.Test()
	root := NewRootCmd(io)
	root.SetArgs([]string{"docs", dir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale page kept: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a command page was removed: %v", err)
	}
	if !strings.Contains(errOut.String(), "reference pages to "+dir) {
		t.Errorf("stderr %q", errOut.String())
	}
}

// TestManPages: one section-1 page per command, titled after it, dated by
// SOURCE_DATE_EPOCH so release builds are reproducible.
func TestManPages(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1796256000") // 2026-12-03
	dir := t.TempDir()
	io, _, _, _ := iostreams.Test()
	root := NewRootCmd(io)
	root.SetArgs([]string{"man", dir})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "hookreplay-check.1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`.TH "HOOKREPLAY-CHECK" "1" "Dec 2026"`, "hookreplay check", `\fB--probe-sql\fP`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("hookreplay-check.1 lacks %q:\n%.600s", want, page)
		}
	}
	for _, name := range []string{"hookreplay.1", "hookreplay-capture.1", "hookreplay-demo-serve.1"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		}
	}

	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	io, _, _, _ = iostreams.Test()
	root = NewRootCmd(io)
	root.SetArgs([]string{"man", t.TempDir()})
	err = root.Execute()
	if ee := asExitError(err); ee == nil || ee.Code != 2 || !strings.Contains(ee.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("a bad SOURCE_DATE_EPOCH: %v", err)
	}
}

// TestDocsAndManIgnorePlantedLinks: a link planted at a page's name is
// replaced by the page, never written through.
func TestDocsAndManIgnorePlantedLinks(t *testing.T) {
	for cmd, page := range map[string]string{"docs": "hookreplay_check.md", "man": "hookreplay-check.1"} {
		dir := t.TempDir()
		victim := filepath.Join(t.TempDir(), "victim")
		if err := os.WriteFile(victim, []byte("untouched"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(dir, page)); err != nil {
			t.Fatal(err)
		}
		io, _, _, _ := iostreams.Test()
		root := NewRootCmd(io)
		root.SetArgs([]string{cmd, dir})
		if err := root.Execute(); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "untouched" {
			t.Errorf("%s wrote through a link planted at %s", cmd, page)
		}
		if fi, err := os.Lstat(filepath.Join(dir, page)); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %s is not a regular file: %v", cmd, page, err)
		}
	}
}

func mdPages(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "hookreplay*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range m {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}
