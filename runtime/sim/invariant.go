package sim

import "fmt"

// broken reports an invariant of the kernel that does not hold: a bug in the kernel,
// never in the run or its input, so it panics, naming the invariant. It stays out of
// line, so a check costs the hot path a comparison and nothing more.
//
//go:noinline
func broken(format string, args ...any) {
	panic("sim: invariant broken: " + fmt.Sprintf(format, args...))
}
