package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/testkit"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestPostgresE2ETriggerWhileCapturing: a trigger created on a team store's
// deliveries table while capture runs — one deleting each row as it is
// inserted, then one rewriting the request — must not cost acknowledged
// deliveries: capture answers 503 to all three deliveries sent meanwhile
// and its log names the trigger (without the commit's check it answered
// 200 to all three and stored none of them as sent). Once the trigger is
// gone capture stores again; a new command refuses the store in one line,
// and --drop-foreign-triggers drops what it names.
func TestPostgresE2ETriggerWhileCapturing(t *testing.T) {
	t.Parallel()
	db := pgStore(t, "e2etrigger")
	p, addr := captureStart(t, db)
	send := func(n int) []captureAnswer { // each on its own connection: a 503 closes it
		var out []captureAnswer
		for range n {
			req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, captureExchange(t, addr, req.Encode(addr, req.Target), 1)...)
		}
		return out
	}
	if a := send(1); a[0].Status != 200 {
		t.Fatalf("before the trigger: %d %s", a[0].Status, a[0].Body)
	}
	for _, tc := range []struct {
		name  string
		stmts []string
	}{
		{"gone", []string{
			`CREATE FUNCTION gone() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM deliveries WHERE id = NEW.id; RETURN NULL; END $$`,
			`CREATE TRIGGER gone AFTER INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION gone()`}},
		{"rewrite", []string{
			`CREATE FUNCTION rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.target = '/admin'; RETURN NEW; END $$`,
			`CREATE TRIGGER rewrite BEFORE INSERT ON deliveries FOR EACH ROW EXECUTE FUNCTION rewrite()`}},
	} {
		testkit.PostgresExec(t, db, tc.stmts...)
		for i, a := range send(3) {
			if a.Status != 503 {
				t.Errorf("%s: delivery %d answered %d %s, want 503", tc.name, i+1, a.Status, a.Body)
			}
		}
		if _, stderr := p.Output(); !strings.Contains(stderr, "trigger "+tc.name+" on deliveries that hookreplay did not create") {
			t.Errorf("%s: capture's log does not say why:\n%s", tc.name, stderr)
		}
		testkit.PostgresExec(t, db, "DROP TRIGGER "+tc.name+" ON deliveries")
		if a := send(1); a[0].Status != 200 {
			t.Errorf("%s: after the drop: %d %s", tc.name, a[0].Status, a[0].Body)
		}
	}
	r := runBin(t, db, nil, "list", "--jq", "length")
	if r.Code != 0 || r.Stdout != "3\n" {
		t.Fatalf("list: %+v", r)
	}
	if r := runBin(t, db, nil, "list", "--json", "target"); r.Code != 0 || strings.Count(r.Stdout, `"target": "/"`) != 3 {
		t.Errorf("stored targets (none rewritten): %s", r.Stdout)
	}

	testkit.PostgresExec(t, db, `CREATE RULE keep_none AS ON INSERT TO deliveries DO ALSO DELETE FROM deliveries WHERE target = NEW.target`)
	r = runBin(t, db, nil, "list")
	if r.Code != 2 || !strings.Contains(r.Stderr, "holds rule keep_none on deliveries that hookreplay did not create") ||
		!strings.Contains(r.Stderr, "--drop-foreign-triggers") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("list on a store with a rule: %+v", r)
	}
	pgNoPassword(t, "list's refusal", r.Stderr)
	r = runBin(t, db, nil, "--drop-foreign-triggers", "list", "--jq", "length")
	if r.Code != 0 || r.Stdout != "3\n" || !strings.Contains(r.Stderr, "dropped rule keep_none on deliveries from ") {
		t.Errorf("--drop-foreign-triggers: %+v", r)
	}
	pgNoPassword(t, "the drop's line", r.Stderr)
}
