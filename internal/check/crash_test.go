package check

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"time"

	"github.com/hookreplay/hookreplay/internal/probe"
	"github.com/hookreplay/hookreplay/internal/report"
)

// The crash phase kills and restarts a real process: the test binary
// itself, started with CHECK_TEST_HANDLER set, serves a handler that keeps
// its claimed event ids in a file (one line each), so its effect survives a
// restart exactly as far as the handler made it durable.

func TestMain(m *testing.M) {
	if mode := os.Getenv("CHECK_TEST_HANDLER"); mode != "" {
		serveFileHandler(mode, os.Getenv("CHECK_TEST_ADDR"), os.Getenv("CHECK_TEST_STATE"))
		return
	}
	// Every goroutine a check starts has an owner that stops it.
	goleak.VerifyTestMain(m)
}

// serveFileHandler is the handler process. "durable" claims an event by
// writing it before answering 2xx; "ackfirst" answers 2xx first and does
// the work 50 ms later, from memory.
func serveFileHandler(mode, addr, state string) {
	var mu sync.Mutex
	claim := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		if b, _ := os.ReadFile(state); strings.Contains(string(b), id+"\n") {
			return
		}
		f, err := os.OpenFile(state, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		f.WriteString(id + "\n")
		f.Close()
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID string `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		if mode == "ackfirst" {
			w.WriteHeader(http.StatusOK)
			go func() { time.Sleep(50 * time.Millisecond); claim(ev.ID) }()
			return
		}
		time.Sleep(30 * time.Millisecond) // the work
		claim(ev.ID)
		w.WriteHeader(http.StatusOK)
	})
	_ = http.ListenAndServe(addr, h)
}

// lines is the fake probe of the handler process: how many events it claimed.
type lines struct{ path string }

func (l lines) Name() string { return "claimed" }

func (l lines) Read(context.Context) (probe.Value, error) {
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return probe.NumValue(0), nil
	}
	if err != nil {
		return probe.Value{}, err
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		n++
	}
	return probe.NumValue(float64(n)), nil
}

func TestRunCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills handler processes")
	}
	for _, tc := range []struct {
		mode string
		want report.Status
		msg  string
	}{
		{"durable", report.Pass, "killed the handler at 4 points across and after its"},
		{"ackfirst", report.Fail, "answered 200 but the work was lost when the process died"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			state := filepath.Join(t.TempDir(), "claimed")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			srv := &Server{Cmd: "exec '" + exe + "'", Addr: addr,
				Env: []string{"CHECK_TEST_HANDLER=" + tc.mode, "CHECK_TEST_ADDR=" + addr, "CHECK_TEST_STATE=" + state}}
			u, _ := url.Parse("http://" + addr + "/hook")
			o := Options{Target: u, Deliveries: []Delivery{delivery(t, 1, 4900)}, Probes: []probe.Probe{lines{state}},
				Secret: testSecret, Serve: srv, Phases: []string{PhaseCrash},
				Settle: 5 * time.Millisecond, SettleMax: 300 * time.Millisecond}
			c := run(t, o)
			p := phaseOf(t, c, PhaseCrash)
			if p.Status != tc.want || !strings.Contains(p.Message, tc.msg) {
				t.Fatalf("crash: %s %q, want %s %q", p.Status, p.Message, tc.want, tc.msg)
			}
			if tc.want == report.Fail && p.Violations[0].Hint != ackLostHint {
				t.Errorf("an acknowledged, lost event's hint: %q", p.Violations[0].Hint)
			}
			if canDial(addr) {
				t.Error("the handler still listens after the run")
			}
		})
	}
}

func TestServerStartErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	busy := ln.Addr().String()
	defer ln.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	idle := free.Addr().String()
	free.Close()
	for _, tc := range []struct {
		name string
		srv  *Server
		want ServeProblem
		msg  string
	}{
		{"address in use", &Server{Cmd: "true", Addr: busy}, ServeAddrInUse, "already accepts connections"},
		{"exits first", &Server{Cmd: "echo boom; exit 4", Addr: idle}, ServeExited, "exit status 4"},
		{"never listens", &Server{Cmd: "sleep 5", Addr: idle, ReadyTimeout: 100 * time.Millisecond}, ServeNotReady, "within 100ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.srv.Start(context.Background())
			defer tc.srv.Stop()
			se, ok := err.(*ServeError)
			if !ok || se.Problem != tc.want || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Start = %v, want problem %d mentioning %q", err, tc.want, tc.msg)
			}
			if tc.want == ServeExited && !strings.Contains(se.Output, "boom") {
				t.Errorf("output %q lacks what the process printed", se.Output)
			}
		})
	}
}
