package testwait

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// fakeT records a failure instead of ending the test, so the failing paths can be
// checked; Fatalf stops the caller's goroutine as testing.T's does.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

// run calls fn with a fakeT and returns its failure message ("" when it passed).
func run(fn func(t testing.TB)) (failed string) {
	f := &fakeT{}
	defer func() {
		if v := recover(); v != nil && v != any(f) {
			panic(v)
		}
		failed = f.failed
	}()
	fn(f)
	return ""
}

func TestFor(t *testing.T) {
	var polls atomic.Int32
	tests := []struct {
		name string
		cond func() bool
		want string // failure, "" when it passes
	}{
		{"holds at once", func() bool { return true }, ""},
		{"holds on the third poll", func() bool { return polls.Add(1) == 3 }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(func(ft testing.TB) { For(ft, "it", tc.cond) }); got != tc.want {
				t.Fatalf("failure %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecv(t *testing.T) {
	full := make(chan int, 1)
	full <- 7
	closed := make(chan int)
	close(closed)
	tests := []struct {
		name string
		c    chan int
		want int
		fail string
	}{
		{"a value waiting", full, 7, ""},
		{"a closed channel", closed, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			fail := run(func(ft testing.TB) { got = Recv(ft, "the value", tc.c) })
			if got != tc.want || fail != tc.fail {
				t.Fatalf("got %d, failure %q; want %d, %q", got, fail, tc.want, tc.fail)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	var polls atomic.Int32
	tests := []struct {
		name    string
		ceiling time.Duration
		cond    func() bool
		want    string
	}{
		{"holds at once", time.Hour, func() bool { return true }, ""},
		{"holds on the third poll", time.Hour, func() bool { return polls.Add(1) == 3 }, ""},
		{"never holds", time.Millisecond, func() bool { return false }, "not within 1ms: it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(func(ft testing.TB) { Within(ft, tc.ceiling, "it", tc.cond) }); got != tc.want {
				t.Fatalf("failure %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRecvWithin(t *testing.T) {
	full := make(chan int, 1)
	full <- 7
	tests := []struct {
		name    string
		ceiling time.Duration
		c       chan int
		want    int
		fail    string
	}{
		{"a value waiting", time.Hour, full, 7, ""},
		{"nothing comes", time.Millisecond, make(chan int), 0, "not within 1ms: the value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got int
			fail := run(func(ft testing.TB) { got = RecvWithin(ft, tc.ceiling, "the value", tc.c) })
			if got != tc.want || fail != tc.fail {
				t.Fatalf("got %d, failure %q; want %d, %q", got, fail, tc.want, tc.fail)
			}
		})
	}
}
