//go:build docscreens

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookreplay/hookreplay/examples/wallet"
	"github.com/hookreplay/hookreplay/internal/demo/idemapi"
)

// TestReportScreens regenerates the pictures of the HTML report in
// docs/reports.md from real runs: a burst race and a lost answer (the
// racy wallet), a crash that loses the work (claimfirst under --serve) and
// a keycheck burst race, each page opened in headless Chromium at 1100
// pixels wide with its text report folded. Run it with
//
//	go test -tags docscreens ./e2e -run TestReportScreens
func TestReportScreens(t *testing.T) {
	bin := chromium(t)
	shot := func(name, page string) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		folded := strings.Replace(string(raw), `<details class="text" open>`, `<details class="text">`, 1)
		tmp := filepath.Join(t.TempDir(), name+".html")
		if err := os.WriteFile(tmp, []byte(folded), 0o644); err != nil {
			t.Fatal(err)
		}
		chromiumScreenshot(t, bin, tmp, filepath.Join("docs", "img", name+".png"), 1100)
	}
	if err := os.MkdirAll(filepath.Join("docs", "img"), 0o755); err != nil {
		t.Fatal(err)
	}

	db := filepath.Join(t.TempDir(), "h.db")
	id := checkStripeDelivery(t, db)
	url, dsn := checkWallet(t, wallet.Racy)
	page := filepath.Join(t.TempDir(), "burst.html")
	runBin(t, db, nil, append([]string{"check", fmt.Sprint(id), "-q", "--report", "html=" + page}, checkArgs(url, dsn, "--phases", "first,dups,burst,lost")...)...)
	shot("report-burst", page)

	addr := freeAddr(t)
	walletDB := filepath.Join(t.TempDir(), "wallet.db")
	serve := fmt.Sprintf("exec %s demo serve %s --listen %s --db %s --secret %s --quiet", binPath, wallet.ClaimFirst, addr, walletDB, checkSecret)
	page = filepath.Join(t.TempDir(), "crash.html")
	runBin(t, db, nil, "check", fmt.Sprint(id), "-q", "--report", "html="+page, "--to", "http://"+addr+"/webhooks/stripe", "--probe-sql", "balance="+checkBalanceSQL,
		"--dsn", "sqlite:"+walletDB, "--secret", checkSecret, "--settle", "100ms", "--settle-max", "3s", "--phases", "first,crash", "--serve", serve)
	waitClosed(t, addr)
	shot("report-crash", page)

	base, down := keycheckAPI(t, idemapi.Race)
	page = filepath.Join(t.TempDir(), "keycheck.html")
	runBin(t, filepath.Join(t.TempDir(), "k.db"), nil, append(keycheckArgs(base, down), "--checks", "replay,burst", "-q", "--report", "html="+page)...)
	shot("report-keycheck", page)
}
