package web

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
)

// The explorer's memory bound is the server's, as stated: two searches, each big
// enough to reach it, stop on their own accounting within their part of it, and the
// memory the process holds grows by no more than the bound, whether they run at once
// or one after the other in one slot (without the bound, searches peaked at 548 MB against
// 256 MiB; with a search's accounting allowed its whole part, the process grew by up to
// 1.25 times the bound).
func TestExplorerMemoryBoundHolds(t *testing.T) {
	for _, c := range []struct {
		name   string
		atOnce int // 1: the two searches run one after the other in one slot
	}{{"two at once", 2}, {"one after another", 1}} {
		t.Run(c.name, func(t *testing.T) { testExplorerMemoryBound(t, c.atOnce) })
	}
}

func testExplorerMemoryBound(t *testing.T, atOnce int) {
	const bound = 64 << 20
	_, ts := newTestServer(t, Options{Explore: ExploreLimits{AtOnce: atOnce, MaxMemory: bound, MaxStates: 1 << 40, Timeout: 5 * time.Minute, AsAsked: true}})
	ids := []string{openSession(t, ts, "/play/bakery?n=5"), openSession(t, ts, "/play/bakery?n=4&loss=0.1")}

	runtime.GC()
	// What the process holds from the OS (as RSS sees it): everything mapped but
	// what was given back.
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	held := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() - sample[1].Value.Uint64() }
	base := held()
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
			peak = max(peak, held())
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
		if part := int64(bound / atOnce); res.Memory > part {
			t.Errorf("a search held %d MiB by its own accounting; its part of the bound is %d MiB", res.Memory>>20, part>>20)
		}
	}
	close(stop)
	<-sampled
	if grew := int64(peak) - int64(base); grew > bound {
		t.Fatalf("the memory held grew by %d MiB during two searches under a %d MiB bound", grew>>20, bound>>20)
	} else {
		t.Logf("the memory held grew by %d MiB under a %d MiB bound", grew>>20, bound>>20)
	}
}
