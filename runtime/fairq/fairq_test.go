package fairq

import (
	"context"
	"errors"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
)

// waitFor starts Acquire for client in the background and reports its positions and
// its slot.
type pending struct {
	pos  chan int
	done chan func()
	err  chan error
}

func acquire(ctx context.Context, q *Queue, client string) *pending {
	p := &pending{pos: make(chan int, 64), done: make(chan func(), 1), err: make(chan error, 1)}
	go func() {
		rel, err := q.Acquire(ctx, client, func(n int) { p.pos <- n })
		if err != nil {
			p.err <- err
			return
		}
		p.done <- rel
	}()
	return p
}

// lastPos waits until the waiter's latest reported position is want.
func (p *pending) lastPos(t *testing.T, want int) {
	t.Helper()
	for {
		if got := testwait.Recv(t, "a position", p.pos); got == want {
			return
		}
	}
}

// A client looping requests on every slot gets its next turn only after a second
// client's: the second is told it is next, and the first slot freed goes to it.
func TestSecondClientIsServedBeforeTheLoopersNextRequest(t *testing.T) {
	for _, c := range []struct {
		name         string
		slots, share int
	}{{"two slots, share one", 2, 1}, {"one slot", 1, 1}, {"two slots, share two", 2, 2}} {
		t.Run(c.name, func(t *testing.T) {
			q := New(Options{Slots: c.slots, Share: c.share})
			ctx := context.Background()
			var held []func()
			for range c.slots {
				rel, err := q.Acquire(ctx, "A", nil)
				if err != nil {
					t.Fatal(err)
				}
				held = append(held, rel)
			}
			a := acquire(ctx, q, "A") // the looper's next search
			a.lastPos(t, 1)
			b := acquire(ctx, q, "B")
			testwait.For(t, "both waiting", func() bool { return q.Waiting() == 2 })
			b.lastPos(t, 1)
			a.lastPos(t, 2)
			held[0]()
			rel := testwait.Recv(t, "B's slot", b.done)
			select {
			case <-a.done:
				t.Fatal("the looper was served before the second client")
			default:
			}
			a.lastPos(t, 1)
			rel()
			testwait.Recv(t, "A's slot", a.done)()
			for _, r := range held[1:] {
				r()
			}
			if q.Running() != 0 || q.Waiting() != 0 {
				t.Fatalf("%d running, %d waiting at the end", q.Running(), q.Waiting())
			}
		})
	}
}

// A client has at most PerClient requests waiting; one that gives up leaves the queue.
func TestPerClientBoundAndCancel(t *testing.T) {
	q := New(Options{Slots: 1, PerClient: 2})
	bg := context.Background()
	rel, err := q.Acquire(bg, "A", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	w1, w2 := acquire(ctx, q, "A"), acquire(ctx, q, "A")
	testwait.For(t, "two waiting", func() bool { return q.Waiting() == 2 })
	if _, err := q.Acquire(bg, "A", nil); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third waiting request: %v, want ErrTooMany", err)
	}
	cancel()
	for _, w := range []*pending{w1, w2} {
		if err := testwait.Recv(t, "the cancelled waiter", w.err); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
	}
	if q.Waiting() != 0 {
		t.Fatalf("%d waiting after cancel", q.Waiting())
	}
	rel()
	rel, err = q.Acquire(bg, "B", nil)
	if err != nil {
		t.Fatal(err)
	}
	rel()
}
