package verify

import (
	"testing"
	"time"
)

// BenchmarkVerify measures one verification of each provider's sample
// delivery (capture runs one per delivery when given --secret).
func BenchmarkVerify(b *testing.B) {
	for _, f := range Fixtures() {
		req, err := BuildDeliveryTo(f.Provider, f.Event, secretOf(f.Provider), testURL, t0)
		if err != nil {
			b.Fatal(err)
		}
		opt := Options{Now: t0, URL: testURL}
		b.Run(f.Provider+"/"+f.Event, func(b *testing.B) {
			for b.Loop() {
				if r, _ := Verify(req, f.Provider, secretOf(f.Provider), opt); !r.Valid {
					b.Fatal(r.Reason)
				}
			}
		})
	}
}

// BenchmarkReidentify measures a re-identified, re-signed copy (what replay
// and check make for every "new event" copy).
func BenchmarkReidentify(b *testing.B) {
	for _, p := range []string{"stripe", "github", "standard"} {
		ev := map[string]string{"stripe": "invoice.payment_succeeded", "github": "push", "standard": "invoice.paid"}[p]
		req, err := BuildDelivery(p, ev, secretOf(p), t0)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(p, func(b *testing.B) {
			for b.Loop() {
				if _, err := Reidentify(req, p, "", secretOf(p), t0.Add(time.Second), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSign measures signing each provider's sample delivery (replay
// and check re-sign every copy when given a secret).
func BenchmarkSign(b *testing.B) {
	for _, f := range Fixtures() {
		req, err := BuildDeliveryTo(f.Provider, f.Event, secretOf(f.Provider), testURL, t0)
		if err != nil {
			b.Fatal(err)
		}
		opt := Options{Now: t0, URL: testURL}
		b.Run(f.Provider+"/"+f.Event, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sign(req, f.Provider, secretOf(f.Provider), opt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
