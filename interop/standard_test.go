//go:build interop

package interop

import "testing"

// TestSvixSDK: Svix's own library (npm svix) and hookreplay's svix scheme.
func TestSvixSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "svix", script: "svix", sdkSigns: true,
		signKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", verifyKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		wrongKey: "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA=="})
}

// TestStandardWebhooksSDK: the Standard Webhooks reference library (npm
// standardwebhooks) and hookreplay's standard scheme.
func TestStandardWebhooksSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "standard", script: "standard", sdkSigns: true,
		signKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", verifyKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		wrongKey: "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA=="})
}
