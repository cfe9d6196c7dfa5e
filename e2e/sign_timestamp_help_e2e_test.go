package e2e

// sign --help lists, for --timestamp, every scheme whose signature covers a
// signing time, not only those with a tolerance: Mercado Pago's ts and
// Bird's timestamp are signed (and --timestamp sets them) though neither
// provider sets a window.

import (
	"regexp"
	"strings"
	"testing"
)

func TestSignHelpNamesEverySchemeThatSignsATime(t *testing.T) {
	t.Parallel()
	h := runBin(t, "", nil, "sign", "--help")
	m := regexp.MustCompile(`(?s)--timestamp sets the signing time.*?schemes that sign one \(([^)]*)\)`).FindStringSubmatch(h.Stdout)
	if h.Code != 0 || m == nil {
		t.Fatalf("sign --help: %d %s", h.Code, h.Stdout)
	}
	listed := strings.Split(strings.ReplaceAll(m[1], "\n", " "), ", ")
	for _, p := range []string{"stripe", "mercadopago", "bird", "zoom"} {
		found := false
		for _, l := range listed {
			found = found || strings.TrimSpace(l) == p
		}
		if !found {
			t.Errorf("--timestamp's schemes %q should include %s", m[1], p)
		}
	}
	for _, p := range []string{"github", "whatsapp", "shopify"} {
		for _, l := range listed {
			if strings.TrimSpace(l) == p {
				t.Errorf("--timestamp's schemes %q should not include %s, which signs no time", m[1], p)
			}
		}
	}
	// And --timestamp is what they sign.
	body := []byte(`{"action":"payment.updated","data":{"id":"123"},"id":1}`)
	r := runBin(t, "", body, "sign", "--provider", "mercadopago", "--secret", "s", "--timestamp", "1700000000", "--url", "https://shop.example/mp?data.id=123&type=payment")
	if r.Code != 0 || !strings.Contains(r.Stdout, "x-signature: ts=1700000000,v1=") {
		t.Fatalf("sign mercadopago --timestamp: %d %s%s", r.Code, r.Stdout, r.Stderr)
	}
}
