package session

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
)

// fakeClock is a Clock that moves only when a test advances it. Timers due by then
// fire in time order on the test's goroutine, inside Advance; a timer set to fire at
// once waits for the next Advance (Advance(0) fires it), so nothing happens between a
// test's lines that the test did not ask for.
type fakeClock struct {
	// settle, if set, runs after each firing and returns once the code the timer woke
	// has acted: a timer that code sets for a time Advance reaches fires in the same
	// Advance, as it would on the wall clock.
	settle func()

	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c  *fakeClock
	f  func()
	at time.Time
	on bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	t := &fakeTimer{c: c, f: f}
	t.Reset(d)
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.on
	t.on = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.on
	t.at, t.on = t.c.now.Add(d), true
	return was
}

// Advance moves the clock on by d, firing every timer due by then. The callbacks run
// without the lock: a session's callback waits for room in its command queue.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if t.on && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		if next.at.After(c.now) {
			c.now = next.at
		}
		next.on = false
		c.mu.Unlock()
		next.f()
		if c.settle != nil {
			c.settle()
		}
	}
}

// clocked is a test's managers sharing one fake clock.
type clocked struct {
	clock *fakeClock
	ms    []*Manager
}

// newClocked makes one manager (of up to 4 sessions) per opts, on one fake clock; they
// close when the test ends.
func newClocked(t *testing.T, opts ...Options) *clocked {
	r := &clocked{clock: newFakeClock()}
	for _, o := range opts {
		o.Clock = r.clock
		m := NewManager(4, o)
		t.Cleanup(m.Close)
		r.ms = append(r.ms, m)
	}
	r.clock.settle = func() { r.settle(t) }
	return r
}

// settle returns once every live session has handled all that was queued to it before
// the call, and re-armed its timers after it (the run loop does so after each envelope).
func (r *clocked) settle(t *testing.T) {
	t.Helper()
	for _, m := range r.ms {
		m.mu.Lock()
		live := slices.Collect(maps.Values(m.byID))
		m.mu.Unlock()
		for _, s := range live {
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Limit)
			_, err := s.Recipe(ctx) // a recipe neither wakes a run nor moves it
			cancel()
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Fatalf("session %s did not settle: %v", s.ID(), err)
			}
		}
	}
}

// pass lets d go by once everything sent so far is handled: every timer due fires
// and is acted on before pass returns.
func (r *clocked) pass(t *testing.T, d time.Duration) {
	t.Helper()
	r.settle(t)
	r.clock.Advance(d)
	r.settle(t)
}

// The fake clock fires what is due, in time order, and nothing else.
func TestFakeClock(t *testing.T) {
	tests := []struct {
		name    string
		advance []time.Duration
		want    string

		moveC bool // stop c, then reset it to fire at 9 s
	}{
		{"nothing due yet", []time.Duration{time.Second}, "", false},
		{"due in order", []time.Duration{5 * time.Second}, "abc", false},
		{"step by step", []time.Duration{2 * time.Second, 0, time.Second, 2 * time.Second}, "abc", false},
		{"stopped and reset", []time.Duration{5 * time.Second}, "ab", true},
		{"reset fires later", []time.Duration{5 * time.Second, 4 * time.Second}, "abc", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newFakeClock()
			var got []byte
			note := func(b byte) func() { return func() { got = append(got, b) } }
			c.AfterFunc(3*time.Second, note('b'))
			c.AfterFunc(2*time.Second, note('a'))
			last := c.AfterFunc(4*time.Second, note('c'))
			if tc.moveC {
				last.Stop()
				if last.Reset(9 * time.Second) {
					t.Fatal("Reset of a stopped timer reported it pending")
				}
			}
			for _, d := range tc.advance {
				c.Advance(d)
			}
			if string(got) != tc.want {
				t.Fatalf("fired %q, want %q", got, tc.want)
			}
		})
	}
}
