package store

import (
	"context"
	"strings"
	"testing"
)

// TestBodyStoredOnce: a body that is the raw request's tail is stored once
// (body empty, body_at set) and reads back exactly — by GetDelivery, the
// summaries' length and the text filter — while a chunked body, which is not
// the raw tail, keeps its own column.
func TestBodyStoredOnce(t *testing.T) { eachBackend(t, testBodyStoredOnce) }

func testBodyStoredOnce(t *testing.T, loc string) {
	ctx := context.Background()
	s := deliveriesOpen(t, loc)
	plain := &Delivery{Method: "POST", Target: "/a",
		Raw:  []byte("POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 13\r\n\r\n{\"x\":\"\xff\x00é\"}"),
		Body: []byte("{\"x\":\"\xff\x00é\"}")}
	chunked := &Delivery{Method: "POST", Target: "/b",
		Raw:  []byte("POST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
		Body: []byte("hello")}
	empty := &Delivery{Method: "GET", Target: "/c", Raw: []byte("GET /c HTTP/1.1\r\nHost: h\r\n\r\n"), Body: []byte{}}
	w, err := s.NewWriter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(ctx, []*Delivery{plain, chunked}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertDelivery(ctx, empty); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*Delivery{plain, chunked, empty} {
		got, err := s.GetDelivery(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.Body) != string(want.Body) || string(got.Raw) != string(want.Raw) {
			t.Errorf("delivery %d: body %q raw %q, want %q %q", want.ID, got.Body, got.Raw, want.Body, want.Raw)
		}
	}
	var bodyAt, stored int
	if err := s.db.QueryRowContext(ctx, `SELECT body_at, length(body) FROM deliveries WHERE id=?`, plain.ID).Scan(&bodyAt, &stored); err != nil {
		t.Fatal(err)
	}
	if bodyAt != len(plain.Raw)-len(plain.Body) || stored != 0 {
		t.Errorf("plain body: body_at %d, body column %d bytes; want %d and 0", bodyAt, stored, len(plain.Raw)-len(plain.Body))
	}
	if err := s.db.QueryRowContext(ctx, `SELECT body_at, length(body) FROM deliveries WHERE id=?`, chunked.ID).Scan(&bodyAt, &stored); err != nil {
		t.Fatal(err)
	}
	if bodyAt != -1 || stored != 5 {
		t.Errorf("chunked body: body_at %d, body column %d bytes; want -1 and 5", bodyAt, stored)
	}
	sums, err := s.ListSummaries(ctx, Filter{}, Page{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, sum := range sums {
		var want int
		switch sum.ID {
		case plain.ID:
			want = len(plain.Body)
		case chunked.ID:
			want = len(chunked.Body)
		}
		if sum.BodySize != want {
			t.Errorf("summary of %d: body size %d, want %d", sum.ID, sum.BodySize, want)
		}
	}
	for text, want := range map[string]int64{"hello": chunked.ID, `"x"`: plain.ID} {
		ds, err := s.ListDeliveries(ctx, Filter{Text: text, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != 1 || ds[0].ID != want {
			var ids []string
			for _, d := range ds {
				ids = append(ids, d.Target)
			}
			t.Errorf("text %q matched %s, want only delivery %d", text, strings.Join(ids, ","), want)
		}
	}
}
