package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/iostreams"
	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/verify"
)

// TestVerifyToleranceZeroIsRefused: --tolerance 0s silently meant "the
// provider's default" (300 s), so a user asking for the strictest check got
// the loosest one and a 4-minute-old signature passed. It is a usage error
// now, with a hint.
func TestVerifyToleranceZeroIsRefused(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := newVerifyCmd(newFactory(ios), func(*verifyOptions) error { return nil })
	cmd.SetArgs([]string{"1", "--secret", "k", "--tolerance", "0s"})
	code, msg := exitCode(cmd.Execute())
	if code != 2 || !strings.Contains(msg, "--tolerance") {
		t.Fatalf("exit %d %q, want 2 naming --tolerance", code, msg)
	}
}

// TestVerifySecretWhitespaceHint: a mismatch with a secret that has a
// trailing newline (read from a file or .env) says so, instead of a bare
// "signature mismatch" the user cannot explain.
func TestVerifySecretWhitespaceHint(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("..", "internal", "verify", "testdata", "twilio_json_body.json"))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := verify.Sign(&message.Request{Method: "POST", Target: "/", Body: body}, "github", "s3cr3t", verify.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ios, in, _, _ := iostreams.Test()
	in.Write(body)
	cmd := newVerifyCmd(newFactory(ios), nil)
	cmd.SetArgs([]string{"--provider", "github", "--secret", "s3cr3t\n", "--header", "X-Hub-Signature-256: " + signed.Headers.Get("X-Hub-Signature-256")})
	code, msg := exitCode(cmd.Execute())
	if code != 1 || !strings.Contains(msg, "whitespace") {
		t.Fatalf("exit %d %q, want 1 and a whitespace hint", code, msg)
	}
}
