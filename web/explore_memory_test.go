package web

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
)

// The explorer's memory bound is the server's, as stated: two searches at once, each
// big enough to reach it, stop on their own accounting at their part of it, and the
// heap grows by about the bound, not twice it (issue 15: a search peaked at 548 MB
// against 256 MiB).
func TestExplorerMemoryBoundHoldsForSearchesAtOnce(t *testing.T) {
	const bound = 64 << 20
	_, ts := newTestServer(t, Options{Explore: ExploreLimits{AtOnce: 2, MaxMemory: bound, MaxStates: 1 << 40, Timeout: 5 * time.Minute}})
	ids := []string{openSession(t, ts, "/play/lamport?n=4&loss=0.1"), openSession(t, ts, "/play/bakery?n=4&loss=0.1")}

	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var peak uint64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
		}
	}()
	results := make(chan *explore.Result, len(ids))
	for _, id := range ids {
		go func() {
			_, lines, _ := postExplore(t, ts, id)
			var res *explore.Result
			for _, l := range lines {
				if l.Type == "result" {
					res = l.Result
				}
			}
			results <- res
		}()
	}
	for range ids {
		res := <-results
		if res == nil || res.Bound != explore.BoundMemory {
			t.Fatalf("a search was not stopped by the memory bound: %+v", res)
		}
		if res.Memory > bound/2+bound/16 {
			t.Errorf("a search held %d MiB by its own accounting; its part of the bound is %d MiB", res.Memory>>20, bound/2>>20)
		}
	}
	close(stop)
	<-sampled
	if grew := int64(peak) - int64(base); grew > bound*3/2 {
		t.Fatalf("the heap grew by %d MiB during two searches under a %d MiB bound", grew>>20, bound>>20)
	} else {
		t.Logf("heap grew by %d MiB under a %d MiB bound", grew>>20, bound>>20)
	}
}
