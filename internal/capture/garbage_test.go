package capture

import (
	"bytes"
	"io"
	"math/rand"
	"net"
	"testing"
	"time"
)

// TestMutatedInputs sends mutated copies of the fixtures, each on its own
// connection. Whatever arrives, the server must survive, and whatever it
// stored must be exactly a leading part of what was sent: never bytes that
// were not on the wire, never a request split or merged wrongly.
func TestMutatedInputs(t *testing.T) {
	ts := startServer(t, Options{MaxBody: 4096, HeaderTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	var seeds [][]byte
	for _, f := range []string{"odd_case_order.http", "repeated_headers.http", "chunked_trailers.http", "get_no_body.http", "slack_form.http"} {
		seeds = append(seeds, fixture(t, f))
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 100; i++ {
		in := mutate(rng, seeds)
		before := len(allDeliveries(t, ts.st))
		c, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(in)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, c) // until the server closes
		c.Close()
		ds := allDeliveries(t, ts.st)
		var stored []byte
		for _, d := range ds[before:] {
			stored = append(stored, d.Raw...)
		}
		if !isPrefixSkippingBlankLines(in, stored) {
			t.Fatalf("input %d: stored bytes are not what was sent\nsent:   %q\nstored: %q", i, in, stored)
		}
	}
	if n := len(allDeliveries(t, ts.st)); n < 20 {
		t.Fatalf("only %d deliveries stored from 100 inputs: the mutations leave too little valid to check", n)
	}
	stillServes(t, ts)
}

// isPrefixSkippingBlankLines reports whether stored is sent with the blank
// lines between requests (which capture drops) removed from its front parts.
func isPrefixSkippingBlankLines(sent, stored []byte) bool {
	for len(stored) > 0 {
		sent = bytes.TrimLeft(sent, "\r\n")
		n := 0
		for n < len(stored) && n < len(sent) && stored[n] == sent[n] {
			n++
		}
		if n == 0 {
			return false
		}
		stored, sent = stored[n:], sent[n:]
	}
	return true
}

func mutate(rng *rand.Rand, seeds [][]byte) []byte {
	var in []byte
	for k := 1 + rng.Intn(3); k > 0; k-- {
		in = append(in, seeds[rng.Intn(len(seeds))]...)
	}
	for k := rng.Intn(4); k > 0; k-- {
		if len(in) == 0 {
			break
		}
		p := rng.Intn(len(in))
		switch rng.Intn(5) {
		case 0: // flip a byte
			in[p] ^= byte(1 + rng.Intn(255))
		case 1: // cut
			in = in[:p]
		case 2: // insert junk
			const junkBytes = "\r\n:; \x00\xff0aZ"
			junk := []byte{junkBytes[rng.Intn(len(junkBytes))]}
			in = append(in[:p], append(junk, in[p:]...)...)
		case 3: // duplicate a slice
			q := p + rng.Intn(len(in)-p)
			in = append(in[:q], append(append([]byte{}, in[p:q]...), in[q:]...)...)
		case 4: // delete a byte
			in = append(in[:p], in[p+1:]...)
		}
	}
	return in
}
