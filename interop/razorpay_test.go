//go:build interop

package interop

import "testing"

// TestRazorpaySDK: Razorpay's Node SDK (razorpay) and hookreplay's razorpay
// scheme. The SDK cannot sign.
func TestRazorpaySDK(t *testing.T) {
	exchange(t, sdkCase{provider: "razorpay", script: "razorpay",
		signKey: "rzp-webhook-secret-2041", verifyKey: "rzp-webhook-secret-2041", wrongKey: "rzp-webhook-secret-other"})
}
