package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// The promise of trust.go on Postgres. Whoever owns a team store's schema
// (or the tables in it) can create a trigger or a rule on deliveries that
// deletes or rewrites each row as capture inserts it: capture would answer
// 2xx to what is then gone. So a Postgres store is checked on open, as a
// SQLite file is: no trigger or rule on a table of hookreplay's schema but
// hookreplay's own change notifications (same name, timing, function and
// function body), and hookreplay's tables ordinary, logged tables (an
// UNLOGGED table is emptied by a server crash).
//
// And each capture commit runs the same check inside its own transaction,
// after its inserts and before COMMIT, in the same pipeline (no round trip
// of its own): its inserts hold a ROW EXCLUSIVE lock on deliveries until
// COMMIT, and creating, replacing or dropping a trigger or rule on it, or
// ALTER TABLE, needs a lock that conflicts with it, so what the check sees
// is what acted on the batch's rows. A batch that finds a foreign object
// fails before COMMIT (capture answers 503, its log says why) instead of
// acknowledging what a trigger may have removed.
//
// Row-level security cannot take a delivery silently: a policy that
// refuses capture's row fails the insert, and INSERT … RETURNING fails when
// capture may not read back the row it stored.

// pgNotifyTriggers are hookreplay's own triggers: each table's
// change notification (migration 1).
var pgNotifyTriggers = []string{"deliveries", "runs", "attempts", "verdicts"}

// pgNotifyType is their pg_trigger.tgtype: AFTER INSERT OR UPDATE OR DELETE
// FOR EACH STATEMENT (4 | 8 | 16).
const pgNotifyType = 28

// pgForeignQuery lists, one text row each, the objects on hookreplay's
// tables in the current schema (the store's: search_path names it alone)
// that hookreplay did not create and that could act on its writes.
var pgForeignQuery = sync.OnceValue(func() string {
	var tables []string
	for _, m := range regexp.MustCompile(`CREATE TABLE (\w+)`).FindAllStringSubmatch(strings.Join(pgMigrations, "\n"), -1) {
		tables = append(tables, m[1])
	}
	return pgForeignOn(tables)
})

// pgForeignOn is pgForeignQuery for the tables named. Each table is looked
// up when the query runs (to_regclass, through the search path, as
// hookreplay's own statements find it), and everything else by its oid,
// through the catalogs' indexes: the query is cheap to plan and to run.
// Catalogs and functions are named with pg_catalog so that nothing in the
// schema can stand in for them.
func pgForeignOn(tables []string) string {
	ours := `SELECT p.oid FROM pg_catalog.pg_proc p WHERE p.proname = 'hookreplay_notify'
		AND p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = pg_catalog.current_schema())
		AND p.prosrc = ` + quoteLiteral(pgNotifySource()) + ` AND p.proconfig IS NULL AND NOT p.prosecdef
		AND p.prolang = (SELECT oid FROM pg_catalog.pg_language WHERE lanname = 'plpgsql')`
	var parts []string
	for _, name := range tables {
		rel := `pg_catalog.to_regclass(` + quoteLiteral(quoteIdent(name)) + `)`
		on := ` || ' on ` + name + `'`
		notify := "FALSE"
		if slices.Contains(pgNotifyTriggers, name) {
			notify = `t.tgname = ` + quoteLiteral(name+"_notify") + ` AND t.tgtype = ` + fmt.Sprint(pgNotifyType) + ` AND t.tgfoid IN (` + ours + `)`
		}
		parts = append(parts,
			`SELECT 'trigger ' || t.tgname`+on+` || CASE WHEN t.tgname = `+quoteLiteral(name+"_notify")+` THEN ' (not as hookreplay made it)' ELSE '' END
	FROM pg_catalog.pg_trigger t WHERE t.tgrelid = `+rel+` AND NOT t.tgisinternal AND NOT (`+notify+`)`,
			`SELECT 'rule ' || r.rulename`+on+` FROM pg_catalog.pg_rewrite r WHERE r.ev_class = `+rel,
			`SELECT CASE WHEN c.relkind <> 'r' THEN 'relation `+name+` that is not a table' ELSE 'unlogged table `+name+`' END
	FROM pg_catalog.pg_class c WHERE c.oid = `+rel+` AND (c.relkind <> 'r' OR c.relpersistence <> 'p')`)
	}
	return strings.Join(parts, "\nUNION ALL\n")
}

// pgGuardSQL is the check each capture commit runs before COMMIT, on
// deliveries (the one table capture writes): when pgForeignOn finds anything it fails, aborting the transaction, with
// the objects in its message (after pgGuardMark). It is plain SQL, not a
// DO block, so that the connection prepares and plans it once: a DO block
// is planned anew on every commit, 1–3 ms of the server's time here. The
// failure is a cast of the text to an integer, which a role that is not a
// superuser cannot redefine (CREATE CAST needs to own text or int4).
var pgGuardSQL = sync.OnceValue(func() string {
	return `SELECT CAST(pg_catalog.textcat('` + pgGuardMark + `', pg_catalog.string_agg(f, '; ')) AS pg_catalog.int4)
	FROM (` + pgForeignOn([]string{"deliveries"}) + `
UNION ALL
SELECT '` + pgChangedMark + `' || (i - pg_catalog.split_part(m, ',', 1)::bigint)::text || ' inserted, '
		|| (u - pg_catalog.split_part(m, ',', 2)::bigint)::text || ' updated, '
		|| (dl - pg_catalog.split_part(m, ',', 3)::bigint)::text || ' deleted'
		|| CASE WHEN fn IS DISTINCT FROM pg_catalog.split_part(m, ',', 4) THEN ', emptied' ELSE '' END
		|| '; hookreplay inserted ' || $1::bigint::text || ' and answered ' || $2::bigint::text
	FROM (SELECT pg_catalog.pg_stat_get_xact_tuples_inserted(r) AS i, pg_catalog.pg_stat_get_xact_tuples_updated(r) AS u,
		pg_catalog.pg_stat_get_xact_tuples_deleted(r) AS dl, pg_catalog.pg_relation_filenode(r)::text AS fn,
		pg_catalog.current_setting('hookreplay.batch', true) AS m
		FROM (SELECT pg_catalog.to_regclass('deliveries') AS r) AS x) AS y
	WHERE m IS NULL OR m = '' OR fn IS DISTINCT FROM pg_catalog.split_part(m, ',', 4)
		OR pg_catalog.current_setting('track_counts') = 'on' AND (i - pg_catalog.split_part(m, ',', 1)::bigint <> $1::bigint
			OR u - pg_catalog.split_part(m, ',', 2)::bigint > $2::bigint OR dl - pg_catalog.split_part(m, ',', 3)::bigint <> 0)
	) AS f(f) HAVING pg_catalog.count(*) > 0`
})

// pgMarkSQL runs first in each capture commit: it records the backend's
// counts of rows inserted, updated and deleted in deliveries so far, and the
// table's file, for pgGuardSQL to compare with its own statements' at the
// end. The counts are the backend's (Postgres 15 keeps earlier
// transactions' in them until it reports them), so they are compared as
// differences within the one transaction, where nothing reports them.
// Whatever deleted, added or changed rows of deliveries in the commit — a
// trigger, a rule, or a function a column default, a CHECK constraint, a
// policy or an index expression calls — shows in them; TRUNCATE shows as a
// new file. A server that counts nothing (track_counts off, which only a
// superuser may set) leaves only that and the catalog check.
const pgMarkSQL = `SELECT pg_catalog.set_config('hookreplay.batch', pg_catalog.concat_ws(',',
	pg_catalog.pg_stat_get_xact_tuples_inserted(r), pg_catalog.pg_stat_get_xact_tuples_updated(r),
	pg_catalog.pg_stat_get_xact_tuples_deleted(r), pg_catalog.pg_relation_filenode(r)), true)
	FROM (SELECT pg_catalog.to_regclass('deliveries') AS r) AS x`

// pgChangedMark starts what pgGuardSQL reports about the commit's counts.
const pgChangedMark = "changed: "

// pgGuardMark starts the text pgGuardSQL fails on, to tell its failure
// from any other.
const pgGuardMark = "hookreplay found: "

// pgNotifySource is the body of hookreplay_notify() as migration 1
// creates it (pg_proc.prosrc).
func pgNotifySource() string {
	m := pgMigrations[0]
	i := strings.Index(m, "hookreplay_notify() RETURNS trigger LANGUAGE plpgsql AS $$")
	body := m[i+len("hookreplay_notify() RETURNS trigger LANGUAGE plpgsql AS $$"):]
	return body[:strings.Index(body, "$$")]
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// checkTrustPostgres refuses (or, when drop is set, drops) what
// pgForeignQuery finds.
func (s *Store) checkTrustPostgres(ctx context.Context, drop func([]string)) error {
	found, err := s.pgForeign(ctx)
	if err != nil || len(found) == 0 {
		return err
	}
	if drop == nil {
		return &ForeignObjectsError{Objects: found}
	}
	var dropped []string
	for _, o := range found {
		q, ok := pgDropStatement(o)
		if !ok {
			return &ForeignObjectsError{Objects: found}
		}
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("drop %s: %s", o, pgMessage(err))
		}
		dropped = append(dropped, o)
	}
	drop(dropped)
	return nil
}

func (s *Store) pgForeign(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, pgForeignQuery())
	if err != nil {
		return nil, fmt.Errorf("read schema: %w", err)
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			return nil, fmt.Errorf("read schema: %w", err)
		}
		found = append(found, o)
	}
	return found, rows.Err()
}

var pgObjectName = regexp.MustCompile(`^(trigger|rule) (.+) on (\w+)$`) // not "(not as hookreplay made it)": its own are not dropped

// pgDropStatement is the statement dropping a trigger or rule
// pgForeignQuery named; tables that are not hookreplay's kind are not
// dropped (ok false).
func pgDropStatement(o string) (string, bool) {
	m := pgObjectName.FindStringSubmatch(o)
	if m == nil {
		return "", false
	}
	return fmt.Sprintf(`DROP %s %s ON %s`, strings.ToUpper(m[1]), quoteIdent(m[2]), quoteIdent(m[3])), true
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// guardErr words the error of a commit the check refused; other errors
// are returned as they are.
func guardErr(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22P02" { // invalid_text_representation
		return err
	}
	_, found, ok := strings.Cut(pe.Message, `"`+pgGuardMark)
	if !ok {
		return err
	}
	found = strings.TrimSuffix(found, `"`)
	if i := strings.Index(found, pgChangedMark); i >= 0 && !strings.Contains(found[:i], " on ") {
		return fmt.Errorf("%w (deliveries: %s)", errChangedInCommit, found[i+len(pgChangedMark):])
	}
	var objects []string
	for _, o := range strings.Split(found, "; ") {
		if strings.HasPrefix(o, pgChangedMark) || strings.HasPrefix(o, "hookreplay inserted ") {
			continue // also changed rows: the objects say why
		}
		objects = append(objects, o)
	}
	return &ForeignObjectsError{Objects: objects, InCommit: true}
}
