package probe

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"testing"
)

func startTestSMTP(t *testing.T) *SMTPSink {
	t.Helper()
	s, err := StartSMTPSink(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestSMTPSinkGoClient sends with Go's net/smtp (EHLO, AUTH PLAIN, an
// encoded subject, two recipients) and reads what the sink counted.
func TestSMTPSinkGoClient(t *testing.T) {
	s := startTestSMTP(t)
	p := s.Probe()
	msg := "From: shop@example.com\r\nTo: alice@example.com\r\nSubject: =?UTF-8?B?" +
		base64.StdEncoding.EncodeToString([]byte("Your receipt – #42")) + "?=\r\n\r\nThanks.\r\n..leading dot\r\n"
	auth := smtp.PlainAuth("", "user", "secret", "127.0.0.1")
	for range 2 {
		if err := smtp.SendMail(s.Addr(), auth, "shop@example.com", []string{"alice@example.com", "bob@example.org"}, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	v, err := p.Read(context.Background())
	if err != nil || v.Text != "2" {
		t.Fatalf("probe = %v, %v; want 2", v, err)
	}
	m := s.Mails()[0]
	if m.Subject != "Your receipt – #42" || m.From != "shop@example.com" || len(m.To) != 2 || m.To[1] != "bob@example.org" {
		t.Fatalf("mail = %+v", m)
	}

	s.SetMatch([]MailPattern{mustMailPattern(t, "to:*@example.org")})
	if n := s.Counted(); n != 2 {
		t.Fatalf("to:*@example.org counted %d, want 2", n)
	}
	s.SetMatch([]MailPattern{mustMailPattern(t, "subject:Welcome*")})
	if n := s.Counted(); n != 0 {
		t.Fatalf("subject:Welcome* counted %d, want 0", n)
	}
	s.SetMatch([]MailPattern{mustMailPattern(t, "SUBJECT:your RECEIPT*")})
	if n := s.Counted(); n != 2 {
		t.Fatalf("case-insensitive subject counted %d, want 2", n)
	}
}

func mustMailPattern(t *testing.T, s string) MailPattern {
	t.Helper()
	p, err := ParseMailPattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSMTPSinkConversation drives the sink by hand: the EHLO capabilities a
// client relies on, AUTH LOGIN, pipelined commands, and a message over the
// size limit, which is refused and not counted.
func TestSMTPSinkConversation(t *testing.T) {
	s := startTestSMTP(t)
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tp := textproto.NewConn(conn)
	expect := func(code int) string {
		t.Helper()
		_, msg, err := tp.ReadResponse(code)
		if err != nil {
			t.Fatalf("want %d: %v", code, err)
		}
		return msg
	}
	expect(220)
	_ = tp.PrintfLine("EHLO test")
	caps := expect(250)
	for _, c := range []string{"PIPELINING", "8BITMIME", fmt.Sprintf("SIZE %d", MaxMailBytes), "AUTH PLAIN LOGIN"} {
		if !strings.Contains(caps, c) {
			t.Errorf("EHLO lacks %q:\n%s", c, caps)
		}
	}
	b64 := base64.StdEncoding.EncodeToString
	_ = tp.PrintfLine("AUTH LOGIN")
	if m := expect(334); m != b64([]byte("Username:")) {
		t.Fatalf("AUTH LOGIN asked %q", m)
	}
	_ = tp.PrintfLine("%s", b64([]byte("user")))
	expect(334)
	_ = tp.PrintfLine("%s", b64([]byte("pw")))
	expect(235)

	// Pipelined: every command written before any answer is read.
	w := bufio.NewWriter(conn)
	fmt.Fprint(w, "MAIL FROM:<a@x.test> BODY=8BITMIME\r\nRCPT TO:<carol@example.com>\r\nDATA\r\n")
	_ = w.Flush()
	expect(250)
	expect(250)
	expect(354)
	_ = tp.PrintfLine("Subject: Grüße\r\n\r\nbody\r\n.")
	expect(250)
	if n := s.Counted(); n != 1 || s.Mails()[0].Subject != "Grüße" {
		t.Fatalf("counted %d %+v, want 1 with the 8-bit subject", n, s.Mails())
	}

	_ = tp.PrintfLine("MAIL FROM:<a@x.test> SIZE=%d", MaxMailBytes+1)
	if _, _, err := tp.ReadResponse(250); err == nil {
		t.Fatal("a message declared over SIZE was accepted")
	}
	if n := s.Counted(); n != 1 {
		t.Fatalf("counted %d after a refused message, want 1", n)
	}
}

func TestParseMailPattern(t *testing.T) {
	for _, bad := range []string{"", "to", "cc:*@x", "to:", "*@example.com"} {
		if _, err := ParseMailPattern(bad); err == nil {
			t.Errorf("ParseMailPattern(%q) accepted", bad)
		}
	}
	m := Mail{From: "Shop <shop@x.test>", To: []string{"a@example.com"}, Subject: "Your receipt #1"}
	for pat, want := range map[string]bool{
		"to:*@example.com": true, "to:*@example.org": false, "subject:Your receipt*": true,
		"subject:receipt": false, "from:*shop@x.test*": true,
	} {
		if got := mustMailPattern(t, pat).Matches(m); got != want {
			t.Errorf("%s matches = %v, want %v", pat, got, want)
		}
	}
}

// TestSMTPSinkBirdIdempotencyKey: Bird sends one email per
// X-Bird-Idempotency-Key, so a message repeating a key (in any header case)
// is recorded, marked a repeat and not counted; messages without the header
// or with another key all count.
func TestSMTPSinkBirdIdempotencyKey(t *testing.T) {
	s := startTestSMTP(t)
	send := func(header string) {
		t.Helper()
		msg := "From: shop@example.com\r\nTo: ada@example.com\r\n" + header + "Subject: Your receipt\r\n\r\nThanks.\r\n"
		if err := smtp.SendMail(s.Addr(), nil, "shop@example.com", []string{"ada@example.com"}, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	send("X-Bird-Idempotency-Key: evt_1\r\n")
	send("x-bird-idempotency-key: evt_1\r\n")
	send("X-Bird-Idempotency-Key: evt_2\r\n")
	send("")
	send("")
	if n := s.Counted(); n != 4 {
		t.Fatalf("counted %d, want 4 (the second evt_1 is Bird's duplicate)", n)
	}
	ms := s.Mails()
	if len(ms) != 5 || ms[0].Repeat || !ms[1].Repeat || ms[1].IdempotencyKey != "evt_1" || ms[2].Repeat || ms[4].Repeat {
		t.Fatalf("mails %+v", ms)
	}
	if v, _ := s.Probe().Read(context.Background()); v.Text != "4" {
		t.Fatalf("probe %v, want 4", v)
	}
}
