package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// KeyPair is a Scheme whose signature is asymmetric (Discord's Ed25519,
// SendGrid's ECDSA P-256): Verify takes the provider's public key as the
// secret, Sign needs a private key, and a private key verifies too. With a
// public key alone hookreplay can verify but not sign, so nothing it sends
// carries a fresh signature: the user who wants re-signed copies
// configures the handler with the public key of a test key pair and gives
// hookreplay its private key.
type KeyPair interface {
	// CanSign reports whether secret is a private key the scheme signs with.
	CanSign(secret string) bool
}

// ErrPublicKeyOnly is wrapped by Sign's error when the key given to a
// KeyPair scheme is a public key: it verifies, and cannot sign.
var ErrPublicKeyOnly = errors.New("a public key verifies but cannot sign")

// CanSign reports whether secret lets s sign: any secret for an HMAC
// scheme, a private key for a KeyPair one.
func CanSign(s Scheme, secret string) bool {
	if secret == "" {
		return false
	}
	if kp, ok := s.(KeyPair); ok {
		return kp.CanSign(secret)
	}
	return true
}

// publicKeyOnly is the error of signing with a public key.
func publicKeyOnly(title string) error {
	return fmt.Errorf("%w: %s signs with a private key, which only %s holds; to send re-signed copies, configure the handler with the public key of a test key pair and give hookreplay its private key", ErrPublicKeyOnly, title, title)
}

// parseKey reads a key as PEM (PKCS#8 "PRIVATE KEY", SEC 1 "EC PRIVATE
// KEY", PKIX "PUBLIC KEY") or as base64 of the same DER, the way SendGrid
// shows its public key. It returns a crypto.Signer for a private key, else
// the public key.
func parseKey(secret string) (priv crypto.Signer, pub crypto.PublicKey, err error) {
	s := strings.TrimSpace(secret)
	var der []byte
	if b, _ := pem.Decode([]byte(s)); b != nil {
		der = b.Bytes
	} else if d, ok := decodeBase64(strings.Join(strings.Fields(s), "")); ok {
		der = d
	} else {
		return nil, nil, fmt.Errorf("%w: not a PEM or base64 DER key", ErrSecret)
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if sg, ok := k.(crypto.Signer); ok {
			return sg, sg.Public(), nil
		}
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, &k.PublicKey, nil
	}
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		return nil, k, nil
	}
	return nil, nil, fmt.Errorf("%w: not a PKCS#8, SEC 1 or PKIX key", ErrSecret)
}

// ed25519Key reads an Ed25519 key: 64 hex digits are a public key (as
// Discord's Developer Portal shows it), 128 hex digits a private key (seed
// and public key, as tweetnacl and Go write it), or PEM/base64 DER.
func ed25519Key(secret string) (ed25519.PrivateKey, ed25519.PublicKey, error) {
	s := strings.TrimSpace(secret)
	if b, err := hex.DecodeString(s); err == nil {
		switch len(b) {
		case ed25519.PublicKeySize:
			return nil, ed25519.PublicKey(b), nil
		case ed25519.PrivateKeySize:
			k := ed25519.NewKeyFromSeed(b[:ed25519.SeedSize])
			if !k.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(b[ed25519.SeedSize:])) {
				return nil, nil, fmt.Errorf("%w: the private key's second half is not its public key", ErrSecret)
			}
			return k, k.Public().(ed25519.PublicKey), nil
		}
		return nil, nil, fmt.Errorf("%w: %d hex bytes is neither an Ed25519 public key (32) nor a private key (64)", ErrSecret, len(b))
	}
	priv, pub, err := parseKey(s)
	p, ok := pub.(ed25519.PublicKey)
	if err != nil || !ok {
		return nil, nil, fmt.Errorf("%w: not an Ed25519 key: give the application's public key (64 hex digits, as the Developer Portal shows it), which verifies, or the private key of a test key pair (a PKCS#8 PEM, or 128 hex digits), which signs too", ErrSecret)
	}
	if priv == nil {
		return nil, p, nil
	}
	return priv.(ed25519.PrivateKey), p, nil
}

// ecdsaKey reads an ECDSA P-256 key as parseKey does.
func ecdsaKey(secret string) (*ecdsa.PrivateKey, *ecdsa.PublicKey, error) {
	priv, pub, err := parseKey(secret)
	p, ok := pub.(*ecdsa.PublicKey)
	if err != nil || !ok || p.Curve.Params().Name != "P-256" {
		return nil, nil, fmt.Errorf("%w: not an ECDSA P-256 key: give the public key Mail Settings shows (base64 DER), which verifies, or the private key of a test key pair (a PKCS#8 or SEC 1 PEM), which signs too", ErrSecret)
	}
	if priv == nil {
		return nil, p, nil
	}
	return priv.(*ecdsa.PrivateKey), p, nil
}
