//go:build interop

package interop

import "testing"

// TestLinearSDK: Linear's SDK (@linear/sdk's LinearWebhookClient) and
// hookreplay's linear scheme, whose signature covers the body's own
// timestamp. The SDK cannot sign.
func TestLinearSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "linear", script: "linear",
		signKey: "lin_wh_4f1c9a7b2d8e6f0a3c5b7d9e1f2a4c6e", verifyKey: "lin_wh_4f1c9a7b2d8e6f0a3c5b7d9e1f2a4c6e",
		wrongKey: "lin_wh_0000000000000000000000000000000"})
}
