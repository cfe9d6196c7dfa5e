//go:build interop

package interop

import "testing"

// TestHubSpotSDK: HubSpot's Node client (@hubspot/api-client) and
// hookreplay's hubspot scheme, signature v3 over the configured URL, both
// ways.
func TestHubSpotSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "hubspot", script: "hubspot", sdkSigns: true, url: "https://crm.example.com/hooks/hubspot?portal=62515",
		signKey: "8d1c5e0a-3f2b-4c7d-9e6a-1b2c3d4e5f60", verifyKey: "8d1c5e0a-3f2b-4c7d-9e6a-1b2c3d4e5f60",
		wrongKey: "00000000-1111-2222-3333-444444444444"})
}
