package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// fencedBlock and codeSpan are left out of the link search: a link in an
// example is an example.
var (
	fencedBlock = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan    = regexp.MustCompile("`[^`\n]*`")
)

// TestDocLinksResolve follows every relative link of the README,
// CONTRIBUTING.md, docs/*.md and docs/reference/*.md as GitHub does — a path
// relative to the linking file, an anchor made from a heading — so a reader
// never lands on a 404 or the top of the wrong page. (docs/guide.md linked
// docs/performance.md, which from docs/ is docs/docs/performance.md.)
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	files := []string{"README.md", "CONTRIBUTING.md"}
	for _, g := range []string{"docs/*.md", "docs/reference/*.md"} {
		more, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, more...)
	}
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := codeSpan.ReplaceAllString(fencedBlock.ReplaceAllString(string(b), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			file := f
			if path != "" {
				file = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %s: no file %s", f, target, file)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if anchors[file] == nil {
				anchors[file] = headingAnchors(t, file)
			}
			if !anchors[file][anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", f, target, file, anchor)
			}
		}
	}
}

// headingAnchors are the anchors GitHub makes for a file's headings:
// lower case, punctuation dropped, spaces as hyphens, -1, -2 … for repeats.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(fencedBlock.ReplaceAllString(string(b), ""), "\n") {
		h := strings.TrimLeft(line, "#")
		if h == line || !strings.HasPrefix(h, " ") {
			continue
		}
		var a strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				a.WriteRune(r)
			}
		}
		s := a.String()
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}
