package explore

import (
	"context"
	"slices"
	"testing"
)

// A timed question that the search without time was asked first (Bakery) and that a
// cancel or the time limit stopped there: the search with time would meet the same
// deadline at once, so the result is the untimed search's, bounded, and says so.
// Before, the timed search was started anyway and reported its few states instead.
func TestUntimedStoppedByTheClockIsReported(t *testing.T) {
	sc := load(t, "bakery-3.json")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Explore(ctx, sc, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != ResultBounded || res.Bound != BoundCancelled || res.Timed ||
		!slices.Contains(res.Reduction, ReductionUntimedStopped) || res.States == 0 {
		t.Fatalf("%s (%s), timed %v, %d states, reductions %v; want the untimed search, cancelled",
			res.Result, res.Bound, res.Timed, res.States, res.Reduction)
	}
}
