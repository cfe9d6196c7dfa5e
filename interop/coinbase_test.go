//go:build interop

package interop

import "testing"

// TestCoinbaseSDK: Coinbase Commerce's Node library (coinbase-commerce-node)
// and hookreplay's coinbase scheme, both ways, including the event id and
// type the library reads.
func TestCoinbaseSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "coinbase", script: "coinbase", sdkSigns: true,
		signKey: "3f9e2a7c-1b4d-4e6f-8a0b-2c4d6e8f0a1b", verifyKey: "3f9e2a7c-1b4d-4e6f-8a0b-2c4d6e8f0a1b",
		wrongKey: "00000000-0000-0000-0000-000000000000"})
}
