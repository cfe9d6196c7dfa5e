package wallet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// signatureTolerance is how old a signed timestamp may be, as Stripe's
// libraries allow: an older signature is a replay.
const signatureTolerance = 300 * time.Second

// verifyStripe checks a Stripe-Signature header ("t=<unix>,v1=<hex>[,v1=…]")
// the way Stripe documents it: HMAC-SHA256 keyed with the whole endpoint
// secret over "<t>.<raw body>", compared in constant time with every v1
// signature (there are two while a secret is being rolled).
func verifyStripe(body []byte, header, secret string, now time.Time) error {
	if header == "" {
		return errors.New("missing Stripe-Signature header")
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			if sig, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, sig)
			}
		}
	}
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("no timestamp in Stripe-Signature")
	}
	if len(sigs) == 0 {
		return errors.New("no v1 signature in Stripe-Signature")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts))
	mac.Write([]byte("."))
	mac.Write(body)
	want := mac.Sum(nil)
	match := false
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			match = true
		}
	}
	if !match {
		return errors.New("signature mismatch")
	}
	if age := now.Sub(time.Unix(t, 0)); age > signatureTolerance {
		return fmt.Errorf("timestamp %ds old, over the %ds tolerance", int(age.Seconds()), int(signatureTolerance.Seconds()))
	}
	return nil
}
