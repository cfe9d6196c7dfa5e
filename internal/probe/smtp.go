package probe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/hookreplay/hookreplay/internal/panics"
	"io"
	"log"
	"mime"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// The SMTP sink is built on github.com/emersion/go-smtp, the SMTP server
// library maddy and most Go mail tools use: it speaks ESMTP as real clients
// expect it (EHLO, PIPELINING, 8BITMIME, SIZE, AUTH through go-sasl, dot
// unstuffing, line and size limits), which is where hand-written SMTP goes
// wrong with one client or another.

// Limits of the SMTP sink: what one message may weigh (advertised with
// SIZE, refused with 552 above it), how many recipients it may name, and
// how much of its subject a report keeps. Bodies are read and discarded.
const (
	MaxMailBytes      = 10 << 20
	maxMailRecipients = 100
	maxMailSubject    = 200
	maxMailAddress    = 254
)

// Mail is one message the SMTP sink accepted: who it was from and to and its
// subject. The body is not kept.
type Mail struct {
	At      time.Time `json:"at"`
	From    string    `json:"from"`
	To      []string  `json:"to"`
	Subject string    `json:"subject"`
	Size    int64     `json:"size"`
	// IdempotencyKey is the message's X-Bird-Idempotency-Key header, ""
	// when it has none.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	// Repeat: an earlier message carried the same X-Bird-Idempotency-Key.
	// Bird sends one email per key, so the sink does not count it.
	Repeat bool `json:"repeat,omitempty"`
}

// MailIdempotencyHeader is the message header Bird's email API dedupes on:
// messages sharing its value are sent once.
const MailIdempotencyHeader = "X-Bird-Idempotency-Key"

// MailPattern selects the messages the SMTP sink counts: a field (to, from
// or subject) and a glob whose * matches any run of characters, compared
// without regard to case: "to:*@example.com", "subject:Your receipt*". A
// "to" pattern matches a message when one of its recipients matches.
type MailPattern struct {
	Field string
	Glob  string
	re    *regexp.Regexp
}

// mailFields are the fields a MailPattern can name.
var mailFields = []string{"to", "from", "subject"}

// ParseMailPattern reads "FIELD:GLOB", e.g. "to:*@example.com".
func ParseMailPattern(s string) (MailPattern, error) {
	f, g, ok := strings.Cut(strings.TrimSpace(s), ":")
	f = strings.ToLower(strings.TrimSpace(f))
	if !ok || !contains(mailFields, f) || g == "" {
		return MailPattern{}, fmt.Errorf("%q: want FIELD:GLOB with FIELD one of %s (e.g. 'to:*@example.com', 'subject:Your receipt*')", s, strings.Join(mailFields, ", "))
	}
	return MailPattern{Field: f, Glob: g, re: compileGlob(g, "(?i)")}, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String is the pattern as written.
func (p MailPattern) String() string { return p.Field + ":" + p.Glob }

// Matches reports whether m is a message p selects.
func (p MailPattern) Matches(m Mail) bool {
	if p.re == nil {
		return false
	}
	switch p.Field {
	case "to":
		for _, t := range m.To {
			if p.re.MatchString(t) {
				return true
			}
		}
		return false
	case "from":
		return p.re.MatchString(m.From)
	}
	return p.re.MatchString(m.Subject)
}

// SMTPSink is a stand-in mail server: it accepts every message from any
// client (AUTH PLAIN and LOGIN accepted with any credentials), keeps who it
// was from and to and its subject, and counts it the moment DATA completes —
// before the client reads the 250 — so that a probe reading it moves while
// the handler is still between sending the email and answering its webhook.
// Point the handler's SMTP host at it (SMTP_HOST, EMAIL_HOST, MAIL_URL).
type SMTPSink struct {
	ln   net.Listener
	srv  *smtp.Server
	done chan struct{}

	// mails are the messages accepted; those SetMatch selects count.
	mails received[Mail]

	mu   sync.Mutex
	keys map[string]bool // X-Bird-Idempotency-Key values seen

	// trap holds a panic of a connection's goroutine (go-smtp's, or the
	// sink's reading of a message): the probe's next read raises it.
	// go-smtp recovers them itself, answers 421 and logs them, so unheld
	// they would only make the sink count fewer messages than came.
	trap panics.Trap
}

// StartSMTPSink listens on addr (host:port; port 0 picks a free one) and
// serves until ctx is cancelled or Close is called.
func StartSMTPSink(ctx context.Context, addr string) (*SMTPSink, error) {
	return startSMTPSink(ctx, addr, MaxSMTPConns, MaxSMTPConnTime)
}

// startSMTPSink is StartSMTPSink with its connection bounds (tests lower them).
func startSMTPSink(ctx context.Context, addr string, maxConns int, life time.Duration) (*SMTPSink, error) {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start smtp sink on %s: %w", addr, err)
	}
	ln := &smtpListener{Listener: tcp, max: int64(maxConns), life: life}
	s := &SMTPSink{ln: ln, done: make(chan struct{})}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &smtpSession{s: s}, nil
	}))
	srv.Domain = "hookreplay"
	srv.AllowInsecureAuth = true // a sink on loopback, any credentials
	srv.MaxMessageBytes = MaxMailBytes
	srv.MaxRecipients = maxMailRecipients
	srv.ReadTimeout = 30 * time.Second
	srv.WriteTimeout = 30 * time.Second
	// A client that hangs up is not hookreplay's error; a panic is.
	srv.ErrorLog = log.New(serverLog{trap: &s.trap, server: "github.com/emersion/go-smtp.(*Conn).handle"}, "", 0)
	s.srv = srv
	go func() {
		defer close(s.done)
		_ = srv.Serve(ln) // returns on Close
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return s, nil
}

// serverLog is a server library's error log: it drops what the library
// logs (clients that hang up, handshakes that fail) except a panic it
// recovered, which it holds in trap with the first line the library gave.
type serverLog struct {
	trap   *panics.Trap
	server string // where the library recovers it, for the error
}

func (l serverLog) Write(p []byte) (int, error) {
	line, _, _ := strings.Cut(string(p), "\n")
	if _, v, ok := strings.Cut(line, "panic serving "); ok {
		if _, after, ok := strings.Cut(v, ": "); ok {
			v = after // past the client's address
		}
		l.trap.Hold(&panics.Error{Value: v, Where: l.server})
	}
	return len(p), nil
}

// Addr is the address the sink listens on (with the real port).
func (s *SMTPSink) Addr() string { return s.ln.Addr().String() }

// SetMatch makes only messages matching one of ps count; none: every
// message counts. Call it before the sink is read.
func (s *SMTPSink) SetMatch(ps []MailPattern) {
	var m []func(Mail) bool
	for _, p := range ps {
		m = append(m, p.Matches)
	}
	s.mails.setMatch(m)
}

// Counts reports whether m is a message the sink counts (see SetMatch):
// never one that repeats an X-Bird-Idempotency-Key (Mail.Repeat), which Bird
// would not send again.
func (s *SMTPSink) Counts(m Mail) bool { return !m.Repeat && s.mails.matches(m) }

// Counted is the number of messages the sink counts.
func (s *SMTPSink) Counted() int { return s.mails.counted(s.Counts) }

// Len is the number of messages accepted so far.
func (s *SMTPSink) Len() int { return s.mails.len() }

// Mails returns every message accepted so far, oldest first.
func (s *SMTPSink) Mails() []Mail { return s.mails.since(0) }

// MailsSince returns the messages after the first n (a count taken earlier
// with Len), oldest first.
func (s *SMTPSink) MailsSince(n int) []Mail { return s.mails.since(n) }

// Close stops the sink and waits for it; accepted messages stay readable.
func (s *SMTPSink) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	if errors.Is(err, smtp.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Probe returns a probe whose value is the number of messages the sink
// counts.
func (s *SMTPSink) Probe() Probe { return &smtpProbe{s: s} }

type smtpProbe struct{ s *SMTPSink }

func (p *smtpProbe) Name() string { return "smtp: " + p.s.Addr() }

func (p *smtpProbe) Read(ctx context.Context) (Value, error) {
	if err := ctx.Err(); err != nil {
		return Value{}, probeErr(p.Name(), err)
	}
	p.s.trap.Rethrow()
	return NumValue(float64(p.s.Counted())), nil
}

// ownedBySet marks the probes whose server their Set stops.
func (p *smtpProbe) ownedBySet() {}

// smtpSession is one client connection's transaction.
type smtpSession struct {
	s    *SMTPSink
	from string
	to   []string
}

var _ smtp.AuthSession = (*smtpSession)(nil)

func (c *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain, sasl.Login} }

// Auth accepts any credentials: the sink stands in for the handler's mail
// provider, whose password it has no reason to check.
func (c *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech == sasl.Login {
		return &loginServer{}, nil
	}
	return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
}

func (c *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	c.from = shorten(from, maxMailAddress)
	return nil
}

func (c *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	c.to = append(c.to, shorten(to, maxMailAddress))
	return nil
}

// mailHeaderFields are the header fields of a message the sink keeps: the
// ones a report names, and Bird's idempotency key.
var mailHeaderFields = []string{"Subject", MailIdempotencyHeader}

// Data reads the message (the fields of its header section a report names,
// the rest discarded as it arrives) and counts it.
func (c *smtpSession) Data(r io.Reader) (err error) {
	defer c.s.trap.Catch(&err) // answered 554, raised by the probe's next read
	panics.TestHook("smtp")
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 4096)
	fields, _ := readMailFields(br, mailHeaderFields)
	subject, key := decodeHeader(fields["Subject"]), fields[MailIdempotencyHeader]
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err // too large (552) or the client went away: not accepted
	}
	m := Mail{At: time.Now(), From: c.from, To: append([]string(nil), c.to...), Subject: shorten(subject, maxMailSubject), Size: cr.n,
		IdempotencyKey: shorten(key, maxMailSubject)}
	c.s.mu.Lock()
	if key != "" {
		m.Repeat = c.s.keys[key]
		if c.s.keys == nil {
			c.s.keys = map[string]bool{}
		}
		c.s.keys[key] = true
	}
	c.s.mails.add(m) // under mu: messages are recorded in the order their keys were seen
	c.s.mu.Unlock()
	return nil
}

func (c *smtpSession) Reset()        { c.from, c.to = "", nil }
func (c *smtpSession) Logout() error { return nil }

// decodeHeader decodes RFC 2047 encoded words (=?UTF-8?B?…?=); a header
// that does not decode is kept as it came.
func decodeHeader(h string) string {
	d, err := new(mime.WordDecoder).DecodeHeader(h)
	if err != nil {
		return h
	}
	return d
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// loginServer is the server side of AUTH LOGIN (go-sasl has only the
// client): it asks for the user name, then the password, and accepts both.
type loginServer struct{ step int }

func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch l.step {
	case 0:
		l.step++
		if len(response) > 0 { // AUTH LOGIN <base64 user>: skip to the password
			l.step++
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.step++
		return []byte("Password:"), false, nil
	}
	return nil, true, nil
}
