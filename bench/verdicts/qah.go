//go:build ignore

// qah: small webhook handlers written the way real projects write them, for
// comparing hookreplay check verdicts between builds (bench/verdicts.sh).
// One net/http server verifying Stripe, GitHub, Shopify and WhatsApp
// signatures, SQLite through modernc.org/sqlite; -mode picks the handler:
//
//	correct           INSERT … ON CONFLICT DO NOTHING dedupe, effect in the same transaction
//	racy              check-then-insert (SELECT, 20 ms of work, INSERT): concurrent copies race
//	async-ok          answers 200, then 50-500 ms later does correct's work in a goroutine
//	async-bug         answers 200, then 50-500 ms later does racy's work in a goroutine
//	job, job-bug      enqueues a job row (unique per event id; job-bug: no unique index), a worker
//	                  polling every 100-300 ms does the work
//	email, email-bug  dedupe, then a receipt through SMTP 300 ms after answering (email-bug: for
//	                  every copy)
//	credit-email(-bug) credits at once and sends the receipt 100-700 ms after answering
//	redelivered       correct's dedupe; an event's first redelivery sets processed.redelivered, once
//	audit             correct's dedupe, plus an audit_log row for every verified request
//	slow              correct, 200-800 ms per request
//	flaky             correct, but 10 % of requests answer 500 before doing anything
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"net/smtp"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite"
)

var (
	db       *sql.DB
	secret   string
	mode     string
	smtpAt   string
	mu       sync.Mutex
	sentMail = map[string]bool{}
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen")
	dbPath := flag.String("db", "app.db", "sqlite file")
	flag.StringVar(&secret, "secret", "whsec_test", "signing secret")
	flag.StringVar(&mode, "mode", "correct", "handler variant")
	flag.StringVar(&smtpAt, "smtp", "127.0.0.1:2525", "smtp server")
	flag.Parse()
	var err error
	db, err = sql.Open("sqlite", "file:"+*dbPath+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	db.SetMaxOpenConns(4)
	for _, s := range []string{
		`CREATE TABLE IF NOT EXISTS processed (event_id TEXT PRIMARY KEY, at TEXT, redelivered INTEGER DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS seen (event_id TEXT, at TEXT)`, // no unique: check-then-insert
		`CREATE TABLE IF NOT EXISTS effects (event_id TEXT, provider TEXT, type TEXT, obj TEXT, at TEXT)`,
		`CREATE TABLE IF NOT EXISTS audit_log (event_id TEXT, provider TEXT, at TEXT)`,
		`CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, event_id TEXT, provider TEXT, type TEXT, obj TEXT, done INTEGER DEFAULT 0)`,
		`CREATE UNIQUE INDEX IF NOT EXISTS jobs_event ON jobs(event_id)`,
	} {
		if mode == "job-bug" && strings.Contains(s, "jobs_event") {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			log.Fatal(err)
		}
	}
	if strings.HasPrefix(mode, "job") {
		go worker()
	}
	http.HandleFunc("/hook", hook)
	log.Fatal(http.ListenAndServe(*addr, nil))
}

type event struct{ provider, id, typ, obj string }

func mac(body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// parse verifies the request the way each provider's docs say and returns its event.
func parse(r *http.Request, body []byte) (event, int, string) {
	h := r.Header
	var js map[string]any
	_ = json.Unmarshal(body, &js)
	switch {
	case h.Get("Stripe-Signature") != "":
		var t, v1 string
		for _, p := range strings.Split(h.Get("Stripe-Signature"), ",") {
			k, v, _ := strings.Cut(p, "=")
			if k == "t" {
				t = v
			} else if k == "v1" && v1 == "" {
				v1 = v
			}
		}
		ts, _ := strconv.ParseInt(t, 10, 64)
		if d := time.Since(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
			return event{}, 400, "timestamp outside tolerance"
		}
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(t + "." + string(body)))
		want := hex.EncodeToString(m.Sum(nil))
		if !hmac.Equal([]byte(want), []byte(v1)) {
			return event{}, 400, "bad signature"
		}
		ev := event{provider: "stripe", id: str(js["id"]), typ: str(js["type"])}
		if d, ok := js["data"].(map[string]any); ok {
			if o, ok := d["object"].(map[string]any); ok {
				ev.obj = str(o["id"])
			}
		}
		return ev, 0, ""
	case h.Get("X-GitHub-Event") != "":
		sig := strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
		if !hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac(body)))) {
			return event{}, 401, "bad signature"
		}
		return event{provider: "github", id: h.Get("X-GitHub-Delivery"), typ: h.Get("X-GitHub-Event"), obj: h.Get("X-GitHub-Event")}, 0, ""
	case h.Get("X-Shopify-Topic") != "":
		if !hmac.Equal([]byte(h.Get("X-Shopify-Hmac-Sha256")), []byte(base64.StdEncoding.EncodeToString(mac(body)))) {
			return event{}, 401, "bad signature"
		}
		id := h.Get("X-Shopify-Event-Id")
		if id == "" {
			id = h.Get("X-Shopify-Webhook-Id")
		}
		return event{provider: "shopify", id: id, typ: h.Get("X-Shopify-Topic"), obj: str(js["id"])}, 0, ""
	case h.Get("X-Hub-Signature-256") != "": // WhatsApp Cloud API
		sig := strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")
		if !hmac.Equal([]byte(sig), []byte(hex.EncodeToString(mac(body)))) {
			return event{}, 401, "bad signature"
		}
		// one id per message/status: the first one names the delivery here
		var env struct {
			Entry []struct {
				Changes []struct {
					Value struct {
						Messages []struct{ ID string }         `json:"messages"`
						Statuses []struct{ ID, Status string } `json:"statuses"`
					} `json:"value"`
				} `json:"changes"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(body, &env)
		var ids []string
		typ := "messages"
		for _, e := range env.Entry {
			for _, c := range e.Changes {
				for _, m := range c.Value.Messages {
					ids = append(ids, m.ID)
				}
				for _, s := range c.Value.Statuses {
					ids = append(ids, s.ID+":"+s.Status)
					typ = "statuses"
				}
			}
		}
		return event{provider: "whatsapp", id: strings.Join(ids, ","), typ: typ, obj: typ}, 0, ""
	}
	return event{}, 400, "unknown provider"
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

var arrivals = map[string]int{}

// redelivery reports whether an event came before.
func redelivery(id string) bool {
	mu.Lock()
	defer mu.Unlock()
	arrivals[id]++
	return arrivals[id] > 1
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// once: the dedupe every correct variant uses: INSERT … ON CONFLICT DO NOTHING
// and the effect in the same transaction.
func once(ev event) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.Exec(`INSERT INTO processed(event_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING`, ev.id, now())
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // seen before
	}
	if _, err := tx.Exec(`INSERT INTO effects VALUES (?, ?, ?, ?, ?)`, ev.id, ev.provider, ev.typ, ev.obj, now()); err != nil {
		return err
	}
	return tx.Commit()
}

// racy: check, then do the work, then remember: two copies at once both pass the check.
func racy(ev event) error {
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM seen WHERE event_id = ?`, ev.id).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	time.Sleep(20 * time.Millisecond) // "call the payments API"
	if _, err := db.Exec(`INSERT INTO effects VALUES (?, ?, ?, ?, ?)`, ev.id, ev.provider, ev.typ, ev.obj, now()); err != nil {
		return err
	}
	_, err := db.Exec(`INSERT INTO seen VALUES (?, ?)`, ev.id, now())
	return err
}

func sendMail(ev event) {
	msg := "From: shop@example.com\r\nTo: customer@example.com\r\nSubject: Your receipt " + ev.typ + "\r\n\r\nThanks.\r\n"
	if err := smtp.SendMail(smtpAt, nil, "shop@example.com", []string{"customer@example.com"}, []byte(msg)); err != nil {
		log.Printf("mail: %v", err)
	}
}

func worker() {
	for {
		time.Sleep(time.Duration(100+rand.Intn(200)) * time.Millisecond)
		rows, err := db.Query(`SELECT id, event_id, provider, type, obj FROM jobs WHERE done = 0 ORDER BY id`)
		if err != nil {
			log.Print(err)
			continue
		}
		type job struct {
			id int64
			ev event
		}
		var js []job
		for rows.Next() {
			var j job
			rows.Scan(&j.id, &j.ev.id, &j.ev.provider, &j.ev.typ, &j.ev.obj)
			js = append(js, j)
		}
		rows.Close()
		for _, j := range js {
			db.Exec(`INSERT INTO effects VALUES (?, ?, ?, ?, ?)`, j.ev.id, j.ev.provider, j.ev.typ, j.ev.obj, now())
			db.Exec(`UPDATE jobs SET done = 1 WHERE id = ?`, j.id)
		}
	}
}

func hook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	ev, code, why := parse(r, body)
	if code != 0 {
		http.Error(w, why, code)
		return
	}
	var err error
	switch mode {
	case "correct":
		err = once(ev)
	case "racy":
		err = racy(ev)
	case "async-ok", "async-bug":
		w.WriteHeader(200)
		go func() {
			time.Sleep(time.Duration(50+rand.Intn(450)) * time.Millisecond)
			if mode == "async-ok" {
				err = once(ev)
			} else {
				err = racy(ev)
			}
			if err != nil {
				log.Print(err)
			}
		}()
		return
	case "job", "job-bug":
		_, err = db.Exec(`INSERT INTO jobs(event_id, provider, type, obj) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, ev.id, ev.provider, ev.typ, ev.obj)
	case "email", "email-bug":
		var fresh bool
		var res sql.Result
		res, err = db.Exec(`INSERT INTO processed(event_id, at) VALUES (?, ?) ON CONFLICT DO NOTHING`, ev.id, now())
		if err == nil {
			n, _ := res.RowsAffected()
			fresh = n == 1
		}
		if err == nil && (fresh || mode == "email-bug") {
			go func() { time.Sleep(300 * time.Millisecond); sendMail(ev) }()
		}
	case "credit-email", "credit-email-bug":
		// credit at once, the receipt 100-700 ms after answering, once per
		// event (the bug: a receipt for every copy, the duplicates' too)
		err = once(ev)
		mu.Lock()
		send := mode == "credit-email-bug" || !sentMail[ev.id]
		sentMail[ev.id] = true
		mu.Unlock()
		if err == nil && send {
			go func() { time.Sleep(time.Duration(100+rand.Intn(600)) * time.Millisecond); sendMail(ev) }()
		}
	case "redelivered":
		// correct's dedupe; an event's first redelivery marks its row, once
		if err = once(ev); err == nil && redelivery(ev.id) {
			_, err = db.Exec(`UPDATE processed SET redelivered = 1 WHERE event_id = ? AND redelivered = 0`, ev.id)
		}
	case "audit":
		if _, err = db.Exec(`INSERT INTO audit_log VALUES (?, ?, ?)`, ev.id, ev.provider, now()); err == nil {
			err = once(ev)
		}
	case "slow":
		time.Sleep(time.Duration(200+rand.Intn(600)) * time.Millisecond)
		err = once(ev)
	case "flaky":
		if rand.Intn(10) == 0 {
			http.Error(w, "upstream timeout", 500)
			return
		}
		err = once(ev)
	default:
		log.Fatalf("unknown mode %q", mode)
	}
	if err != nil {
		log.Print(err)
		http.Error(w, "internal error", 500)
		return
	}
	w.WriteHeader(200)
	io.WriteString(w, `{"received":true}`)
}
