//go:build interop

package interop

import (
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestMercadoPagoSDK: Mercado Pago's Node SDK (mercadopago) and hookreplay's
// mercadopago scheme. The SDK cannot sign. The forged copy changes the
// query's data.id (the body is not signed), and no hour-old copy is judged:
// neither side applies a tolerance unless given one (TestMercadoPagoSDKTolerance).
func TestMercadoPagoSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "mercadopago", script: "mercadopago",
		signKey: "8f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9c", verifyKey: "8f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9c", wrongKey: "0f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9d"})
}

// TestMercadoPagoSDKTolerance: given the same tolerance, the SDK and
// hookreplay both accept a copy signed a minute ago and refuse one signed
// an hour ago.
func TestMercadoPagoSDKTolerance(t *testing.T) {
	const key = "8f0e6c2a4b1d9e7f3a5c8b2d6e4f1a9c"
	now := time.Now()
	req, err := verify.BuildDelivery("mercadopago", "payment.updated", key, now)
	if err != nil {
		t.Fatal(err)
	}
	var ops []sdkOp
	want := []bool{true, false}
	for _, age := range []time.Duration{time.Minute, time.Hour} {
		c, err := verify.Sign(req, "mercadopago", key, verify.Options{Now: now.Add(-age)})
		if err != nil {
			t.Fatal(err)
		}
		op := verifyOp(c, key, "")
		op.Tolerance = 300
		ops = append(ops, op)
		r, err := verify.Verify(c, "mercadopago", key, verify.Options{Now: now, Tolerance: 300 * time.Second})
		if err != nil || r.Valid != (age == time.Minute) {
			t.Errorf("hookreplay, signed %s ago with a 300 s tolerance: %s %v", age, r.Describe(""), err)
		}
	}
	for i, res := range runCase(t, "mercadopago", ops) {
		if res.Accepted != want[i] {
			t.Errorf("the SDK, copy %d: accepted=%v (%s), want %v", i, res.Accepted, res.Error, want[i])
		}
	}
}
