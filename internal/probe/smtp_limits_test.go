package probe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReadMailFields(t *testing.T) {
	long := strings.Repeat("X-Filler: "+strings.Repeat("f", 900)+"\r\n", MaxMailHeader/900+10)
	for _, tc := range []struct {
		name, in, subject, rest string
	}{
		{"plain", "From: a@b\r\nSubject: Your receipt\r\n\r\nbody\r\n", "Your receipt", "body\r\n"},
		{"case and first wins", "subject: one\r\nSUBJECT: two\r\n\r\n", "one", ""},
		{"folded", "Subject: Your\r\n  receipt\r\n\t#42\r\nTo: x\r\n\r\nb", "Your receipt #42", "b"},
		{"bare LF", "Subject: hi\nX: y\n\nbody", "hi", "body"},
		{"no body", "Subject: hi\r\n", "hi", ""},
		{"no header section", "\r\nSubject: not a header\r\n", "", "Subject: not a header\r\n"},
		{"not a field", "garbage line\r\nSubject: s\r\n\r\n", "s", ""},
		{"past the bound", long + "Subject: late\r\n\r\nbody", "", ""},
		{"long value kept bounded", "Subject: " + strings.Repeat("s", 3*maxMailField) + "\r\n\r\n", strings.Repeat("s", maxMailField), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReaderSize(strings.NewReader(tc.in), 64) // lines longer than the buffer too
			f, _ := readMailFields(r, []string{"Subject"})
			if f["Subject"] != tc.subject {
				t.Fatalf("Subject = %q, want %q", shorten(f["Subject"], 60), shorten(tc.subject, 60))
			}
			rest, _ := io.ReadAll(r)
			if tc.name != "past the bound" && string(rest) != tc.rest {
				t.Fatalf("rest = %q, want %q", rest, tc.rest)
			}
		})
	}
}

// smtpSend speaks SMTP on c and sends msg (already dot-stuffed, without the
// final dot); it returns the answer to the final dot.
func smtpSend(c net.Conn, msg io.Reader) (string, error) {
	tp := textproto.NewConn(c)
	if _, _, err := tp.ReadResponse(220); err != nil {
		return "", err
	}
	for _, cmd := range []string{"EHLO client", "MAIL FROM:<shop@example.com>", "RCPT TO:<alice@example.com>"} {
		if err := tp.PrintfLine("%s", cmd); err != nil {
			return "", err
		}
		if _, _, err := tp.ReadResponse(250); err != nil {
			return "", err
		}
	}
	if err := tp.PrintfLine("DATA"); err != nil {
		return "", err
	}
	if _, _, err := tp.ReadResponse(354); err != nil {
		return "", err
	}
	if _, err := io.Copy(c, msg); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, ".\r\n"); err != nil {
		return "", err
	}
	code, text, err := tp.ReadResponse(0)
	return fmt.Sprint(code, " ", text), err
}

// Four concurrent messages with 6 MB header sections (within SIZE): the
// sink parsed each whole section into memory (~290 MiB for the four,
// growing with clients); it now reads only the subject, in a bounded
// stream. Each is still counted, with its subject.
func TestSMTPSinkHeaderSectionsInBoundedMemory(t *testing.T) {
	s := startTestSMTP(t)
	line := "X-Filler: " + strings.Repeat("h", 30) + "\r\n" // short lines: the most fields
	header := "Subject: Your receipt\r\n" + strings.Repeat(line, 6<<20/len(line))
	msg := []byte(header + "\r\nThanks.\r\n") // sent as is: the client allocates nothing
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", s.Addr())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if ans, err := smtpSend(c, bytes.NewReader(msg)); err != nil || !strings.HasPrefix(ans, "250") {
				errs <- fmt.Errorf("answer %q, %v", ans, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := (after.TotalAlloc - before.TotalAlloc) >> 20
	t.Logf("allocated %d MiB for 4 messages of %d MiB", alloc, len(msg)>>20)
	if alloc > 16 {
		t.Fatalf("the sink allocated %d MiB for 4 messages with 6 MB header sections, want at most 16 MiB", alloc)
	}
	ms := s.Mails()
	if len(ms) != 4 || ms[0].Subject != "Your receipt" {
		t.Fatalf("mails: %d, first %+v", len(ms), ms[0])
	}
}

// Past its connection cap the sink answers 421 at once and closes; a place
// freed is taken again. A connection ends at its time limit however busy.
func TestSMTPSinkConnectionBounds(t *testing.T) {
	s, err := startSMTPSink(context.Background(), "127.0.0.1:0", 3, 700*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	greeting := func(c net.Conn) string {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		l, _ := bufio.NewReader(c).ReadString('\n')
		return l
	}
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if g := greeting(c); !strings.HasPrefix(g, "220") {
			t.Fatalf("greeting %q", g)
		}
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if g := greeting(extra); !strings.HasPrefix(g, "421 ") || time.Since(start) > 2*time.Second {
		t.Fatalf("past the cap: %q after %s, want 421 at once", g, time.Since(start))
	}
	extra.Close()
	held[0].Close()
	time.Sleep(100 * time.Millisecond) // the sink notices the close
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if g := greeting(c); !strings.HasPrefix(g, "220") {
		t.Fatalf("after a place was freed: %q", g)
	}
	// A client that keeps talking is still cut at the time limit.
	tp := textproto.NewConn(c)
	start = time.Now()
	for time.Since(start) < 5*time.Second {
		if err := tp.PrintfLine("NOOP"); err != nil {
			break
		}
		if _, _, err := tp.ReadResponse(250); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a busy connection lasted %s, want it closed at its 700ms limit", d)
	}
}
