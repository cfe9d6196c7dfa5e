package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestVerifyE2ESaysWhyASignatureDoesNotMatch: a stored delivery verified with
// another secret names the usual causes; one whose body a forwarder
// compacted after Stripe signed it is named as re-encoded, as --json's why
// says too; and check takes that delivery's secret as the right one (its
// copies are signed over the bytes sent) instead of a setup error.
func TestVerifyE2ESaysWhyASignatureDoesNotMatch(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	req, err := verify.BuildDelivery("stripe", "invoice.payment_succeeded", checkSecret, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	signed := fmt.Sprint(checkInsert(t, db, req))
	var compact bytes.Buffer
	if err := json.Compact(&compact, req.Body); err != nil {
		t.Fatal(err)
	}
	req = req.Clone()
	req.Body = compact.Bytes()
	req.Headers = req.Headers.Set("Content-Length", strconv.Itoa(len(req.Body)))
	reencoded := fmt.Sprint(checkInsert(t, db, req))

	r := runBin(t, db, nil, "verify", signed, "--secret", "whsec_another")
	if r.Code != 1 || !strings.Contains(r.Stderr, "invalid: signature mismatch: it was signed with another secret (check that --secret is this endpoint's") ||
		!strings.Contains(r.Stderr, "or the body was re-encoded after it was signed") || !strings.Contains(r.Stderr, "or a proxy rewrote the request") {
		t.Errorf("another secret: %+v", r)
	}
	env := []string{"E2E_WHY_SECRET=" + checkSecret}
	r = runBinEnv(t, env, db, nil, "verify", reencoded, "--secret-env", "E2E_WHY_SECRET")
	if r.Code != 1 || !strings.Contains(r.Stderr, "the body was re-encoded after it was signed: it verifies once that is undone (it was signed pretty-printed") {
		t.Errorf("re-encoded body: %+v", r)
	}
	r = runBinEnv(t, env, db, nil, "verify", reencoded, "--secret", checkSecret, "--json", "valid,reason,why")
	var j struct {
		Valid  bool   `json:"valid"`
		Reason string `json:"reason"`
		Why    string `json:"why"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &j); err != nil || r.Code != 1 || j.Valid || j.Reason != "signature mismatch" || !strings.Contains(j.Why, "re-encoded") {
		t.Errorf("--json: %v %+v", err, r)
	}
	// check: the captured signature verifies once re-indented, so the
	// secret is the provider's: not "it is not the secret the delivery was
	// signed with" (a setup error that was a false one).
	r = runBinEnv(t, env, db, nil, "check", reencoded, "--to", "http://127.0.0.1:1/webhooks/stripe", "--secret", checkSecret, "--probe-cmd", "echo 1", "--phases", "first", "-q")
	if strings.Contains(r.Stderr, "signature does not verify") {
		t.Errorf("check refused the right secret for a re-encoded capture: %+v", r)
	}
}
