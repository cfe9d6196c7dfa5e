package cmd

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookreplay/hookreplay/internal/check"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The progress is never silent for longer than the heartbeat's period: a
// line names the phase the run is in; lines written in time keep it quiet.
func TestHeartbeatWhenSilent(t *testing.T) {
	var buf syncBuf
	hb := newHeartbeat(&buf, 80*time.Millisecond)
	p := checkProgress{w: hb, hb: hb}
	p.PhaseStarted(check.PhaseStart{Phase: check.PhaseBurst, DeliveryID: 3})
	for i := 0; i < 4; i++ { // busy: no heartbeat
		time.Sleep(30 * time.Millisecond)
		p.line("burst    delivery 3 round %d", i+1)
	}
	if strings.Contains(buf.String(), "still checking") {
		t.Fatalf("heartbeat while lines were printed:\n%s", buf.String())
	}
	time.Sleep(200 * time.Millisecond) // silent
	hb.stop()
	if out := buf.String(); !strings.Contains(out, "still checking: burst of delivery 3") {
		t.Fatalf("no heartbeat after a silence:\n%s", out)
	}
}
