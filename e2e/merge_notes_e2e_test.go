package e2e

// report merge says each shard's note once: a note several shards make
// alike is one line naming them, and an empty shard's note, which names its
// shard already, is not prefixed with it again ("shard 5/5: shard 5/5: none
// of the 4 selected deliveries falls to this part", seen).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/report"
)

func TestReportMergeSaysEachNoteOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	selectFill(t, db)
	// Meta's verification request: --one-per-type leaves it out, and every
	// shard's report says so.
	checkInsert(t, db, &message.Request{Method: "GET", Target: "/hook?hub.mode=subscribe&hub.challenge=1158201444&hub.verify_token=t",
		Proto: "HTTP/1.1", Headers: message.Headers{{Name: "Host", Value: "example.com"}}})
	url := selectHandler(t)
	var files []string
	for k := 1; k <= 5; k++ {
		p := filepath.Join(dir, fmt.Sprintf("s%d.json", k))
		// The handler verifies no signature, so tamper fails (exit 1); its
		// note on schemes without a timestamp is made by several shards.
		if r := selectCheck(t, db, url, p, "--shard", fmt.Sprintf("%d/5", k), "--phases", "first,tamper"); r.Code != 0 && r.Code != 1 {
			t.Fatalf("--shard %d/5: exit %d %s", k, r.Code, r.Stderr)
		}
		files = append(files, p)
	}
	r := runBin(t, "", nil, append([]string{"report", "merge", "--json"}, files...)...)
	var m report.Check
	if (r.Code != 0 && r.Code != 1) || json.Unmarshal([]byte(r.Stdout), &m) != nil {
		t.Fatalf("report merge: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	prefix := regexp.MustCompile(`^shards? (\d+/5)(, \d+/5)*: `)
	seen := map[string]string{}
	for _, n := range m.Notes {
		if strings.HasPrefix(n, "shard 5/5: shard 5/5") {
			t.Errorf("the empty shard's note is prefixed twice: %q", n)
		}
		text := prefix.ReplaceAllString(n, "")
		if other, dup := seen[text]; dup {
			t.Errorf("one note twice: %q and %q", other, n)
		}
		seen[text] = n
	}
	if _, ok := seen["none of the 4 selected deliveries falls to this part"]; !ok {
		t.Errorf("the empty shard's note is missing: %q", m.Notes)
	}
	if n := strings.Join(m.Notes, "\n"); !strings.Contains(n, "shards 1/5, 2/5, 3/5, 4/5: --one-per-type left out delivery") {
		t.Errorf("the four shards' note on the handshake should be one line naming them: %q", m.Notes)
	}
}
