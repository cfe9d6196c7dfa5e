package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/iostreams"
)

func TestExportFlags(t *testing.T) {
	tests := []struct {
		args    []string
		check   func(*exportOptions) bool
		wantErr string
	}{
		{[]string{"3", "#4", "-o", "x.jsonl"}, func(o *exportOptions) bool {
			return len(o.IDs) == 2 && o.IDs[0] == 3 && o.IDs[1] == 4 && o.Output == "x.jsonl"
		}, ""},
		{[]string{"--format", "JSONL", "--provider", "stripe", "--type", "invoice.*", "--since", "7d"}, func(o *exportOptions) bool {
			return o.Provider == "stripe" && o.TypeGlob == "invoice.*" && o.Since == 7*24*time.Hour
		}, ""},
		{[]string{"--format", "HAR"}, func(o *exportOptions) bool { return o.Format == "har" }, ""},
		{[]string{"--format", "xml"}, nil, `unknown format "xml" (want jsonl, har, curl, raw)`},
		{[]string{"0"}, nil, "invalid delivery id"},
		{[]string{"1", "--since", "2h"}, nil, "not both"},
	}
	for _, tt := range tests {
		io, _, _, _ := iostreams.Test()
		var got *exportOptions
		cmd := newExportCmd(newFactory(io), func(o *exportOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		cmd.SetOut(io.Out)
		cmd.SetErr(io.ErrOut)
		err := cmd.Execute()
		if tt.wantErr != "" {
			if code, msg := exitCode(err); code != 2 || !strings.Contains(msg, tt.wantErr) {
				t.Errorf("%v: exit %d %q, want 2 and %q", tt.args, code, msg, tt.wantErr)
			}
			continue
		}
		if err != nil || got == nil || !tt.check(got) {
			t.Errorf("%v: err %v, options %+v", tt.args, err, got)
		}
	}
}

func TestImportFlags(t *testing.T) {
	io, _, _, _ := iostreams.Test()
	var got *importOptions
	cmd := newImportCmd(newFactory(io), func(o *importOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-", "--json"})
	if err := cmd.Execute(); err != nil || got.File != "-" || !got.JSON {
		t.Errorf("err %v options %+v", err, got)
	}
}
