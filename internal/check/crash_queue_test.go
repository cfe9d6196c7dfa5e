package check

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// queueRecovery is how long the "queue" handler process waits after it
// starts before it works the jobs a killed process left: longer than a
// reading's usual wait for a change (2 s), as BullMQ's 30 s lock is.
const queueRecovery = 2500 * time.Millisecond

// serveQueueHandler is the "queue" handler process (see serveFileHandler):
// state holds the events worked, state+".queue" the events enqueued. An
// event already enqueued is not enqueued again (BullMQ's jobId).
func serveQueueHandler(addr, state string) {
	queue := state + ".queue"
	var mu sync.Mutex
	has := func(path, id string) bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), id+"\n")
	}
	appendLine := func(path, id string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		f.WriteString(id + "\n")
		f.Close()
	}
	work := func(id string) {
		mu.Lock()
		defer mu.Unlock()
		if !has(state, id) {
			appendLine(state, id)
		}
	}
	// The jobs a dead process left are handed out again once their lock
	// has expired.
	left, _ := os.ReadFile(queue)
	go func() {
		time.Sleep(queueRecovery)
		for _, id := range strings.Fields(string(left)) {
			work(id)
		}
	}()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			ID string `json:"id"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		mu.Lock()
		queued := has(queue, ev.ID)
		if !queued {
			appendLine(queue, ev.ID)
		}
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // the enqueue's round trip: kills land inside it
		w.WriteHeader(http.StatusOK)
		if !queued {
			go func() { time.Sleep(10 * time.Millisecond); work(ev.ID) }()
		}
	})
	_ = http.ListenAndServe(addr, h)
}
