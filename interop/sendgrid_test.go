//go:build interop

package interop

import "testing"

// SendGrid's keys: a test key pair's private key (PKCS#8 PEM) signs; its
// public key, base64 DER as Mail Settings shows one, verifies.
const (
	sendgridPrivate = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg03mMHp33THN1+L14\neFG+9tvRKtSB6zelPP0aRJfBumGhRANCAATDw/Jw4XmX1oXo9U0WCVi0tm8XXvW7\nTZ8Kg0VQu1u12bZaJbgQedUI82LUNphHo0gWu6RZPGUC4vzAVphJw3zc\n-----END PRIVATE KEY-----\n"
	sendgridPublic  = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEw8PycOF5l9aF6PVNFglYtLZvF171u02fCoNFULtbtdm2WiW4EHnVCPNi1DaYR6NIFrukWTxlAuL8wFaYScN83A=="
	sendgridOther   = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgqcoaFu632WSmJynn\nDiSyZevT0t8bxzrywv3VhkV9EW6hRANCAASkWrmrM3X6WI1RXk0UBoe3+/LMlaeh\nJvf6m9SKHJfxdkEDusK6QhYEYMuQX3kAcTXJjlX+HqI4XucS+OYG9fY+\n-----END PRIVATE KEY-----\n"
)

// TestSendGridSDK: @sendgrid/eventwebhook's verifySignature and hookreplay's
// sendgrid scheme (ECDSA P-256), both ways; Node's ECDSA signs for the
// library, which cannot.
func TestSendGridSDK(t *testing.T) {
	exchange(t, sdkCase{provider: "sendgrid", script: "sendgrid", sdkSigns: true,
		signKey: sendgridPrivate, verifyKey: sendgridPublic, wrongKey: sendgridOther})
}
