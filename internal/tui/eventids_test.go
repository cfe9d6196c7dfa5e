package tui

import "testing"

// A delivery carrying several event ids (a WhatsApp POST batching
// messages) leads its EVENT ID cell with how many, so that cutting a long
// wamid to the column keeps the count, and its title says how many more.
func TestEventIDsCell(t *testing.T) {
	batch := map[string]string{"event_ids": "wamid.A wamid.B wamid.C"}
	for _, tc := range []struct {
		id       string
		identity map[string]string
		cell     string
		more     string
	}{
		{"wamid.A", batch, "3× wamid.A", " (+2)"},
		{"wamid.A", nil, "wamid.A", ""},
		{"", nil, "–", ""},
		{"evt_1", map[string]string{"shopify_webhook_id": "x"}, "evt_1", ""},
	} {
		if got := idsCell(tc.id, tc.identity); got != tc.cell {
			t.Errorf("idsCell(%q, %v) = %q, want %q", tc.id, tc.identity, got, tc.cell)
		}
		if got := idsMore(tc.id, tc.identity); got != tc.more {
			t.Errorf("idsMore(%q, %v) = %q, want %q", tc.id, tc.identity, got, tc.more)
		}
	}
}
