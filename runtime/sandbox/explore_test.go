package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// A search that reaches its time limit (its context's deadline) is bounded by time,
// not cancelled: the page shows a verdict for it, while a cancelled one shows none.
// The worker here never answers, so the sandbox stops it past its grace.
func TestPool_ExploreAtItsTimeLimitIsBoundedByTime(t *testing.T) {
	p := fakeWorker(`exec sleep 600`, time.Minute)
	defer p.Close()
	sc, ok := scenarios.Lookup("challenge-ra-tie-break")
	if !ok {
		t.Fatal("the curated library has no challenge-ra-tie-break")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := p.Explore(ctx, sc, explore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Bound != explore.BoundTime {
		t.Fatalf("a search at its time limit: %+v, want bounded by %q", res, explore.BoundTime)
	}
}
