package replay

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// TestRunSetHeaderHostIsSent: --set-header 'Host: …' names a virtual host;
// the copy is sent to the target's address with that Host header (it was
// silently replaced by the target's host). Without it, the target's host.
func TestRunSetHeaderHostIsSent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits Edits
		host  func(*recServer) string
	}{
		{"set-header Host", Edits{SetHeaders: []message.Header{{Name: "host", Value: "shop.example.test"}}},
			func(*recServer) string { return "shop.example.test" }},
		{"no edit", Edits{}, func(s *recServer) string { return s.URL.Host }},
		{"other edit", Edits{SetHeaders: []message.Header{{Name: "X-New", Value: "1"}}}, func(s *recServer) string { return s.URL.Host }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startRecServer(t, nil)
			d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
			res, err := Run(context.Background(), Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(5 * time.Second),
				Copies: 2, Order: OrderBurst, Edits: tc.edits}, nil)
			if err != nil {
				t.Fatal(err)
			}
			hits := srv.arrivals()
			if len(hits) != 2 || res.Attempts[0].Status != 200 {
				t.Fatalf("%d arrivals, attempts %+v", len(hits), res.Attempts)
			}
			for _, h := range hits {
				if hs := h.Req.Headers.Values("Host"); len(hs) != 1 || hs[0] != tc.host(srv) {
					t.Fatalf("Host %q, want %q:\n%s", hs, tc.host(srv), h.Raw)
				}
				if i := indexOf(h.Req.Headers, "Host"); i != indexOf(d.Headers, "Host") {
					t.Fatalf("Host moved from %d to %d", indexOf(d.Headers, "Host"), i)
				}
			}
		})
	}
}

func indexOf(hs message.Headers, name string) int {
	return slices.IndexFunc(hs, func(h message.Header) bool { return strings.EqualFold(h.Name, name) })
}

// TestPrepareHostEditKeepsSignatureQuiet: changing only Host does not break a
// Stripe signature, so no "no longer matches" warning; another edit does.
func TestPrepareHostEditKeepsSignatureQuiet(t *testing.T) {
	d := fixtureDelivery(t, 1, "stripe_invoice_paid.http")
	srv := startRecServer(t, nil)
	for _, tc := range []struct {
		h    message.Header
		warn bool
	}{
		{message.Header{Name: "Host", Value: "shop.example.test"}, false},
		{message.Header{Name: "X-New", Value: "1"}, true},
	} {
		j, err := Prepare(Plan{Deliveries: []*store.Delivery{d}, Target: srv.target(time.Second),
			Edits: Edits{SetHeaders: []message.Header{tc.h}}})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(strings.Join(j.Warnings, "\n"), "no longer matches")
		if got != tc.warn {
			t.Errorf("set-header %s: stale-signature warning %v, want %v (%q)", tc.h.Name, got, tc.warn, j.Warnings)
		}
	}
}
