package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// tailObserver starts a tail of work (the handler's effect growing every
// 5 ms for tail) when the first copy's effect was read: effects of the
// first phase still arriving when the next one starts (its late-effect
// window watched, or overlapped by the next phases).
type tailObserver struct {
	NopObserver
	h    *handler
	tail time.Duration
}

func (o tailObserver) Step(s Step) {
	if s.Phase != PhaseFirst {
		return
	}
	o.h.effect.Add(1) // the tail has begun when the next phase starts
	go func() {
		for end := time.Now().Add(o.tail); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
			o.h.effect.Add(1)
		}
	}()
}

// A phase that starts while effects of an earlier one are still arriving at
// --settle-max is not judged, and nothing is charged to it.
func TestPhaseNotJudgedWhileEarlierEffectsArrive(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.Settle = 30 * time.Millisecond // several of the tail's steps
	o.Phases = []string{PhaseFirst, PhaseDups}
	o.Observer = tailObserver{h: h, tail: 600 * time.Millisecond}
	c := run(t, o)
	d := phaseOf(t, c, PhaseDups)
	if d.Status != report.NotJudged || !strings.Contains(d.Message, "effects of earlier phases are still arriving") || d.Attempts != 0 {
		t.Fatalf("dups: want not judged, nothing sent: %s %q (%d copies)", d.Status, d.Message, d.Attempts)
	}
	if c.Verdict == report.VerdictFail {
		t.Fatalf("verdict %s: a tail of earlier work is no violation", c.Verdict)
	}
}

// Once the tail has ended, the next phase is judged as usual: quiet waits
// are shared, not skipped.
func TestPhaseJudgedOnceQuietAgain(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.Settle, o.SettleMax = 30*time.Millisecond, 2*time.Second
	o.Phases = []string{PhaseFirst, PhaseDups}
	o.Observer = tailObserver{h: h, tail: 100 * time.Millisecond}
	c := run(t, o)
	if d := phaseOf(t, c, PhaseDups); d.Status != report.Pass {
		t.Fatalf("dups: %s %q", d.Status, d.Message)
	}
}

// The captured signature is held against the secret given, except where it
// cannot be: an imported delivery, a delivery without a signature header.
func TestCapturedSignature(t *testing.T) {
	d := delivery(t, 1, 4900)
	if err := capturedSignature(d, testSecret); err != nil {
		t.Fatalf("right secret: %v", err)
	}
	var cs *CapturedSignatureError
	if err := capturedSignature(d, "whsec_another"); !errors.As(err, &cs) || cs.DeliveryID != 1 || cs.Provider != "stripe" {
		t.Fatalf("wrong secret: %v", err)
	}
	// Signed pretty-printed, captured compact (a forwarder re-serialised
	// the JSON): the secret is right, the copies verify, no setup error.
	compacted := d
	compacted.Req = d.Req.Clone()
	var buf bytes.Buffer
	if err := json.Compact(&buf, d.Req.Body); err != nil || bytes.Equal(buf.Bytes(), d.Req.Body) {
		t.Fatalf("the fixture is not pretty-printed JSON: %v", err)
	}
	compacted.Req.Body = buf.Bytes()
	if err := capturedSignature(compacted, testSecret); err != nil {
		t.Fatalf("re-encoded body, right secret: %v", err)
	}
	if err := capturedSignature(compacted, "whsec_another"); !errors.As(err, &cs) {
		t.Fatalf("re-encoded body, wrong secret: %v", err)
	}
	imported := d
	imported.Imported = true
	if err := capturedSignature(imported, "whsec_another"); err != nil {
		t.Fatalf("imported: %v", err)
	}
	unsigned := d
	unsigned.Req = d.Req.Clone()
	unsigned.Req.Headers = unsigned.Req.Headers.Del("Stripe-Signature")
	if err := capturedSignature(unsigned, "whsec_another"); err != nil {
		t.Fatalf("no signature header: %v", err)
	}
	u, _ := url.Parse("http://127.0.0.1:1/hook")
	_, err := Run(context.Background(), Options{Target: u, Deliveries: []Delivery{d}, Probes: []probe.Probe{brokenProbe{}}, Secret: "whsec_another"})
	if !errors.As(err, &cs) {
		t.Fatalf("Run with the wrong secret: %v", err)
	}
}

// slowCounter is counter read slowly, as a probe of a database on a loaded
// machine is: each read finishes well after it began.
type slowCounter struct {
	counter
	delay time.Duration
}

func (c slowCounter) Read(ctx context.Context) (probe.Value, error) {
	v, err := c.counter.Read(ctx)
	time.Sleep(c.delay)
	return v, err
}

// A handler whose work is done when it answers is never said to work behind
// a queue, however slowly its probe reads: a read begun after the answer
// already shows the effect. (The note used when a change was first seen, so
// a 60 ms read put a synchronous wallet handler "behind a queue".)
func TestSynchronousEffectIsNotCalledLate(t *testing.T) {
	h, u := newHandler(t, "correct")
	o := options(h, u, delivery(t, 1, 4900))
	o.Probes = []probe.Probe{slowCounter{counter{h}, 60 * time.Millisecond}}
	o.Phases = []string{PhaseFirst}
	c := run(t, o)
	for _, n := range c.Notes {
		if strings.Contains(n, "still arriving") {
			t.Fatalf("a synchronous handler's effect was called late: %s", n)
		}
	}
}
