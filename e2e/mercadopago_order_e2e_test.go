package e2e

// A Mercado Pago Orders API notification has no top-level "id": it is known
// by its order, data.id, an alphanumeric ORD01… that Mercado Pago's manifest
// lower-cases. send and check gave its fresh copies a payment's number
// instead (data.id=12372599405), so a handler that takes orders by their id
// saw no order, and the lower-casing the sample exists to exercise never
// happened.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// mpOrders is an Orders API handler as Mercado Pago documents it: the
// manifest's data.id from the query, lower-cased when alphanumeric; it works
// each order once and refuses an order id that is not one.
type mpOrders struct {
	mu   sync.Mutex
	ids  []string // every query data.id it accepted
	work map[string]int
}

var ordID = regexp.MustCompile(`^ORD01[0-9A-Z]{24}$`)

func (h *mpOrders) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		h.mu.Lock()
		fmt.Fprint(w, len(h.work))
		h.mu.Unlock()
		return
	}
	body, _ := io.ReadAll(r.Body)
	parts := map[string]string{}
	for _, p := range strings.Split(r.Header.Get("x-signature"), ",") {
		if k, v, ok := strings.Cut(p, "="); ok {
			parts[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	id := r.URL.Query().Get("data.id")
	mac := hmac.New(sha256.New, []byte(mpSecret))
	fmt.Fprintf(mac, "id:%s;request-id:%s;ts:%s;", strings.ToLower(id), r.Header.Get("x-request-id"), parts["ts"])
	if !hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(parts["v1"])) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var n struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &n) != nil || n.Data.ID != id || !ordID.MatchString(id) {
		http.Error(w, "not an order: "+id, http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ids = append(h.ids, id)
	h.work[id]++
}

func TestMercadoPagoOrderCopiesKeepTheOrdersShape(t *testing.T) {
	t.Parallel()
	h := &mpOrders{work: map[string]int{}}
	base := serveHandler(t, h)
	db := filepath.Join(t.TempDir(), "h.db")
	if r := runBin(t, db, nil, "send", "--provider", "mercadopago", "--event", "order.processed", "--secret", mpSecret, "--to", base+"/notifications"); r.Code != 0 {
		t.Fatalf("send order.processed: want the handler's 200, got %d %s", r.Code, r.Stderr)
	}
	id := checkInsertSample(t, db, "mercadopago", "order.processed", mpSecret)
	r, c := checkRunJSON(t, db, "--to", base+"/notifications", "--probe-http", base+"/orders", "--secret", mpSecret,
		"--phases", "first,dups,burst", "-n", "2", "--burst", "3", "--settle", "50ms", fmt.Sprint(id))
	if r.Code != 0 || c == nil {
		t.Fatalf("check of the order notification: want exit 0, got %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ids) < 1+2+3 {
		t.Fatalf("the handler accepted %d copies (%q), want every one of send's and check's", len(h.ids), h.ids)
	}
	for _, got := range h.ids {
		if !ordID.MatchString(got) {
			t.Fatalf("a copy's data.id is %q, not an order's ORD01…", got)
		}
	}
}
