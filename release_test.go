//go:build release

package main

// Release checks: slow (they compile GoReleaser or cross-compile six
// targets) and need GoReleaser from the network, so they stay out of the
// default `go test ./...`. `.ci/run` builds GoReleaser once into a cached tool
// directory, points HOOKREPLAY_GORELEASER at it and runs
// `go test -tags release -run 'Release|Goreleaser' .`.

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goreleaserVersion is the GoReleaser the release config is written for;
// .ci/run builds the same version once into a cached tool directory.
const goreleaserVersion = "v2.15.1"

// goreleaser returns the command running GoReleaser with args: the binary
// named by HOOKREPLAY_GORELEASER (.ci/run's cached build). Tests never build
// GoReleaser themselves: without the variable, the release checks are skipped
// (under CI=1 they fail instead).
func goreleaser(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	bin := os.Getenv("HOOKREPLAY_GORELEASER")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("HOOKREPLAY_GORELEASER is not set: .ci/run builds GoReleaser %s and sets it", goreleaserVersion)
		}
		t.Skipf("set HOOKREPLAY_GORELEASER to a GoReleaser %s binary (.ci/run builds one) to run the release checks", goreleaserVersion)
	}
	return exec.Command(bin, args...)
}

// TestGoreleaserConfig runs `goreleaser check` on .goreleaser.yaml: valid v2
// schema and no deprecated properties.
func TestGoreleaserConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping goreleaser check")
	}
	out, err := goreleaser(t, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("goreleaser --version: %v\n%s", err, out)
	}
	out, err = goreleaser(t, "check").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "validated") || strings.Contains(strings.ToLower(string(out)), "deprecat") {
		t.Fatalf("goreleaser check: %v\n%s", err, out)
	}
}

// TestReleaseBuildsForWindows cross-compiles the binary the way the release
// does for the one target family whose syscall API differs from the Unix the
// tests run on (linux and darwin share it), so Unix-only code is caught
// before a release fails on it.
func TestReleaseBuildsForWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the windows cross-compile")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "hookreplay.exe"), ".")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows GOARCH=amd64 go build: %v\n%s", err, out)
	}
}

// binaryMagic is how each target's executable starts: ELF, 64-bit Mach-O
// (little endian) and PE.
var binaryMagic = map[string][]byte{
	"linux":   []byte("\x7fELF"),
	"darwin":  {0xcf, 0xfa, 0xed, 0xfe},
	"windows": []byte("MZ"),
}

// TestReleaseSnapshot builds the release as `goreleaser release --snapshot`
// does (everything but publishing) into ./dist and checks that each
// linux/darwin/windows × amd64/arm64 archive holds that target's binary and
// the files .goreleaser.yaml packages (packagedDocs).
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the snapshot release")
	}
	out, err := goreleaser(t, "release", "--snapshot", "--clean", "--skip=publish").CombinedOutput()
	if err != nil {
		t.Fatalf("goreleaser release --snapshot: %v\n%s", err, out)
	}
	docs := packagedDocs(t)
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, goarch := range []string{"amd64", "arm64"} {
			ext, bin := ".tar.gz", "hookreplay"
			if goos == "windows" {
				ext, bin = ".zip", "hookreplay.exe"
			}
			matches, _ := filepath.Glob(filepath.Join("dist", "hookreplay_*_"+goos+"_"+goarch+ext))
			if len(matches) != 1 {
				t.Errorf("%s/%s: want one dist/hookreplay_*_%s_%s%s, found %v", goos, goarch, goos, goarch, ext, matches)
				continue
			}
			files := archiveFiles(t, matches[0])
			if head := files[bin]; !bytes.HasPrefix(head, binaryMagic[goos]) {
				t.Errorf("%s: no %s %s executable named %s (entries: %v)", matches[0], goos, goarch, bin, names(files))
			}
			for _, doc := range docs {
				if head, ok := files[doc]; !ok || len(head) == 0 {
					t.Errorf("%s: %s missing or empty (entries: %v)", matches[0], doc, names(files))
				}
			}
		}
	}
}

// packagedDocs lists the files every archive must carry: the repository's
// README and LICENSE (.goreleaser.yaml's README*, LICENSE* globs), the
// completion scripts scripts/release-extras.sh generates, and the man page of
// the root command once the binary has the `man` command that writes them.
func packagedDocs(t *testing.T) []string {
	t.Helper()
	var docs []string
	for _, glob := range []string{"README*", "LICENSE*"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, m...)
	}
	if len(docs) == 0 {
		t.Fatal("no README in the repository root")
	}
	if !slices.Contains(docs, "LICENSE") {
		t.Fatal("no LICENSE in the repository root")
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		docs = append(docs, "completions/hookreplay."+sh)
	}
	if exec.Command("go", "run", ".", "man", "--help").Run() == nil {
		docs = append(docs, "manpages/hookreplay.1")
	} else {
		t.Log("hookreplay has no 'man' command yet: not looking for man pages")
	}
	return docs
}

// archiveFiles maps each regular file in a .tar.gz or .zip to its first bytes.
func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	head := func(r io.Reader) []byte {
		b := make([]byte, 4)
		n, _ := io.ReadFull(r, b)
		return b[:n]
	}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, f.Name, err)
			}
			files[f.Name] = head(rc)
			rc.Close()
		}
		return files
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			files[h.Name] = head(tr)
		}
	}
	return files
}

func names(files map[string][]byte) []string {
	var n []string
	for name := range files {
		n = append(n, name)
	}
	return n
}
