package probe

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

func TestFromSpecs(t *testing.T) {
	path, _ := sqliteDB(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("7")) }))
	defer web.Close()
	s := Specs{
		SQL:  []string{"SELECT COALESCE(SUM(balance), 0) FROM wallets"},
		DSN:  "sqlite:" + path,
		Cmd:  []string{"echo 3"},
		HTTP: []string{web.URL},
		Sink: "127.0.0.1:0",
	}
	if s.Empty() || !(Specs{}).Empty() {
		t.Fatal("Empty is wrong")
	}
	set, err := FromSpecs(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if len(set.Probes) != 4 || set.Sink == nil {
		t.Fatalf("got %d probes, sink %v", len(set.Probes), set.Sink)
	}
	vals, err := ReadAll(context.Background(), set.Probes)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vals {
		got = append(got, v.String())
	}
	if want := []string{"5700", "3", "7", "0"}; !slices.Equal(got, want) {
		t.Errorf("values %v, want %v (SQL, cmd, HTTP, sink in that order)", got, want)
	}
	want := []string{"sql1 = sql: " + s.SQL[0], "cmd1 = cmd: echo 3", "http1 = http: " + web.URL, "sink: 127.0.0.1:0"}
	if l := s.Labels(); !slices.Equal(l, want) {
		t.Errorf("Labels() = %q, want %q", l, want)
	}
}

// A probe given without a name is called by an automatic short name (sql1,
// cmd2…), so reports show its full text once, in the header; its errors
// still name it in full, as the user typed it.
func TestAutomaticProbeNames(t *testing.T) {
	set, err := FromSpecs(context.Background(), Specs{Cmd: []string{"echo 1", "n=echo 2", "exit 3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	var names []string
	for _, p := range set.Probes {
		names = append(names, p.Name())
	}
	if !slices.Equal(names, []string{"cmd1", "n", "cmd3"}) {
		t.Fatalf("names %q", names)
	}
	if _, err := set.Probes[2].Read(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "probe cmd: exit 3:") {
		t.Fatalf("an automatic name's error should name the probe in full: %v", err)
	}
}

func TestFromSpecsErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range []struct {
		name string
		s    Specs
		kind SpecKind
		spec string
	}{
		{"sql without a usable dsn", Specs{SQL: []string{"SELECT 1"}, DSN: "sqlite:"}, SpecSQL, "SELECT 1"},
		{"sink on a taken address", Specs{Cmd: []string{"echo 1"}, Sink: ln.Addr().String()}, SpecSink, ln.Addr().String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			set, err := FromSpecs(context.Background(), tt.s)
			var se *SpecError
			if set != nil || !errors.As(err, &se) {
				t.Fatalf("FromSpecs = %v, %v; want a *SpecError", set, err)
			}
			if se.Kind != tt.kind || se.Spec != tt.spec || !strings.Contains(err.Error(), tt.spec) {
				t.Errorf("SpecError %+v (%v), want kind %s spec %q", se, err, tt.kind, tt.spec)
			}
		})
	}
}

func TestSplitName(t *testing.T) {
	for _, tc := range []struct{ spec, name, probe string }{
		{"balance=SELECT balance FROM wallets", "balance", "SELECT balance FROM wallets"},
		{"SELECT balance FROM wallets WHERE id=1", "", "SELECT balance FROM wallets WHERE id=1"},
		{"n=SELECT count(*) FROM t WHERE a='b=c'", "n", "SELECT count(*) FROM t WHERE a='b=c'"},
		{"select=1", "select", "1"}, // a lower-case word, then =: a name
		{"PGPASSWORD=x psql -tAc 'select 1'", "", "PGPASSWORD=x psql -tAc 'select 1'"},
		{"emails=127.0.0.1:9100", "emails", "127.0.0.1:9100"},
		{"http://127.0.0.1/state?x=1", "", "http://127.0.0.1/state?x=1"},
		{"state=http://127.0.0.1/state?x=1", "state", "http://127.0.0.1/state?x=1"},
		{"sent-emails_2=echo 3", "sent-emails_2", "echo 3"},
		{"2x=echo 3", "", "2x=echo 3"},
		{"=echo 3", "", "=echo 3"},
		{"a b=echo", "", "a b=echo"},
	} {
		name, p := SplitName(tc.spec)
		if name != tc.name || p != tc.probe {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", tc.spec, name, p, tc.name, tc.probe)
		}
	}
}

// A named probe is called by its name, also in its errors.
func TestNamedProbes(t *testing.T) {
	set, err := FromSpecs(context.Background(), Specs{Cmd: []string{"three=echo 3", "broken=exit 1"}, Sink: "emails=127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	var names []string
	for _, p := range set.Probes {
		names = append(names, p.Name())
	}
	if !slices.Equal(names, []string{"three", "broken", "emails"}) {
		t.Fatalf("names %q", names)
	}
	if v, err := set.Probes[0].Read(context.Background()); err != nil || v.Text != "3" {
		t.Fatalf("three: %v %v", v, err)
	}
	if _, err := ReadAll(context.Background(), set.Probes); err == nil || !strings.HasPrefix(err.Error(), "probe broken:") {
		t.Fatalf("error should name the probe: %v", err)
	}
	l := (Specs{SQL: []string{"balance=SELECT 1"}, Cmd: []string{"echo 2"}}).Labels()
	if !slices.Equal(l, []string{"balance = sql: SELECT 1", "cmd1 = cmd: echo 2"}) {
		t.Fatalf("labels %q", l)
	}
}

func TestCallPattern(t *testing.T) {
	for _, tc := range []struct {
		pat, method, path string
		want              bool
	}{
		{"POST /repos/*/issues/*/comments", "POST", "/repos/o/r/issues/12/comments", true},
		{"POST /repos/*/issues/*/comments", "post", "/repos/o/r/issues/12/comments?per_page=1", true},
		{"POST /repos/*/issues/*/comments", "GET", "/repos/o/r/issues/12/comments", false},
		{"POST /repos/*/issues/*/comments", "POST", "/app/installations/1/access_tokens", false},
		{"/v1/send", "PUT", "/v1/send", true},
		{"/v1/send", "PUT", "/v1/sendx", false},
		{"/v1.0/*", "POST", "/v100/x", false}, // . is literal
	} {
		p, err := ParseCallPattern(tc.pat)
		if err != nil {
			t.Fatalf("%q: %v", tc.pat, err)
		}
		if got := p.Matches(Call{Method: tc.method, Path: tc.path}); got != tc.want {
			t.Errorf("%q matches %s %s: %v, want %v", tc.pat, tc.method, tc.path, got, tc.want)
		}
	}
	for _, bad := range []string{"", "POST", "POST repos/x", "comments"} {
		if _, err := ParseCallPattern(bad); err == nil {
			t.Errorf("%q should be refused", bad)
		}
	}
}
