package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// acmeYAML declares a provider hookreplay has no built-in scheme for, the
// way its (made-up) docs describe it: Acme-Signature: t=<unix>,v1=<hex
// HMAC-SHA256 of "<t>.<body>">, the event id and type in the body.
const acmeYAML = `providers:
  acme:
    title: Acme Pay
    signature_header: Acme-Signature
    format: "t={timestamp},v1={signature}"
    signed: "{timestamp}.{body}"
    tolerance: 5m
    event_id: $.id
    event_type: $.type
    new_event_id: "evt_{random:20}"
    timeout: 15s
    retries: [1m, 10m, 1h, 1d]
    retry_source: https://acme.example/docs/webhooks#retries
`

const acmeSecret = "acme-signing-secret"

// acmeSign signs body as Acme does, independently of hookreplay.
func acmeSign(t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(acmeSecret))
	m.Write([]byte(ts + "." + string(body)))
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// acmeHandler verifies Acme's signature as its docs say (5 minutes of
// tolerance) and charges once per event id, or once per request when naive.
type acmeHandler struct {
	naive bool
	mu    sync.Mutex
	seen  map[string]bool
	work  int
}

func (h *acmeHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == "GET" {
		h.mu.Lock()
		fmt.Fprint(w, h.work)
		h.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	sig := r.Header.Get("Acme-Signature")
	ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
	n, err := strconv.ParseInt(ts, 10, 64)
	m := hmac.New(sha256.New, []byte(acmeSecret))
	m.Write([]byte(ts + "." + string(body)))
	if err != nil || !hmac.Equal([]byte(v1), []byte(hex.EncodeToString(m.Sum(nil)))) || time.Since(time.Unix(n, 0)).Abs() > 5*time.Minute {
		http.Error(w, "bad signature", 400)
		return
	}
	var ev struct{ ID string }
	json.Unmarshal(body, &ev)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.naive || !h.seen[ev.ID] {
		h.seen[ev.ID] = true
		h.work++
	}
	w.WriteHeader(200)
}

// A declared scheme works end to end: capture (declared with --declare)
// detects and verifies it, list shows its event id and type, verify checks
// it, and check re-signs and re-identifies its copies, passing a handler
// that dedupes on the event id and failing one that does not.
func TestDeclaredSchemeEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(acmeYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	addr := freeAddr(t)
	flow := strings.NewReplacer("\n    ", ", ", "providers:\n  acme:\n    ", "acme: {").Replace(strings.TrimSpace(acmeYAML)) + "}"
	p := startBin(t, db, "--declare", flow, "capture", "--listen", addr, "--secret", acmeSecret)
	waitListening(t, addr, p)
	body := []byte(`{"id":"evt_8sJ2kQ0aZ","type":"charge.succeeded","data":{"amount":4900}}`)
	req, _ := http.NewRequest("POST", "http://"+addr+"/webhooks/acme", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Acme-Signature", acmeSign(time.Now(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	p.stop(5 * time.Second)

	r := runBinIn(t, dir, "--db", db, "list", "--json", "id,provider,event_id,event_type,verification")
	var ds []map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &ds); err != nil || len(ds) != 1 {
		t.Fatalf("list: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	if d := ds[0]; d["provider"] != "acme" || d["event_id"] != "evt_8sJ2kQ0aZ" || d["event_type"] != "charge.succeeded" || !strings.HasPrefix(fmt.Sprint(d["verification"]), "valid (acme, sha256") {
		t.Fatalf("list shows %v", d)
	}
	if r := runBinIn(t, dir, "--db", db, "verify", "1", "--secret", acmeSecret); r.Code != 0 || !strings.Contains(r.Stdout, "valid (acme, sha256, signed") {
		t.Fatalf("verify: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runBinIn(t, dir, "--db", db, "verify", "1", "--secret", "another"); r.Code != 1 || !strings.Contains(r.Stderr, "invalid: signature mismatch") {
		t.Fatalf("verify, wrong secret: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}

	for _, tc := range []struct {
		naive bool
		code  int
	}{{false, 0}, {true, 1}} {
		h := &acmeHandler{naive: tc.naive, seen: map[string]bool{}}
		base := serveHandler(t, h)
		r := runBinIn(t, dir, "--db", db, "check", "--json", "--to", base+"/webhooks/acme", "--probe-http", base+"/work", "--secret", acmeSecret,
			"--settle", "50ms", "-n", "3", "--burst", "5", "--phases", "first,dups,burst,lost,tamper", "1")
		var c struct {
			Verdict    string
			Deliveries []struct {
				Phases []struct{ Phase, Status, Message string }
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &c); err != nil || r.Code != tc.code || len(c.Deliveries) != 1 {
			t.Fatalf("naive=%v: exit %d, want %d: %v\n%s\n%s", tc.naive, r.Code, tc.code, err, r.Stdout, r.Stderr)
		}
		for _, ph := range c.Deliveries[0].Phases {
			want := "pass"
			if tc.naive && (ph.Phase == "dups" || ph.Phase == "burst" || ph.Phase == "lost") {
				want = "fail"
			}
			if ph.Status != want {
				t.Errorf("naive=%v: %s %s, want %s: %s", tc.naive, ph.Phase, ph.Status, want, ph.Message)
			}
		}
		if len(c.Deliveries[0].Phases) != 5 {
			t.Errorf("naive=%v: phases %+v", tc.naive, c.Deliveries[0].Phases)
		}
		// Burst and lost ran on fresh events: the handler saw ids other than the captured one.
		h.mu.Lock()
		if len(h.seen) < 3 {
			t.Errorf("naive=%v: copies were not re-identified: ids %v", tc.naive, h.seen)
		}
		h.mu.Unlock()
	}
}

// hookreplay providers lists the built-ins and the declared schemes, with
// where each was declared; a mistake in a declaration is refused with its
// line by every command.
func TestProvidersCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(acmeYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runBinIn(t, dir, "providers")
	if r.Code != 0 || !regexpMatch(`(?m)^acme +Acme Pay +Acme-Signature +5m +body, signed +4, over 1d +hookreplay.yaml:2$`, r.Stdout) ||
		!regexpMatch(`(?m)^stripe +Stripe .* built in$`, r.Stdout) {
		t.Fatalf("providers: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runBinIn(t, dir, "providers", "--json", "--declare", `zed: {signature_header: X-Zed-Sig, format: "sha256={signature}", event_id: "header:X-Zed-Id"}`)
	var ps []struct {
		Name       string
		DeclaredAt string `json:"declared_at"`
		Identity   string
		Signed     string
	}
	if err := json.Unmarshal([]byte(r.Stdout), &ps); err != nil {
		t.Fatalf("providers --json: %v\n%s%s", err, r.Stdout, r.Stderr)
	}
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = p.DeclaredAt + " " + p.Identity + " " + p.Signed
	}
	if got["acme"] != "hookreplay.yaml:2 body {timestamp}.{body}" || got["zed"] != "--declare header {body}" || got["stripe"] != " body " {
		t.Fatalf("providers --json: %v", got)
	}
	broken := strings.Replace(acmeYAML, "{timestamp}.{body}", "{timestamp}.{bdy}", 1)
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"providers"}, {"list"}} {
		r = runBinIn(t, dir, args...)
		if r.Code != 2 || !strings.HasPrefix(r.Stderr, "hookreplay: hookreplay.yaml:6: provider acme: signed: placeholder {bdy}: unknown placeholder") {
			t.Fatalf("%v with a broken declaration: exit %d\n%s", args, r.Code, r.Stderr)
		}
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// send signs a body of the user's own as a declared provider: a fresh
// event id (the handler's own check of the signature passes), or the body's
// with --keep-id; without --body it says there are no samples.
func TestSendDeclared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(acmeYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ev.json"), []byte(`{"id":"evt_mine","type":"charge.succeeded"}`), 0o600)
	h := &acmeHandler{seen: map[string]bool{}}
	base := serveHandler(t, h)
	for _, keep := range []bool{false, true} {
		args := []string{"send", "--provider", "acme", "--body", "ev.json", "--secret", acmeSecret, "--to", base + "/webhooks/acme", "--json"}
		if keep {
			args = append(args, "--keep-id")
		}
		r := runBinIn(t, dir, args...)
		var j struct {
			EventID string `json:"event_id"`
			Event   string
			Status  int
		}
		if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil || r.Code != 0 || j.Status != 200 || j.Event != "charge.succeeded" ||
			(j.EventID == "evt_mine") != keep || !strings.HasPrefix(j.EventID, "evt_") {
			t.Fatalf("send (keep-id %v): exit %d %+v %v\n%s%s", keep, r.Code, j, err, r.Stdout, r.Stderr)
		}
	}
	if h.work != 2 {
		t.Fatalf("the handler worked %d events, want 2", h.work)
	}
	if r := runBinIn(t, dir, "send", "--provider", "acme", "--secret", "s", "--to", base); r.Code != 2 || !strings.Contains(r.Stderr, "--provider acme is declared and has no sample events: give the body to send with --body FILE") {
		t.Fatalf("send without a body: exit %d %s", r.Code, r.Stderr)
	}
}

// The TUI sees a declared provider: its list names the provider and event
// type, and its signature tab verifies with tui --secret.
func TestTUIShowsDeclaredProvider(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hookreplay.yaml"), []byte(acmeYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	body := `{"id":"evt_tui_acme","type":"refund.created"}`
	raw := fmt.Sprintf("POST /webhooks/acme HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nAcme-Signature: %s\r\nContent-Length: %d\r\n\r\n%s",
		acmeSign(time.Now(), []byte(body)), len(body), body)
	if err := os.WriteFile(filepath.Join(dir, "acme.http"), []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	if r := runBinIn(t, dir, "--db", db, "import", "acme.http"); r.Code != 0 {
		t.Fatalf("import: exit %d %s", r.Code, r.Stderr)
	}
	tm := tuiTmux(t, fmt.Sprintf("cd %s && NO_COLOR=1 %s --db %s tui --secret %s; echo \"tui exited $?\"; sleep 600", dir, binPath, db, acmeSecret))
	tm.waitFor("acme", "refund.created")
	tm.keys("Enter")
	tm.waitFor("[1 headers]")
	tm.keys("5")
	tm.waitFor("with tui --secret", "valid (acme, sha256", "evt_tui_acme")
	tm.keys("Escape")
	tm.waitFor("1/1 deliveries")
	tm.keys("q")
	tm.waitFor("tui exited 0")
}

// check --config FILE reads the declarations of that file (not of the
// working directory), and its check selects the declared provider's
// deliveries by name: the CI path.
func TestCheckConfigWithDeclaredProvider(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	db := filepath.Join(dir, "h.db")
	body := `{"id":"evt_ci_1","type":"charge.succeeded"}`
	raw := fmt.Sprintf("POST /webhooks/acme HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nAcme-Signature: %s\r\nContent-Length: %d\r\n\r\n%s",
		acmeSign(time.Now(), []byte(body)), len(body), body)
	os.WriteFile(filepath.Join(dir, "acme.http"), []byte(raw), 0o600)
	if r := runBinIn(t, dir, "--db", db, "--declare", "acme: {signature_header: Acme-Signature, format: \"t={timestamp},v1={signature}\", signed: \"{timestamp}.{body}\", event_id: $.id, event_type: $.type}", "import", "acme.http"); r.Code != 0 {
		t.Fatalf("import: exit %d %s", r.Code, r.Stderr)
	}
	for _, tc := range []struct {
		naive bool
		code  int
	}{{false, 0}, {true, 1}} {
		h := &acmeHandler{naive: tc.naive, seen: map[string]bool{}}
		base := serveHandler(t, h)
		cfg := filepath.Join(dir, fmt.Sprintf("ci-%v.yaml", tc.naive))
		yaml := acmeYAML + fmt.Sprintf(`checks:
  acme:
    deliveries: {last: true, provider: acme}
    to: %s/webhooks/acme
    probes:
      charges: {http: "%s/work"}
    phases: [first, dups, burst]
    secret_env: ACME_SECRET
    copies: 3
    burst: 4
    settle: 50ms
`, base, base)
		os.WriteFile(cfg, []byte(yaml), 0o600)
		c := exec.Command(binPath, "--db", db, "check", "--config", cfg)
		c.Dir = elsewhere // no hookreplay.yaml here: the declarations come from --config
		c.Env = binEnv("ACME_SECRET=" + acmeSecret)
		out, _ := c.CombinedOutput()
		if got := c.ProcessState.ExitCode(); got != tc.code || !strings.Contains(string(out), "charge.succeeded") {
			t.Fatalf("naive=%v: exit %d, want %d\n%s", tc.naive, got, tc.code, out)
		}
	}
}
