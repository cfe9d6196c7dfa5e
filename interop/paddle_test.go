//go:build interop

package interop

import "testing"

// TestPaddleSDK: Paddle's Node SDK (@paddle/paddle-node-sdk) and
// hookreplay's paddle scheme. The SDK cannot sign; Paddle's own test
// vectors (testdata/providers/vectors/paddle-*.json) stand for its side.
func TestPaddleSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "paddle", script: "paddle",
		signKey: "pdl_ntfset_01hv8wz9ymdx3e4t7fb4r0mbxh_5jTQfgW3nkVvHbCfe8Vmk1+2i2wN9zWa", verifyKey: "pdl_ntfset_01hv8wz9ymdx3e4t7fb4r0mbxh_5jTQfgW3nkVvHbCfe8Vmk1+2i2wN9zWa",
		wrongKey: "pdl_ntfset_01hv8wz9ymdx3e4t7fb4r0mbxh_wrongwrongwrongwrongwrong"})
}
