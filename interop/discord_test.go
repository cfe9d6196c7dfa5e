//go:build interop

package interop

import "testing"

// Discord's keys: a test key pair's private key (seed and public key, hex)
// signs; its public key, as the Developer Portal shows one, verifies.
const (
	discordPrivate      = "4032fea2deb70c36ee1a85d0bee7d917bf15e5f3610b7e80a0932f975b15321263390c5bd70d3ca43c848918f1ff962206849e06fff691fe66843e707d978e19"
	discordPublic       = "63390c5bd70d3ca43c848918f1ff962206849e06fff691fe66843e707d978e19"
	discordOtherPrivate = "b0bcddd10159cf24fc28b853dc3d75e24ca839227e45a5dcf9976b32d3ed1f1d5f02878033ca984046c530d2f98e8c133ebb4216b22cb7547ce4909717af9088"
)

// TestDiscordSDK: discord-interactions' verifyKey and hookreplay's discord
// scheme (Ed25519). hookreplay signs with the private key and verifies with
// the public one; Node's Ed25519 signs for the library, which cannot.
func TestDiscordSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "discord", script: "discord", sdkSigns: true,
		signKey: discordPrivate, verifyKey: discordPublic, wrongKey: discordOtherPrivate})
}
