// Package idemapi is a small messaging API that honours Idempotency-Key by
// the bird contract, for keycheck's tests: one correct implementation and
// one variant per common mistake (Mistake). Its side effect is real and
// probed over HTTP: GET /debug/count is the number of operations done.
//
// Routes: POST /v1/messages (JSON {"to","text","delay_ms","fail_once"}),
// GET /v1/messages, GET|PATCH|DELETE /v1/messages/{id}. Requests need
// "Authorization: AccessKey ACCOUNT". A body without "text" is refused
// with 400; "fail_once" answers 500 the first time its text is seen;
// "delay_ms" makes the operation take that long. While the file StoreDown
// names exists, the idempotency store is down.
package idemapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// Mistake is one common way to get Idempotency-Key wrong.
type Mistake string

// The mistakes, each caught by the keycheck check named for it.
const (
	Correct Mistake = ""
	// Race claims the key with a check, then an insert a moment later: a
	// sequential or 200 ms-overlap test never sees it; a tight burst does.
	Race Mistake = "race"
	// Store5xx keeps a 5xx and replays it.
	Store5xx Mistake = "5xx"
	// NoFingerprint replays the stored answer to any request with the key.
	NoFingerprint Mistake = "fingerprint"
	// NoInFlight records the key only when the operation is done.
	NoInFlight Mistake = "inflight"
	// NoReplayHeader does not mark replays.
	NoReplayHeader Mistake = "replayheader"
	// Unscoped keys are global, not per account.
	Unscoped Mistake = "scope"
	// Blocking holds a copy of a request in flight until the first is
	// done, then replays it: safe, but not the contract's 409 at once.
	Blocking Mistake = "blocking"
	// CutKeys accepts a key of any length and keeps its first 255
	// characters: two long keys that differ after that are one key.
	CutKeys Mistake = "cutkeys"
)

// Contract is what a correct API answers with; the zero value is the bird
// contract.
type Contract struct {
	ReuseStatus, KeyTooLongStatus int    // 409, 422
	MaxKeyLength                  int    // 255; -1: none
	ReplayHeader                  string // Idempotency-Replay; "-": none
	Keep5xx                       bool   // a 5xx is kept and replayed
	// ParsedJSON compares the parsed body, not its bytes (Stripe compares parameters).
	ParsedJSON bool
	// ProblemJSON sends errors as application/problem+json.
	ProblemJSON bool
	// UUIDKeysOnly accepts keys of 36 characters (a UUID's length) only and
	// refuses any other with a 500 in plain text, as Fiber's idempotency
	// middleware does with its default KeyHeaderValidate (its error goes
	// to the default error handler). MaxKeyLength is then not used.
	UUIDKeysOnly bool
	// KeyPerURL stores a key per method and URL, query included, as
	// @node-idempotency does: the same key on another URL is another key.
	KeyPerURL bool
	// DropErrors keeps no 4xx either: Fiber's middleware keeps nothing a
	// handler returned as an error (fiber.NewError), only what it wrote.
	DropErrors bool
}

// Fiber is what Fiber's middleware/idempotency (v2.52, v3.1) answers as its
// docs set it up, app.Use(idempotency.New()), with the API's KeyHeader set
// to X-Idempotency-Key and the Mistakes NoFingerprint, Unscoped and
// Blocking: keys of 36 characters only, no replay header, a 5xx the
// handler returned as an error (4xx or 5xx) not kept.
var Fiber = Contract{UUIDKeysOnly: true, ReplayHeader: "-", DropErrors: true}

// Stripe is Stripe's contract: reuse 400, keys up to 255 (400 over), a
// 500 kept, Idempotent-Replayed, parameters compared.
var Stripe = Contract{ReuseStatus: 400, KeyTooLongStatus: 400, ReplayHeader: "Idempotent-Replayed", Keep5xx: true, ParsedJSON: true}

// IETF is the draft's: reuse 422, no replay header, no maximum key length.
var IETF = Contract{ReuseStatus: 422, MaxKeyLength: -1, ReplayHeader: "-", ProblemJSON: true}

func (c Contract) withDefaults() Contract {
	if c.ReuseStatus == 0 {
		c.ReuseStatus = 409
	}
	if c.KeyTooLongStatus == 0 {
		c.KeyTooLongStatus = 422
	}
	if c.MaxKeyLength == 0 {
		c.MaxKeyLength = 255
	}
	if c.ReplayHeader == "" {
		c.ReplayHeader = "Idempotency-Replay"
	}
	return c
}

// Mistakes lists every mistake.
var Mistakes = []Mistake{Race, Store5xx, NoFingerprint, NoInFlight, NoReplayHeader, Unscoped}

type entry struct {
	fp     string
	at     time.Time // when it was done
	done   bool
	gone   bool // removed: the operation failed
	status int
	body   []byte
}

// API is the server's state.
type API struct {
	Mistake Mistake
	// StoreDown is a file whose existence means the idempotency store is down.
	StoreDown string
	// TTL, when set, is how long a completed key is kept.
	TTL time.Duration
	// Contract holds the codes and rules the API answers by (zero: bird).
	Contract Contract
	// KeyHeader is the header the key is read from ("" : Idempotency-Key).
	KeyHeader string
	// Mistakes adds more mistakes to Mistake (Fiber's middleware makes
	// three at once).
	Mistakes []Mistake

	mu       sync.Mutex
	keys     map[string]*entry
	ops      int
	next     int
	messages map[string]map[string]any
	seen     map[string]bool
}

// New returns an API with mistake m.
func New(m Mistake) *API {
	return &API{Mistake: m, keys: map[string]*entry{}, messages: map[string]map[string]any{}, seen: map[string]bool{}}
}

func writeJSON(w http.ResponseWriter, status int, v any) []byte {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
	return b
}

// ServeHTTP routes a request.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/debug/count" {
		a.mu.Lock()
		fmt.Fprint(w, a.ops)
		a.mu.Unlock()
		return
	}
	acct, ok := strings.CutPrefix(r.Header.Get("Authorization"), "AccessKey ")
	if !ok || acct == "" {
		writeJSON(w, 401, map[string]string{"error": "unauthorized"})
		return
	}
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet {
		a.get(w, r)
		return
	}
	kh := a.KeyHeader
	if kh == "" {
		kh = "Idempotency-Key"
	}
	key := r.Header.Get(kh)
	if key == "" {
		status, b := a.operate(r, body)
		writeJSON(w, status, json.RawMessage(b))
		return
	}
	a.idempotent(w, r, acct, key, body)
}

func (a *API) get(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id, ok := strings.CutPrefix(r.URL.Path, "/v1/messages/"); ok {
		m, ok := a.messages[id]
		if !ok {
			writeJSON(w, 404, map[string]string{"error": "not found"})
			return
		}
		writeJSON(w, 200, m)
		return
	}
	writeJSON(w, 200, map[string]int{"count": len(a.messages)})
}

// idempotent is the middleware: claim the key, run the operation, keep
// the answer (a 5xx is not kept), replay a completed one.
func (a *API) idempotent(w http.ResponseWriter, r *http.Request, acct, key string, body []byte) {
	c := a.Contract.withDefaults()
	switch {
	case c.UUIDKeysOnly && len(key) != 36:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(500)
		fmt.Fprintf(w, "invalid idempotency key: invalid length: %d != 36", len(key))
		return
	case a.has(CutKeys):
		key = key[:min(len(key), 255)]
	case !c.UUIDKeysOnly && c.MaxKeyLength > 0 && len(key) > c.MaxKeyLength:
		writeJSON(w, c.KeyTooLongStatus, map[string]string{"error": "Idempotency-Key too long"})
		return
	}
	if a.StoreDown != "" {
		if _, err := os.Stat(a.StoreDown); err == nil {
			writeJSON(w, 503, map[string]string{"error": "idempotency store unavailable"})
			return
		}
	}
	sk := acct + "\x00" + key
	if a.has(Unscoped) {
		sk = key
	}
	if c.KeyPerURL {
		sk += "\x00" + r.Method + " " + r.URL.RequestURI()
	}
	fpBody := body
	if c.ParsedJSON {
		var v any
		if json.Unmarshal(body, &v) == nil {
			fpBody, _ = json.Marshal(v)
		}
	}
	h := sha256.Sum256(append([]byte(r.Method+" "+r.URL.RequestURI()+"\n"), fpBody...))
	fp := string(h[:])
	claim := func() (*entry, bool) { // an existing entry, or claimed
		a.mu.Lock()
		defer a.mu.Unlock()
		if e, ok := a.keys[sk]; ok && !a.expired(e) {
			return e, false
		}
		if !a.has(NoInFlight) {
			a.keys[sk] = &entry{fp: fp}
		}
		return nil, true
	}
	if a.has(Race) {
		// Check, then insert after a database round trip: not atomic.
		a.mu.Lock()
		e, exists := a.keys[sk]
		a.mu.Unlock()
		if !exists {
			time.Sleep(2 * time.Millisecond)
			a.mu.Lock()
			a.keys[sk] = &entry{fp: fp}
			a.mu.Unlock()
		}
		if exists {
			a.existing(w, e, fp)
			return
		}
	} else if e, claimed := claim(); !claimed {
		a.existing(w, e, fp)
		return
	}
	status, b := a.operate(r, body)
	a.mu.Lock()
	e := a.keys[sk]
	if e == nil || e.fp != fp {
		e = &entry{fp: fp}
	}
	switch {
	case status >= 500 && !a.has(Store5xx) && !c.Keep5xx, status >= 400 && c.DropErrors:
		delete(a.keys, sk)
		e.gone = true
	default:
		e.done, e.status, e.body, e.at = true, status, b, time.Now()
		a.keys[sk] = e
	}
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// has reports whether the API makes mistake m.
func (a *API) has(m Mistake) bool {
	return a.Mistake == m || slices.Contains(a.Mistakes, m)
}

// expired reports whether completed entry e is older than the TTL.
func (a *API) expired(e *entry) bool {
	return a.TTL > 0 && e.done && time.Since(e.at) > a.TTL
}

func (a *API) existing(w http.ResponseWriter, e *entry, fp string) {
	c := a.Contract.withDefaults()
	a.mu.Lock()
	done, efp, status, body := e.done, e.fp, e.status, e.body
	a.mu.Unlock()
	for gone := false; a.has(Blocking) && !done && !gone && (efp == fp || a.has(NoFingerprint)); {
		time.Sleep(5 * time.Millisecond)
		a.mu.Lock()
		done, gone, status, body = e.done, e.gone, e.status, e.body
		a.mu.Unlock()
	}
	fail := func(status int, title string) {
		if c.ProblemJSON {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(status)
			json.NewEncoder(w).Encode(map[string]any{"type": "https://example.com/idempotency", "title": title, "status": status})
			return
		}
		writeJSON(w, status, map[string]string{"error": title})
	}
	switch {
	case efp != fp && !a.has(NoFingerprint):
		fail(c.ReuseStatus, "Idempotency-Key reused with another request")
	case !done:
		fail(409, "a request with this Idempotency-Key is in progress")
	default:
		if !a.has(NoReplayHeader) && c.ReplayHeader != "-" {
			w.Header().Set(c.ReplayHeader, "true")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}
}

// operate does the work of one mutating request: its status and body.
func (a *API) operate(r *http.Request, body []byte) (int, []byte) {
	if strings.HasPrefix(r.URL.Path, "/v1/messages/") {
		return a.operateOn(r, strings.TrimPrefix(r.URL.Path, "/v1/messages/"), body)
	}
	if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
		return 405, []byte(`{"error":"method not allowed"}`)
	}
	var in struct {
		To       string `json:"to"`
		Text     string `json:"text"`
		DelayMS  int    `json:"delay_ms"`
		FailOnce bool   `json:"fail_once"`
	}
	if json.Unmarshal(body, &in) != nil || in.Text == "" {
		return 400, []byte(`{"error":"text is required"}`)
	}
	if in.FailOnce {
		a.mu.Lock()
		first := !a.seen[in.Text]
		a.seen[in.Text] = true
		a.mu.Unlock()
		if first {
			return 500, []byte(`{"error":"temporary failure"}`)
		}
	}
	if in.DelayMS > 0 {
		time.Sleep(time.Duration(in.DelayMS) * time.Millisecond)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next++
	a.ops++
	id := fmt.Sprintf("msg_%d", a.next)
	m := map[string]any{"id": id, "to": in.To, "text": in.Text, "created": time.Now().UnixNano()}
	a.messages[id] = m
	b, _ := json.Marshal(m)
	return 201, b
}

func (a *API) operateOn(r *http.Request, id string, body []byte) (int, []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	m, ok := a.messages[id]
	if !ok {
		return 404, []byte(`{"error":"not found"}`)
	}
	switch r.Method {
	case http.MethodDelete:
		delete(a.messages, id)
		a.ops++
		return 200, []byte(fmt.Sprintf(`{"id":%q,"deleted":true}`, id))
	case http.MethodPatch:
		var in map[string]any
		if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &in) != nil {
			return 400, []byte(`{"error":"bad json"}`)
		}
		for k, v := range in {
			m[k] = v
		}
		m["updated"] = time.Now().UnixNano()
		a.ops++
		b, _ := json.Marshal(m)
		return 200, b
	}
	return 405, []byte(`{"error":"method not allowed"}`)
}
