package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/hookreplay/hookreplay/internal/message"
	"github.com/hookreplay/hookreplay/internal/store"
)

// What capture keeps of a handler's answer. The answer itself is streamed to
// the sender whatever its size; only its first bytes are stored. Stored
// prefixes share a budget, so that many large answers at once cannot add up:
// a delivery gets up to maxStoredResponse while the budget lasts, else
// minStoredResponse (bounded in total by --max-conns).
const (
	maxStoredResponse    = 1 << 20
	minStoredResponse    = 64 << 10
	storedResponseBudget = 64 << 20
	relayBuffer          = 32 << 10
)

// reservePrefix takes a stored-prefix allowance from the budget; the caller
// gives it back with releasePrefix.
func (s *Server) reservePrefix() int64 {
	for {
		used := s.prefixUsed.Load()
		want := int64(maxStoredResponse)
		if used+want > storedResponseBudget {
			want = minStoredResponse
		}
		if s.prefixUsed.CompareAndSwap(used, used+want) {
			return want
		}
	}
}

func (s *Server) releasePrefix(n int64) { s.prefixUsed.Add(-n) }

// readAnswer reads the first bytes of the handler's answer in fr.stream, up
// to a stored prefix taken from the budget (fr.reserved, given back by
// relay), into fr.prefix; fr.whole says the answer ended within them (or
// carries no body: for HEAD, 204, 304), fr.readErr why reading stopped
// otherwise. A whole answer is offered to slot, to be stored in the
// delivery's own row.
func (s *Server) readAnswer(fr *forwardResult, method string, slot *answerSlot) {
	st := fr.stream
	fr.reserved = s.reservePrefix()
	limit := fr.reserved
	if !bodyAllowed(fr.status) || method == http.MethodHead {
		_, _ = io.Copy(io.Discard, io.LimitReader(st.body, 1))
		fr.whole = true
	} else {
		// Room for a known length and the end-of-body read after it.
		size := int64(4 << 10)
		if st.length >= 0 {
			size = st.length + 1
		}
		prefix := make([]byte, 0, min(limit, size))
		for int64(len(prefix)) < limit {
			if len(prefix) == cap(prefix) {
				prefix = append(prefix, 0)[:len(prefix)]
			}
			n, err := st.body.Read(prefix[len(prefix):min(int64(cap(prefix)), limit)])
			prefix = prefix[:len(prefix)+n]
			if err != nil {
				fr.whole = errors.Is(err, io.EOF)
				if !fr.whole {
					fr.readErr = err
				}
				break
			}
		}
		fr.prefix = prefix
	}
	if fr.whole && slot != nil {
		slot.offer(store.Response{Status: fr.status, Headers: fr.headers, Body: fr.prefix, Latency: fr.latency})
	}
}

// relay answers the sender with the handler's answer (status and headers of
// r; body fr.prefix, read by readAnswer, then the rest of fr.stream) and
// records it for d unless it went into d's row already. An answer that fits
// the stored prefix is recorded and then answered, like capture's own
// answers; a larger one is written as it arrives — with the handler's
// Content-Length when it gave one, else chunked (close-delimited for
// HTTP/1.0) — and recorded afterwards with its first bytes and full length.
// It reports whether the connection may carry another request.
func (s *Server) relay(c *conn, d *store.Delivery, r response, fr forwardResult, slot *answerSlot) bool {
	st := fr.stream
	defer s.releasePrefix(fr.reserved)
	prefix, rerr := fr.prefix, fr.readErr
	if fr.whole {
		// Whole: recorded before it is answered.
		st.done(true)
		s.recordResponse(d, fr, prefix, 0, "", slot)
		r.body = prefix
		w := &deadlineWriter{c: c, timeout: s.opt.WriteTimeout}
		return r.write(w) == nil && !r.close
	}
	size := int64(len(prefix))
	cut := ""
	if rerr != nil {
		cut = s.cutWhy(size, rerr)
		// Nothing was sent yet: the sender learns of the failure as a 502.
		st.done(false)
		s.recordResponse(d, fr, prefix, 0, cut, slot)
		fail := response{status: http.StatusBadGateway, close: true, http10: r.http10, head: r.head,
			headers: message.Headers{{Name: "Content-Type", Value: "application/json"}}}
		fail.body, _ = json.Marshal(map[string]any{"id": d.ID, "error": cut})
		fail.write(&deadlineWriter{c: c, timeout: s.opt.WriteTimeout})
		return false
	}
	chunked := false
	switch {
	case st.length >= 0:
		r.length = st.length
	case r.http10:
		r.close = true // the end of the body is the end of the connection
		r.length = -2
	default:
		chunked = true
		r.length = -3
	}
	r.stream = true
	w := &deadlineWriter{c: c, timeout: s.opt.WriteTimeout}
	complete, ok := true, true
	if err := r.write(w); err != nil {
		cut, complete, ok = "sender hung up before the answer", false, false
	} else if err := writeChunk(w, prefix, chunked); err != nil {
		cut, complete, ok = fmt.Sprintf("sender hung up after %d bytes of the answer", size), false, false
	}
	buf := make([]byte, relayBuffer)
	for complete {
		n, err := st.body.Read(buf)
		if n > 0 {
			size += int64(n)
			if werr := writeChunk(w, buf[:n], chunked); werr != nil {
				cut = fmt.Sprintf("sender hung up after %d bytes of the answer", size)
				complete, ok = false, false
				break
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			cut, complete, ok = s.cutWhy(size, err), false, false
			break
		}
	}
	if complete && chunked {
		if _, err := io.WriteString(w, "0\r\n\r\n"); err != nil {
			ok = false
		}
	}
	st.done(complete)
	s.recordResponse(d, fr, prefix, size, cut, slot)
	return ok && !r.close
}

// cutWhy words a handler answer that ended early.
func (s *Server) cutWhy(size int64, err error) string {
	switch {
	case errors.Is(s.base.Err(), context.Canceled):
		return fmt.Sprintf("capture stopped after %d bytes of the handler's answer", size)
	case isTimeout(err):
		return fmt.Sprintf("handler's answer cut after %d bytes: not complete within %s", size, s.opt.ForwardTimeout)
	}
	return fmt.Sprintf("handler's answer cut after %d bytes: %v", size, err)
}

func writeChunk(w io.Writer, b []byte, chunked bool) error {
	if !chunked {
		_, err := w.Write(b)
		return err
	}
	if _, err := io.WriteString(w, strconv.FormatInt(int64(len(b)), 16)+"\r\n"); err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n")
	return err
}

// deadlineWriter gives every write to the sender its own WriteTimeout, so a
// long answer is bounded by the sender's pace, not by one deadline.
type deadlineWriter struct {
	c       *conn
	timeout time.Duration
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.c.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	return w.c.nc.Write(b)
}

// recordResponse stores what the handler answered for d: body is the whole
// answer, or its first bytes of size. An answer that went into d's own row
// (slot) is not written again.
func (s *Server) recordResponse(d *store.Delivery, fr forwardResult, body []byte, size int64, ferr string, slot *answerSlot) {
	if slot.joined() {
		return
	}
	status := fr.status
	if fr.stream != nil && ferr != "" && size <= int64(len(body)) {
		status = http.StatusBadGateway // nothing of it reached the sender
	}
	d.ResponseStatus, d.ForwardError = status, ferr
	full := int64(0)
	if size > int64(len(body)) {
		full = size
	}
	s.responses <- store.Response{ID: d.ID, Status: status, Headers: fr.headers, Body: body, Size: full,
		Latency: fr.latency, ForwardError: ferr}
}
