package main

import (
	"strings"
	"testing"
)

func TestVersionAndUsageErrors(t *testing.T) {
	r := runBin(t, "", nil, "--version")
	if r.Code != 0 || !strings.Contains(r.Stdout, "hookreplay version") {
		t.Fatalf("--version: %+v", r)
	}
	r = runBin(t, "", nil, "no-such-command")
	if r.Code != 2 || !strings.Contains(r.Stderr, "unknown command") {
		t.Fatalf("unknown command: %+v", r)
	}
	r = runBin(t, "", nil, "--no-such-flag")
	if r.Code != 2 {
		t.Fatalf("unknown flag: %+v", r)
	}
}
