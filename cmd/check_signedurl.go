package cmd

// --signed-url: the URL check signs its copies for, where the provider
// signs the URL it posts to (Bird, Twilio, Square, HubSpot). Bird's sample
// code verifies against the URL it is given, a fixed public one
// ('https://domain.com/webhook/bird'); Twilio's middleware is given one
// too. Such a handler is right, and refused every copy check signed for
// --to's URL (exit 2) with nothing the user could give to check it.

import (
	"net/url"
	"strings"

	"github.com/hookreplay/hookreplay/internal/address"
	"github.com/hookreplay/hookreplay/internal/check"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// signedURLUsage is --signed-url's help, naming the providers that sign
// the URL from verify's registry.
func signedURLUsage() string {
	return "the URL the provider was configured with, which it signs (" + providers(signsURL) +
		"), for a handler that verifies against it: copies are signed for this URL and still sent to --to (default: --to's)"
}

// checkSignedURL parses --signed-url; nil when it is not given.
func checkSignedURL(value string) (*url.URL, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	return handlerAddr("--signed-url", value)
}

// signedURLHint is the words added to a rejected copy's error when its
// provider signs the URL: the URL the copy was signed for, and the flag
// that signs for the one the handler verifies against.
func signedURLHint(e *check.RejectedError) string {
	if e.SignedURL == "" {
		return ""
	}
	return "; the copy was signed for " + address.Shown(e.SignedURL) + ": if the handler verifies against the URL " + verify.Lookup(e.Provider).Title() +
		" was configured with (a fixed public URL, as Bird's sample code passes one), give that URL with --signed-url: copies are then signed for it and still sent to --to"
}
