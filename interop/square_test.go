//go:build interop

package interop

import "testing"

// TestSquareSDK: Square's Node SDK (square) and hookreplay's square scheme,
// which signs the notification URL. The SDK cannot sign.
func TestSquareSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "square", script: "square", url: "https://shop.example.com/webhooks/square?env=prod",
		signKey: "Zx8Dk2mS1vQb7fJ0tY3nWg", verifyKey: "Zx8Dk2mS1vQb7fJ0tY3nWg", wrongKey: "Qn4Lr9pA6cXe2hV5uB8kTd"})
}
