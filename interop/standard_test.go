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

// TestResendSDK: Resend's Node SDK (resend) and hookreplay's resend scheme,
// Svix's signature under Resend's name.
func TestResendSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "resend", script: "resend",
		signKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", verifyKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		wrongKey: "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA=="})
}

// TestClerkSDK: Clerk's backend SDK (@clerk/backend) and hookreplay's clerk
// scheme, Svix's signature under Clerk's name.
func TestClerkSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "clerk", script: "clerk",
		signKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", verifyKey: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		wrongKey: "whsec_dGhpcyBpcyBub3QgdGhlIHNlY3JldA=="})
}
