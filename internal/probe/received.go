package probe

import "sync"

// received is what a sink received, oldest first, and which of it counts:
// the calls of the HTTP sink, the messages of the SMTP sink.
type received[T any] struct {
	mu    sync.Mutex
	items []T
	// match, when set, selects what counts; none: everything does.
	match []func(T) bool
}

func (r *received[T]) add(x T) {
	r.mu.Lock()
	r.items = append(r.items, x)
	r.mu.Unlock()
}

func (r *received[T]) setMatch(m []func(T) bool) {
	r.mu.Lock()
	r.match = m
	r.mu.Unlock()
}

// matches reports whether x is selected by the match (or there is none).
func (r *received[T]) matches(x T) bool {
	r.mu.Lock()
	m := r.match
	r.mu.Unlock()
	if len(m) == 0 {
		return true
	}
	for _, f := range m {
		if f(x) {
			return true
		}
	}
	return false
}

func (r *received[T]) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// since returns a copy of what came after the first n, oldest first.
func (r *received[T]) since(n int) []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	n = max(n, 0)
	if n >= len(r.items) {
		return nil
	}
	return append([]T(nil), r.items[n:]...)
}

// counted is how many of the items counts selects.
func (r *received[T]) counted(counts func(T) bool) int {
	n := 0
	for _, x := range r.since(0) {
		if counts(x) {
			n++
		}
	}
	return n
}
