package probe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func scopeVars(t *testing.T) Vars {
	t.Helper()
	body, err := os.ReadFile("testdata/scope_event.json")
	if err != nil {
		t.Fatal(err)
	}
	return EventVars(body, "invoice.paid", "stripe")
}

func TestEventVars(t *testing.T) {
	v := scopeVars(t)
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"json:data.object.customer", "cus_a", true},
		{"json:data.object.amount_paid", "5000", true},
		{"json:data.object.live", "false", true},
		{"json:data.object.lines.0.id", "il_1", true},
		{"json:data.object.lines.1.id", "", false},
		{"json:data.object", "an object", false}, // an object names nothing to scope by: the error says what is there
		{"json:data.object.lines", "an array", false},
		{"json:data.missing", "", false},
		{"event.type", "invoice.paid", true},
		{"provider", "stripe", true},
	} {
		got, ok := v(tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// A scoped SQL probe reads the delivery's own row, its value bound as a
// parameter (a quote in it cannot end the literal); read unscoped it is a
// setup error.
func TestScopedSQLProbe(t *testing.T) {
	path, _ := sqliteDB(t)
	set, err := FromSpecs(context.Background(), Specs{DSN: "sqlite:" + path,
		SQL: []string{"balance=SELECT balance FROM wallets WHERE customer = {{json:data.object.customer}}", "SELECT COUNT(*) FROM wallets"}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if !IsScoped(set.Probes[0]) || IsScoped(set.Probes[1]) {
		t.Fatalf("IsScoped: %v %v", IsScoped(set.Probes[0]), IsScoped(set.Probes[1]))
	}
	if _, err := set.Probes[0].Read(context.Background()); err == nil || !strings.Contains(err.Error(), "per delivery") {
		t.Fatalf("an unscoped read of a scoped probe: %v", err)
	}
	ps, keys, err := ScopeAll(set.Probes, scopeVars(t))
	if err != nil {
		t.Fatal(err)
	}
	if keys[0] == "" || keys[1] != "" || ps[0].Name() != "balance" {
		t.Fatalf("keys %q, name %s", keys, ps[0].Name())
	}
	v, err := ps[0].Read(context.Background())
	if err != nil || v.Text != "5000" {
		t.Fatalf("scoped read: %v %v", v, err)
	}
	quoted, err := NewSQL("sqlite:"+path, "SELECT balance FROM wallets WHERE customer = '{{json:data.object.customer}}'")
	if err != nil {
		t.Fatal(err)
	}
	qp, _, err := quoted.Scope(scopeVars(t))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := qp.Read(context.Background()); err != nil || v.Text != "5000" {
		t.Fatalf("a placeholder written as a string literal is bound all the same: %v %v", v, err)
	}
	injected, _, err := ScopeAll(set.Probes[:1], EventVars([]byte(`{"data":{"object":{"customer":"x' OR '1'='1"}}}`), "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := injected[0].Read(context.Background()); err != nil || v.Text != NoRows {
		t.Fatalf("a quote in the value must stay inside the parameter: %v %v", v, err)
	}
	_, _, err = ScopeAll(set.Probes, EventVars([]byte(`{"data":{}}`), "", ""))
	var se *ScopeError
	if !errors.As(err, &se) || se.Placeholder != "json:data.object.customer" {
		t.Fatalf("a delivery without the field: %v", err)
	}
	// A field that is there but is an object is not called missing.
	_, _, err = ScopeAll(set.Probes, EventVars([]byte(`{"data":{"object":{"customer":{"id":"cus_a"}}}}`), "", ""))
	if !errors.As(err, &se) || se.Found != "an object" || !strings.Contains(err.Error(), "which is an object in the delivery's body") || strings.Contains(err.Error(), "does not have") {
		t.Fatalf("a delivery whose field is an object: %v", err)
	}
}

// A command gets values as single-quoted words; a URL query-escaped.
func TestScopedCmdAndHTTPProbes(t *testing.T) {
	var got string
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.URL.Query().Get("c"); w.Write([]byte("1")) }))
	defer web.Close()
	set, err := FromSpecs(context.Background(), Specs{Cmd: []string{`printf %s "{{json:data.object.note}}"`}, HTTP: []string{web.URL + "/b?c={{json:data.object.note}}"}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ps, _, err := ScopeAll(set.Probes, scopeVars(t))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ReadAll(context.Background(), ps)
	if err != nil {
		t.Fatal(err)
	}
	if want := "it's; $(rm -rf /)"; vals[0].Text != want || got != want {
		t.Fatalf("cmd read %q, http got %q, want %q", vals[0].Text, got, want)
	}
}

// {{event.id}} is refused with the reason; a command's own {{…}} (docker
// --format) is not a placeholder; a Redis probe cannot be scoped.
func TestScopePlaceholdersRefused(t *testing.T) {
	for _, tc := range []struct {
		s    Specs
		want string
	}{
		{Specs{SQL: []string{"SELECT 1 WHERE x = {{event.id}}"}, DSN: "sqlite:x"}, "fresh id"},
		// A mistyped placeholder would be left as it is and read nothing that changes.
		{Specs{HTTP: []string{"http://127.0.0.1:4242/balance?customer={{jsn:data.object.customer}}"}}, "{{jsn:data.object.customer}} is not a placeholder: write {{json:PATH}}"},
		{Specs{SQL: []string{"SELECT 1 WHERE x = {{json.data.object.customer}}"}, DSN: "sqlite:x"}, "{{json.data.object.customer}} is not a placeholder"},
		{Specs{Cmd: []string{"echo {{json: data.object.customer}}"}}, "{{json: data.object.customer}} is not a placeholder"},
		{Specs{Cmd: []string{"echo {{event.kind}}"}}, "{{event.kind}} is not a placeholder"},
		{Specs{Redis: []string{"redis://127.0.0.1:6379/0 GET k:{{json:data.object.customer}}"}}, "cannot name an event's values"},
	} {
		if err := tc.s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.s, err, tc.want)
		}
	}
	for _, c := range []string{"docker inspect -f '{{json .State}}' app", "docker ps --format '{{ .Names }}'", "echo {{ json:data.object.customer }}"} {
		if err := (Specs{Cmd: []string{c}}).Check(); err != nil {
			t.Errorf("%s: %v", c, err)
		}
	}
	s := Specs{Cmd: []string{"docker inspect -f '{{.State.Status}}' app"}}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	set, err := FromSpecs(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if IsScoped(set.Probes[0]) {
		t.Fatal("docker's --format template was taken for a placeholder")
	}
}
