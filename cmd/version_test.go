package cmd

import (
	"runtime/debug"
	"testing"
)

// TestVersionFromBuildInfo: 'go install …@v1.2.0' builds without -ldflags;
// --version then says v1.2.0 instead of dev.
func TestVersionFromBuildInfo(t *testing.T) {
	mod := func(v string) *debug.BuildInfo { return &debug.BuildInfo{Main: debug.Module{Version: v}} }
	for _, tc := range []struct {
		ldflags string
		bi      *debug.BuildInfo
		ok      bool
		want    string
	}{
		{"dev", mod("v1.2.0"), true, "v1.2.0"},
		{"dev", mod("(devel)"), true, "dev"},
		{"dev", nil, false, "dev"},
		{"1.3.0", mod("v1.2.0"), true, "1.3.0"}, // goreleaser's -ldflags win
	} {
		if got := versionFrom(tc.ldflags, tc.bi, tc.ok); got != tc.want {
			t.Errorf("versionFrom(%q, %v) = %q, want %q", tc.ldflags, tc.bi, got, tc.want)
		}
	}
}
