// Package testwait is the one way tests wait for something that happens on another
// goroutine or in another process. Its time limit only turns a hang into a failure: a
// passing test never waits for it, so a slow or busy machine makes tests slower, never
// red. Tests that wait for a timer use a fake clock instead (runtime/session's Clock).
package testwait

import (
	"fmt"
	"testing"
	"time"
)

// Limit is how long a wait may take before the test fails. It is generous on purpose:
// `make stress` runs the tests beside busy CPU loops.
const Limit = 30 * time.Second

// For polls cond until it holds, and fails t with "never: what" after Limit. cond runs
// on the test's goroutine, so it may itself call t.Fatal. Polls start at once and back
// off to every 20 ms.
func For(t testing.TB, what string, cond func() bool) {
	t.Helper()
	forWithin(t, Limit, "never: "+what, cond)
}

// Within is For where the requirement itself is a bound in time ("the pool is idle
// within 5 s of the sockets closing"): it fails t with "not within ceiling: what" once
// ceiling has passed without cond holding. Give the requirement's own bound, never a
// tighter one: a busy machine must not turn it red.
func Within(t testing.TB, ceiling time.Duration, what string, cond func() bool) {
	t.Helper()
	forWithin(t, ceiling, fmt.Sprintf("not within %v: %s", ceiling, what), cond)
}

func forWithin(t testing.TB, limit time.Duration, failure string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for pause := time.Millisecond; !cond(); pause = min(2*pause, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s", failure)
		}
		time.Sleep(pause)
	}
}

// Recv returns the next value from c, or the zero value once c is closed (a done
// channel's close is what a test waits for), and fails t with "never: what" after Limit.
func Recv[T any](t testing.TB, what string, c <-chan T) T {
	t.Helper()
	return recvWithin(t, Limit, "never: "+what, c)
}

// RecvWithin is Recv where the requirement itself is a bound in time: it fails t with
// "not within ceiling: what" once ceiling has passed without a value.
func RecvWithin[T any](t testing.TB, ceiling time.Duration, what string, c <-chan T) T {
	t.Helper()
	return recvWithin(t, ceiling, fmt.Sprintf("not within %v: %s", ceiling, what), c)
}

func recvWithin[T any](t testing.TB, limit time.Duration, failure string, c <-chan T) T {
	t.Helper()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case v := <-c:
		return v
	case <-timer.C:
		t.Fatalf("%s", failure)
	}
	panic("unreachable") // Fatalf does not return
}
