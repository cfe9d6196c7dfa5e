package e2e

// Discord interactions (issue 27 §3): an Ed25519 scheme. With the private
// key of the test key pair the handler is configured with, check re-signs
// and runs every phase; with the public key alone it verifies the captured
// signature, says in one line that it cannot sign, and runs only what needs
// no fresh signature, with no false verdict.

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/report"
)

const (
	discordPrivate = "4032fea2deb70c36ee1a85d0bee7d917bf15e5f3610b7e80a0932f975b15321263390c5bd70d3ca43c848918f1ff962206849e06fff691fe66843e707d978e19"
	discordPublic  = "63390c5bd70d3ca43c848918f1ff962206849e06fff691fe66843e707d978e19"
)

func TestCheckDiscordHandlerFromDocs(t *testing.T) {
	t.Parallel() // waits on processes and probes, not on CPU: see TestMain
	for _, tc := range []struct {
		mode, key string
		code      int
	}{{"correct", discordPrivate, 0}, {"naive", discordPrivate, 1}, {"correct", discordPublic, 0}, {"naive", discordPublic, 1}} {
		name := tc.mode + "/private"
		if tc.key == discordPublic {
			name = tc.mode + "/public"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base := startNode(t, "testdata/handlers/discord.js", "PUBLIC_KEY="+discordPublic, "MODE="+tc.mode)
			db := filepath.Join(t.TempDir(), "h.db")
			id := checkInsertSample(t, db, "discord", "APPLICATION_COMMAND", discordPrivate)
			r, c := checkRunJSON(t, db, "--to", base+"/interactions", "--probe-http", base+"/work", "--secret", tc.key,
				"--settle", "50ms", "-n", "3", "--burst", "5", "--phases", "first,dups,tamper,burst,lost", fmt.Sprint(id))
			if r.Code != tc.code || c == nil {
				t.Fatalf("want exit %d, got %d\n%s\n%s", tc.code, r.Code, r.Stdout, r.Stderr)
			}
			notes := strings.Join(c.Notes, "\n")
			if tc.key == discordPublic {
				if !strings.Contains(notes, "Discord interactions signs with a private key and the key given is a public key") {
					t.Fatalf("the run should say the public key cannot sign: %q", c.Notes)
				}
				for _, p := range []string{"burst", "lost"} {
					if got := checkPhase(t, c, p); got.Status != report.Skip {
						t.Fatalf("%s with a public key: %s, want skip: %s", p, got.Status, got.Message)
					}
				}
			} else {
				if strings.Contains(notes, "public key") {
					t.Fatalf("a private key should sign: %q", c.Notes)
				}
				if p := checkPhase(t, c, "tamper"); p.Status != report.Pass {
					t.Fatalf("tamper: %s %s", p.Status, p.Message)
				}
			}
			want := report.Pass
			if tc.mode == "naive" {
				want = report.Fail
			}
			if got := checkPhase(t, c, "dups"); got.Status != want {
				t.Fatalf("dups: %s, want %s: %s", got.Status, want, got.Message)
			}
		})
	}
}
