package web

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// While searches run, the process's memory is held to what it held when the first of
// them started plus seven eighths of the explorer's bound (a soft limit for the Go
// runtime, which may pass it a little: hence the eighth). A search counts what it
// keeps; what it throws away (a table replaced by a larger one, maps that grew) waits
// for the collector, whose usual target is twice the live heap: a search of Bakery
// held at 43 MiB by its own count, 34 MiB live, had the process hold 65 MiB, and on a
// busy machine that garbage took it past the bound. The limit makes the collector run
// before the bound instead. It is the process's, so it is kept once for every server
// in it, and the previous limit comes back when the last search ends.
var searchMemory struct {
	sync.Mutex
	running int
	saved   int64
}

// holdSearchMemory sets the limit for one more search (bound: the explorer's bound,
// for all its searches together) and returns the function that lifts it.
func holdSearchMemory(bound int64) (done func()) {
	searchMemory.Lock()
	defer searchMemory.Unlock()
	if searchMemory.running == 0 {
		runtime.GC() // what is held now, not the garbage of what ran before
		searchMemory.saved = debug.SetMemoryLimit(heldMemory() + bound - bound/8)
	}
	searchMemory.running++
	return func() {
		searchMemory.Lock()
		defer searchMemory.Unlock()
		if searchMemory.running--; searchMemory.running == 0 {
			debug.SetMemoryLimit(searchMemory.saved)
		}
	}
}

// heldMemory is what the Go runtime holds from the OS: everything it mapped, less
// what it gave back (what debug.SetMemoryLimit limits).
func heldMemory() int64 {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(sample)
	return int64(sample[0].Value.Uint64() - sample[1].Value.Uint64())
}
