package e2e

// One --secret for deliveries of several providers: the error says why a
// secret that is right for one of them fails another's signature, and what
// to do, instead of asking for the secret the user gave.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOneSecretForSeveralProvidersSaysSo(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "h.db")
	wa := checkInsertSample(t, db, "whatsapp", "messages", waSecret)
	mp := checkInsertSample(t, db, "mercadopago", "payment.updated", mpSecret)
	r := runBin(t, db, nil, "check", fmt.Sprint(wa), fmt.Sprint(mp), "--to", "http://127.0.0.1:1", "--secret", waSecret, "--probe-cmd", "echo 1", "-q")
	if r.Code != 2 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 ||
		!strings.Contains(r.Stderr, fmt.Sprintf("delivery %d's captured mercadopago signature does not verify with --secret", mp)) ||
		!strings.Contains(r.Stderr, "the selected deliveries are of 2 providers (mercadopago, whatsapp), each signing with a secret of its own") {
		t.Fatalf("want exit 2 and one line naming both providers, got %d %q", r.Code, r.Stderr)
	}
	// One provider's deliveries with the wrong secret: the words as before.
	r = runBin(t, db, nil, "check", fmt.Sprint(mp), "--to", "http://127.0.0.1:1", "--secret", waSecret, "--probe-cmd", "echo 1", "-q")
	if r.Code != 2 || !strings.Contains(r.Stderr, "give the secret the provider signs this endpoint's deliveries with") || strings.Contains(r.Stderr, "providers") {
		t.Fatalf("one provider: want exit 2 asking for its secret, got %d %q", r.Code, r.Stderr)
	}
}
