package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEnginesNeverPrint: the engines (capture, replay, check, keycheck, store, verify,
// probe and their subpackages) hand what they do to the caller — an
// Observer, an AttemptSink, a result — and never print: none of them may
// depend on the CLI's streams (internal/iostreams) or on cmd, nor import a
// terminal colour package. Rendering is internal/report's, which is the one
// package that imports fatih/color.
func TestEnginesNeverPrint(t *testing.T) {
	const mod = "github.com/hookreplay/hookreplay/"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", mod+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	engines := []string{"internal/capture", "internal/replay", "internal/check", "internal/store", "internal/verify", "internal/probe", "internal/keycheck"}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, rest, _ := strings.Cut(line, "|")
		imports, deps, _ := strings.Cut(rest, "|")
		rel := strings.TrimPrefix(pkg, mod)
		engine := false
		for _, e := range engines {
			engine = engine || rel == e || strings.HasPrefix(rel, e+"/")
		}
		if !engine {
			if rel != "internal/report" && strings.Contains(" "+imports+" ", " github.com/fatih/color ") {
				t.Errorf("%s imports github.com/fatih/color: paint with report.Painter (one palette)", rel)
			}
			continue
		}
		seen++
		for _, d := range strings.Fields(deps) {
			if d == mod+"internal/iostreams" || d == mod+"cmd" || strings.HasPrefix(d, mod+"cmd/") {
				t.Errorf("%s depends on %s: engines never print; give the caller an observer or a result", rel, d)
			}
		}
		if strings.Contains(" "+imports+" ", " github.com/fatih/color ") {
			t.Errorf("%s imports github.com/fatih/color: engines never print", rel)
		}
	}
	if seen < 4 {
		t.Fatalf("go list found only %d engine packages:\n%s", seen, out)
	}
}
