package e2e

// Headless Chromium for the HTML report's tests: the page as a browser
// opens it from a file, its DOM read back after its scripts ran, and
// screenshots.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium returns the path of Chromium (the Debian package `chromium`);
// a test that needs it is skipped when it is missing, and fails under CI
// (.ci/run installs it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found (CI is set: .ci/run installs the Debian package chromium)")
	}
	t.Skip("chromium not found: the HTML report's browser tests need the Debian package chromium")
	return ""
}

// chromiumRun runs headless Chromium on the file page with args, in a
// profile of its own, and returns its stdout and stderr.
func chromiumRun(t *testing.T, bin, page string, args ...string) (string, string) {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--metrics-recording-only",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.CommandContext(ctx, bin, append(all, "file://"+abs)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// chromiumDOM opens page and returns its DOM once loaded.
func chromiumDOM(t *testing.T, bin, page string, args ...string) (dom, stderr string) {
	t.Helper()
	return chromiumRun(t, bin, page, append([]string{"--dump-dom", "--virtual-time-budget=2000"}, args...)...)
}

var htmlAttrRe = func(name string) *regexp.Regexp { return regexp.MustCompile(`<html[^>]* ` + name + `="(\d+)"`) }

// domNumber is the number in the root element's attribute name (-1: none).
func domNumber(dom, name string) int {
	m := htmlAttrRe(name).FindStringSubmatch(dom)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// chromiumScreenshot writes a PNG of page, width wide and as tall as the page.
func chromiumScreenshot(t *testing.T, bin, page, png string, width int) {
	t.Helper()
	size := func(h int) string { return "--window-size=" + strconv.Itoa(width) + "," + strconv.Itoa(h) }
	dom, _ := chromiumDOM(t, bin, page, size(900))
	h := domNumber(dom, "data-height")
	if h <= 0 {
		t.Fatalf("the page did not report its height")
	}
	chromiumRun(t, bin, page, "--screenshot="+png, size(h))
}
