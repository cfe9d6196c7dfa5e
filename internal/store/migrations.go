package store

// migrations are applied in order; PRAGMA user_version records how many ran.
// Append only: never edit a migration that has shipped. Every change here
// needs its twin in pgMigrations below (TestSchemasMatch compares them).
var migrations = []string{
	// 1: deliveries, runs, attempts, probe readings, verdicts, sink effects.
	`
CREATE TABLE deliveries (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	received_at      INTEGER NOT NULL,            -- unix nanoseconds
	source           TEXT    NOT NULL DEFAULT '',
	remote_addr      TEXT    NOT NULL DEFAULT '',
	provider         TEXT    NOT NULL DEFAULT 'generic',
	event_id         TEXT    NOT NULL DEFAULT '',
	event_type       TEXT    NOT NULL DEFAULT '',
	identity         TEXT    NOT NULL DEFAULT '{}', -- JSON: secondary ids (e.g. shopify webhook id)
	method           TEXT    NOT NULL,
	target           TEXT    NOT NULL,
	proto            TEXT    NOT NULL DEFAULT 'HTTP/1.1',
	headers          TEXT    NOT NULL DEFAULT '[]', -- JSON ordered [{name,value}]
	raw_request      BLOB    NOT NULL,              -- exact wire bytes
	body             BLOB    NOT NULL,              -- decoded body
	verification     TEXT    NOT NULL DEFAULT '',   -- '' not checked, 'valid ...' or 'invalid: reason'
	response_status  INTEGER NOT NULL DEFAULT 0,
	response_headers TEXT    NOT NULL DEFAULT '[]',
	response_body    BLOB,
	latency_ns       INTEGER NOT NULL DEFAULT 0,
	forward_error    TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX deliveries_received ON deliveries(received_at);
CREATE INDEX deliveries_event ON deliveries(event_id);

CREATE TABLE runs (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	kind        TEXT    NOT NULL,              -- 'replay' or 'check'
	started_at  INTEGER NOT NULL,
	finished_at INTEGER NOT NULL DEFAULT 0,
	target      TEXT    NOT NULL DEFAULT '',
	seed        INTEGER NOT NULL DEFAULT 0,
	options     TEXT    NOT NULL DEFAULT '{}', -- JSON, never secrets
	verdict     TEXT    NOT NULL DEFAULT '',   -- check: pass|fail|inconclusive|error; replay: ok|errors
	summary     TEXT    NOT NULL DEFAULT '{}'  -- JSON
);

CREATE TABLE attempts (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id      INTEGER NOT NULL DEFAULT 0,
	phase            TEXT    NOT NULL DEFAULT '',
	copy             INTEGER NOT NULL DEFAULT 0,
	conn_id          INTEGER NOT NULL DEFAULT 0,
	event_id         TEXT    NOT NULL DEFAULT '',
	sent_at          INTEGER NOT NULL DEFAULT 0,  -- first byte written, unix ns
	completed_at     INTEGER NOT NULL DEFAULT 0,  -- last request byte written, unix ns
	status           INTEGER NOT NULL DEFAULT 0,
	response_headers TEXT    NOT NULL DEFAULT '[]',
	response_body    BLOB,
	latency_ns       INTEGER NOT NULL DEFAULT 0,
	error            TEXT    NOT NULL DEFAULT '',
	lost             INTEGER NOT NULL DEFAULT 0,  -- response deliberately not read
	edit             TEXT    NOT NULL DEFAULT '', -- description of edits applied
	stands_for_ns    INTEGER NOT NULL DEFAULT 0,  -- real (uncompressed) schedule offset
	detail           TEXT    NOT NULL DEFAULT '{}'
);
CREATE INDEX attempts_run ON attempts(run_id);

CREATE TABLE probe_readings (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id INTEGER NOT NULL DEFAULT 0,
	phase       TEXT    NOT NULL DEFAULT '',
	point       TEXT    NOT NULL DEFAULT '',     -- 'before', 'after', 'after copy 3', ...
	probe       TEXT    NOT NULL,
	value       TEXT    NOT NULL DEFAULT '',
	numeric     REAL,                            -- NULL when the value is not a number
	read_at     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX probe_readings_run ON probe_readings(run_id);

CREATE TABLE verdicts (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id INTEGER NOT NULL DEFAULT 0,
	phase       TEXT    NOT NULL,
	status      TEXT    NOT NULL,                -- pass|fail|warn|skip|inconclusive|notjudged
	message     TEXT    NOT NULL DEFAULT '',
	detail      TEXT    NOT NULL DEFAULT '{}'    -- JSON
);
CREATE INDEX verdicts_run ON verdicts(run_id);

CREATE TABLE effects (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id      INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id INTEGER NOT NULL DEFAULT 0,
	phase       TEXT    NOT NULL DEFAULT '',
	at          INTEGER NOT NULL DEFAULT 0,
	method      TEXT    NOT NULL DEFAULT '',
	path        TEXT    NOT NULL DEFAULT '',
	body        BLOB
);
CREATE INDEX effects_run ON effects(run_id);
`,
	// 2: a delivery's past attempts across runs (the TUI's delivery view).
	`CREATE INDEX attempts_delivery ON attempts(delivery_id);`,
	// 3: the full length of a handler's answer of which capture stored only
	// a prefix (0: response_body is the whole answer).
	`ALTER TABLE deliveries ADD COLUMN response_size INTEGER NOT NULL DEFAULT 0;`,
	// 4: where an imported delivery came from ("har:devtools.har"); '' for captured ones.
	`ALTER TABLE deliveries ADD COLUMN origin TEXT NOT NULL DEFAULT '';`,
	// 5: where the decoded body starts in raw_request when it is the raw
	// request's last bytes (Content-Length framing: nearly every delivery),
	// so that it is not stored twice; body is then empty. -1: body holds it
	// (chunked framing, or a row written before this migration).
	`ALTER TABLE deliveries ADD COLUMN body_at INTEGER NOT NULL DEFAULT -1;`,
	// 6: list --source and the TUI's source: filter, newest first, on a
	// store several captures write (capture --source, default the host name).
	`CREATE INDEX deliveries_source ON deliveries(source, id);`,
	// 7: an edited copy (the TUI's edit-and-replay) names the delivery it
	// was edited from; 0 for every delivery captured or imported as it was.
	`ALTER TABLE deliveries ADD COLUMN derived_from INTEGER NOT NULL DEFAULT 0;`,
	// 8: small settings a database remembers, by name (the TUI's check form:
	// what was entered last, so c opens prefilled). Values are JSON.
	`CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);`,
	// 9: a reading's settle window, for a run's timeline: when the reading
	// began waiting for the probes to hold still, and when a probe last
	// changed while it waited (0: none did, or a row written before this).
	`ALTER TABLE probe_readings ADD COLUMN settle_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE probe_readings ADD COLUMN changed_at INTEGER NOT NULL DEFAULT 0;`,
}

// pgMigrations are the Postgres schema's migrations, applied in order in
// one transaction under an advisory lock; the schema's hookreplay_schema
// table records how many ran (and marks the schema as hookreplay's).
// Append only. Columns match the SQLite schema's, in Postgres's types:
// times stay unix nanoseconds in bigint (timestamptz keeps microseconds,
// and an export must give back the nanoseconds it was given), blobs are
// bytea. Every change to deliveries, runs and their rows notifies channel
// "hookreplay" with the schema's name (the live-change signal Watch uses).
var pgMigrations = []string{
	// 1: the SQLite schema as of its migration 6, and the change triggers.
	`
CREATE TABLE deliveries (
	id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	received_at      bigint  NOT NULL,
	source           text    NOT NULL DEFAULT '',
	remote_addr      text    NOT NULL DEFAULT '',
	provider         text    NOT NULL DEFAULT 'generic',
	event_id         text    NOT NULL DEFAULT '',
	event_type       text    NOT NULL DEFAULT '',
	identity         text    NOT NULL DEFAULT '{}',
	method           text    NOT NULL,
	target           text    NOT NULL,
	proto            text    NOT NULL DEFAULT 'HTTP/1.1',
	headers          text    NOT NULL DEFAULT '[]',
	raw_request      bytea   NOT NULL,
	body             bytea   NOT NULL,
	verification     text    NOT NULL DEFAULT '',
	response_status  integer NOT NULL DEFAULT 0,
	response_headers text    NOT NULL DEFAULT '[]',
	response_body    bytea,
	latency_ns       bigint  NOT NULL DEFAULT 0,
	forward_error    text    NOT NULL DEFAULT '',
	response_size    bigint  NOT NULL DEFAULT 0,
	origin           text    NOT NULL DEFAULT '',
	body_at          integer NOT NULL DEFAULT -1
);
CREATE INDEX deliveries_received ON deliveries(received_at);
CREATE INDEX deliveries_event ON deliveries(event_id);
CREATE INDEX deliveries_source ON deliveries(source, id);

CREATE TABLE runs (
	id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	kind        text   NOT NULL,
	started_at  bigint NOT NULL,
	finished_at bigint NOT NULL DEFAULT 0,
	target      text   NOT NULL DEFAULT '',
	seed        bigint NOT NULL DEFAULT 0,
	options     text   NOT NULL DEFAULT '{}',
	verdict     text   NOT NULL DEFAULT '',
	summary     text   NOT NULL DEFAULT '{}'
);

CREATE TABLE attempts (
	id               bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	run_id           bigint  NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id      bigint  NOT NULL DEFAULT 0,
	phase            text    NOT NULL DEFAULT '',
	copy             integer NOT NULL DEFAULT 0,
	conn_id          bigint  NOT NULL DEFAULT 0,
	event_id         text    NOT NULL DEFAULT '',
	sent_at          bigint  NOT NULL DEFAULT 0,
	completed_at     bigint  NOT NULL DEFAULT 0,
	status           integer NOT NULL DEFAULT 0,
	response_headers text    NOT NULL DEFAULT '[]',
	response_body    bytea,
	latency_ns       bigint  NOT NULL DEFAULT 0,
	error            text    NOT NULL DEFAULT '',
	lost             boolean NOT NULL DEFAULT false,
	edit             text    NOT NULL DEFAULT '',
	stands_for_ns    bigint  NOT NULL DEFAULT 0,
	detail           text    NOT NULL DEFAULT '{}'
);
CREATE INDEX attempts_run ON attempts(run_id);
CREATE INDEX attempts_delivery ON attempts(delivery_id);

CREATE TABLE probe_readings (
	id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id bigint NOT NULL DEFAULT 0,
	phase       text   NOT NULL DEFAULT '',
	point       text   NOT NULL DEFAULT '',
	probe       text   NOT NULL,
	value       text   NOT NULL DEFAULT '',
	numeric     double precision,
	read_at     bigint NOT NULL DEFAULT 0
);
CREATE INDEX probe_readings_run ON probe_readings(run_id);

CREATE TABLE verdicts (
	id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id bigint NOT NULL DEFAULT 0,
	phase       text   NOT NULL,
	status      text   NOT NULL,
	message     text   NOT NULL DEFAULT '',
	detail      text   NOT NULL DEFAULT '{}'
);
CREATE INDEX verdicts_run ON verdicts(run_id);

CREATE TABLE effects (
	id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
	run_id      bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	delivery_id bigint NOT NULL DEFAULT 0,
	phase       text   NOT NULL DEFAULT '',
	at          bigint NOT NULL DEFAULT 0,
	method      text   NOT NULL DEFAULT '',
	path        text   NOT NULL DEFAULT '',
	body        bytea
);
CREATE INDEX effects_run ON effects(run_id);

CREATE FUNCTION hookreplay_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('hookreplay', TG_TABLE_SCHEMA);
	RETURN NULL;
END $$;
CREATE TRIGGER deliveries_notify AFTER INSERT OR UPDATE OR DELETE ON deliveries
	FOR EACH STATEMENT EXECUTE FUNCTION hookreplay_notify();
CREATE TRIGGER runs_notify AFTER INSERT OR UPDATE OR DELETE ON runs
	FOR EACH STATEMENT EXECUTE FUNCTION hookreplay_notify();
CREATE TRIGGER attempts_notify AFTER INSERT OR UPDATE OR DELETE ON attempts
	FOR EACH STATEMENT EXECUTE FUNCTION hookreplay_notify();
CREATE TRIGGER verdicts_notify AFTER INSERT OR UPDATE OR DELETE ON verdicts
	FOR EACH STATEMENT EXECUTE FUNCTION hookreplay_notify();
`,
	// 2: SQLite's migrations 7 and 8: an edited copy names its original;
	// the settings a database remembers.
	`ALTER TABLE deliveries ADD COLUMN derived_from bigint NOT NULL DEFAULT 0;
CREATE TABLE settings (name text PRIMARY KEY, value text NOT NULL);`,
	// 3: SQLite's migration 9: a reading's settle window.
	`ALTER TABLE probe_readings ADD COLUMN settle_from bigint NOT NULL DEFAULT 0;
ALTER TABLE probe_readings ADD COLUMN changed_at bigint NOT NULL DEFAULT 0;`,
}
