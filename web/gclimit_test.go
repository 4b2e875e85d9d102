package web

import (
	"math"
	"runtime/debug"
	"testing"
)

// While searches run the process is held to what it held at the first one's start
// plus seven eighths of the explorer's bound; a second search keeps that limit, and
// the limit there was before comes back only when the last one ends.
func TestSearchMemoryIsHeldWhileSearchesRun(t *testing.T) {
	const bound = 64 << 20
	before := debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	first := holdSearchMemory(bound)
	limit := debug.SetMemoryLimit(-1)
	if held := heldMemory(); limit == math.MaxInt64 || limit < held || limit > held+bound {
		t.Fatalf("limit %d while the process holds %d: want it held within the bound above that", limit, held)
	}
	second := holdSearchMemory(bound)
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("a second search moved the limit from %d to %d", limit, got)
	}
	first()
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Fatalf("the limit was lifted (%d) while a search still runs", got)
	}
	second()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("after the last search the limit is %d, want %d as before", got, before)
	}
}
