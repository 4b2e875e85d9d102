// Package fairq shares a few slots of costly work (the explorer's searches, the
// compare page's runs) between clients: a request waits in a queue served round-robin
// across clients, so a client looping requests gets its next turn only after every
// other waiting client has had one, and one client holds at most its share of the
// slots while anyone else waits. A waiter hears its position as it changes.
package fairq

import (
	"context"
	"errors"
	"sync"

	"github.com/teach-dist/playground/internal/defaults"
)

// ErrTooMany refuses a request when its client already has PerClient waiting.
var ErrTooMany = errors.New("fairq: this client already has its requests waiting")

// Options size a Queue. Zero values take the defaults.
type Options struct {
	Slots     int // requests served at once (default 1)
	Share     int // slots one client holds while another waits (default half, at least 1)
	PerClient int // requests one client may have waiting (default 4)
}

// Queue is a fair queue of requests for a few slots. Safe for concurrent use.
type Queue struct {
	opts Options

	mu      sync.Mutex
	running map[string]int       // client -> slots held
	waiting map[string][]*waiter // client -> its waiters, oldest first
	ring    []string             // clients with waiters, in the order they came
	served  map[string]uint64    // client -> when it last got a slot (a sequence number)
	seq     uint64
}

type waiter struct {
	client string
	ready  chan struct{} // closed when the waiter holds a slot
	pos    chan int      // its latest position (1: next), newest only
	served bool
}

// New returns an empty queue.
func New(opts Options) *Queue {
	defaults.Positive(&opts.Slots, 1)
	defaults.Positive(&opts.Share, max(opts.Slots/2, 1))
	defaults.Positive(&opts.PerClient, 4)
	return &Queue{opts: opts, running: map[string]int{}, waiting: map[string][]*waiter{}, served: map[string]uint64{}}
}

// Acquire waits for a slot for client and returns the func that gives it back (call
// it exactly once). While it waits, position (if not nil) hears its place in the
// queue each time it changes, 1 being next, on the caller's goroutine. It fails with
// ctx's error if ctx ends first, or ErrTooMany.
func (q *Queue) Acquire(ctx context.Context, client string, position func(int)) (release func(), err error) {
	w := &waiter{client: client, ready: make(chan struct{}), pos: make(chan int, 1)}
	q.mu.Lock()
	if len(q.waiting[client]) >= q.opts.PerClient {
		q.mu.Unlock()
		return nil, ErrTooMany
	}
	if len(q.waiting[client]) == 0 {
		q.ring = append(q.ring, client)
	}
	q.waiting[client] = append(q.waiting[client], w)
	q.dispatchLocked()
	q.mu.Unlock()
	release = func() { q.release(client) }
	for {
		select {
		case <-w.ready:
			return release, nil
		case p := <-w.pos:
			if position != nil {
				position(p)
			}
		case <-ctx.Done():
			q.mu.Lock()
			if w.served { // the slot came as ctx ended: give it back
				q.mu.Unlock()
				release()
			} else {
				q.removeLocked(w)
				q.dispatchLocked()
				q.mu.Unlock()
			}
			return nil, ctx.Err()
		}
	}
}

func (q *Queue) release(client string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.running[client]--
	if q.running[client] <= 0 {
		delete(q.running, client)
		if len(q.waiting[client]) == 0 {
			delete(q.served, client) // gone: nothing of it is kept
		}
	}
	q.dispatchLocked()
}

// busyLocked is the number of slots held.
func (q *Queue) busyLocked() int {
	n := 0
	for _, k := range q.running {
		n += k
	}
	return n
}

// dispatchLocked hands free slots out round-robin, skipping clients at their share
// while another client waits, then tells every waiter its position.
func (q *Queue) dispatchLocked() {
	for q.busyLocked() < q.opts.Slots && len(q.ring) > 0 {
		var c string
		c, q.ring = q.next(q.ring, q.running, q.served, func(c string) int { return len(q.waiting[c]) })
		q.seq++
		q.served[c] = q.seq
		w := q.waiting[c][0]
		q.waiting[c] = q.waiting[c][1:]
		if len(q.waiting[c]) == 0 {
			delete(q.waiting, c)
		}
		q.running[c]++
		w.served = true
		close(w.ready)
	}
	q.tellLocked()
}

// next picks the client served next from ring: a client under its share before one
// at it, then the one served least recently (never served first: a looping client's
// next request waits for everyone else's turn), then the one that came first. It
// returns ring without that client when left says this was its last waiter.
func (q *Queue) next(ring []string, running map[string]int, served map[string]uint64, left func(string) int) (string, []string) {
	pick := 0
	for i, c := range ring {
		p := ring[pick]
		atShare, pAtShare := running[c] >= q.opts.Share, running[p] >= q.opts.Share
		if atShare != pAtShare {
			if !atShare {
				pick = i
			}
			continue
		}
		if served[c] < served[p] {
			pick = i
		}
	}
	c := ring[pick]
	if left(c) > 1 {
		return c, ring
	}
	return c, append(ring[:pick:pick], ring[pick+1:]...)
}

// tellLocked sends each waiter its position (1: next) by playing the dispatch
// forward on a copy, freeing a slot of the biggest holder whenever all are busy.
func (q *Queue) tellLocked() {
	running := make(map[string]int, len(q.running))
	busy := 0
	for c, n := range q.running {
		running[c] = n
		busy += n
	}
	taken := map[string]int{}
	served := make(map[string]uint64, len(q.served))
	for c, n := range q.served {
		served[c] = n
	}
	seq := q.seq
	ring := append([]string(nil), q.ring...)
	for pos := 1; len(ring) > 0; pos++ {
		if busy >= q.opts.Slots {
			top := ""
			for c, n := range running {
				if n > running[top] || (n == running[top] && c < top) {
					top = c
				}
			}
			running[top]--
			busy--
		}
		var c string
		c, ring = q.next(ring, running, served, func(c string) int { return len(q.waiting[c]) - taken[c] })
		seq++
		served[c] = seq
		w := q.waiting[c][taken[c]]
		taken[c]++
		running[c]++
		busy++
		select { // newest only: drop a position not read yet
		case <-w.pos:
		default:
		}
		w.pos <- pos
	}
}

func (q *Queue) removeLocked(w *waiter) {
	ws := q.waiting[w.client]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	if len(ws) > 0 {
		q.waiting[w.client] = ws
		return
	}
	delete(q.waiting, w.client)
	if q.running[w.client] == 0 {
		delete(q.served, w.client)
	}
	for i, c := range q.ring {
		if c == w.client {
			q.ring = append(q.ring[:i:i], q.ring[i+1:]...)
			break
		}
	}
}

// Waiting is the number of requests waiting.
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, ws := range q.waiting {
		n += len(ws)
	}
	return n
}

// Running is the number of slots held.
func (q *Queue) Running() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.busyLocked()
}
