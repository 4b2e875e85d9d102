//go:build !linux

package session

import "time"

// threadCPU is the wall clock where the thread's CPU clock is not read: the work of a
// goroutine is then the time it took, waits for a processor included.
func threadCPU() time.Duration { return time.Since(processStart) }
