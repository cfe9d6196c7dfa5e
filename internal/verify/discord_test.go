package verify

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"testing"
)

// TestDiscordKeyForms: the public key verifies and cannot sign (an error
// wrapping ErrPublicKeyOnly); the private key, as hex or PKCS#8 PEM, signs
// and verifies.
func TestDiscordKeyForms(t *testing.T) {
	priv := testSecrets["discord"]
	raw, _ := hex.DecodeString(priv)
	k := ed25519.PrivateKey(raw)
	pub := hex.EncodeToString(k.Public().(ed25519.PublicKey))
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	pubDER, _ := x509.MarshalPKIXPublicKey(k.Public())
	pemPub := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	s := Lookup("discord")
	for _, key := range []string{priv, pemKey} {
		if !CanSign(s, key) {
			t.Fatalf("CanSign(private %.20q) = false", key)
		}
		req := build(t, Fixture{Provider: "discord", Event: "APPLICATION_COMMAND"}, t0)
		signed, err := Sign(req, "discord", key, Options{Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{pub, pemPub, key} {
			if r, err := Verify(signed, "discord", v, Options{Now: t0}); err != nil || !r.Valid {
				t.Fatalf("verify with %.20q: %+v %v", v, r, err)
			}
		}
	}
	req := build(t, Fixture{Provider: "discord", Event: "APPLICATION_COMMAND"}, t0)
	for _, v := range []string{pub, pemPub} {
		if CanSign(s, v) {
			t.Errorf("CanSign(public %.20q) = true", v)
		}
		if _, err := Sign(req, "discord", v, Options{Now: t0}); !errors.Is(err, ErrPublicKeyOnly) {
			t.Errorf("sign with a public key: %v, want ErrPublicKeyOnly", err)
		}
	}
	if _, err := Verify(req, "discord", "abcd", Options{}); !errors.Is(err, ErrSecret) {
		t.Errorf("a 2-byte key: %v, want ErrSecret", err)
	}
	ping := req.Clone()
	ping.Body = []byte(`{"application_id":"1187645213845962874","id":"1249713398998478939","token":"t","type":1,"user":{"id":"80351110224678912"},"version":1}`)
	if h := Handshake(s, ping); h == "" {
		t.Error("a PING is not a handshake")
	}
	if h := Handshake(s, req); h != "" {
		t.Errorf("an application command is a handshake: %q", h)
	}
}
