package explore

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The reductions must not change any answer: for every configuration of testdata and
// a generated set of small ones (every algorithm, 2 and 3 processes, FIFO or not, with
// and without a crash), the reduced search and the full one agree on the verdict, the
// property, a counterexample's length (it is exactly as short) and the entry bound,
// the reduced search never stores more states, and its counterexample replays in the
// kernel.

// soundnessBound keeps every search of the harness to a fraction of a second; a
// configuration where either search hits it proves nothing and is skipped (and
// counted, so that the harness cannot silently shrink to nothing).
const soundnessBound = 150_000

type soundCase struct {
	name string
	sc   *scenarios.Scenario
}

func soundnessCases(t *testing.T) []soundCase {
	t.Helper()
	var out []soundCase
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		out = append(out, soundCase{name: strings.TrimSuffix(name, ".json"), sc: load(t, name)})
	}
	for _, spec := range algorithms.All() {
		for _, n := range []int{2, 3} {
			for _, fifo := range []bool{false, true} {
				for _, crash := range []bool{false, true} {
					events := ""
					if crash {
						// The last process may crash at any moment after the start.
						events = fmt.Sprintf(`,"events":[{"at":1,"do":"crash","node":%d}]`, spec.Defaults.FirstID+n-1)
					}
					doc := fmt.Sprintf(`{"version":1,"algorithm":%q,"nodes":%d,"network":{"delay":[1,2],"fifo":%v}%s}`, spec.Slug, n, fifo, events)
					sc, err := scenarios.Parse([]byte(doc))
					if err != nil {
						t.Fatalf("%s: %v", doc, err)
					}
					if sc, _, err = DefaultWorkload(sc); err != nil {
						t.Fatal(err)
					}
					out = append(out, soundCase{name: fmt.Sprintf("%s/n=%d/fifo=%v/crash=%v", spec.Slug, n, fifo, crash), sc: sc})
				}
			}
		}
	}
	return out
}

func TestReductionIsSound(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	compared, reduced := 0, 0
	for _, c := range soundnessCases(t) {
		t.Run(c.name, func(t *testing.T) {
			full := explore(t, c.sc, Options{NoReduce: true, MaxStates: soundnessBound})
			red := explore(t, c.sc, Options{MaxStates: soundnessBound})
			if full.Result == ResultBounded || red.Result == ResultBounded {
				if red.Result == ResultBounded && full.Result != ResultBounded {
					t.Errorf("the reduced search is bounded (%d states) where the full one is not (%d)", red.States, full.States)
				}
				t.Skipf("bounded: full %d states, reduced %d", full.States, red.States)
			}
			compared++
			if len(red.Reduction) > 0 {
				reduced++
			}
			if red.Result != full.Result || red.Property != full.Property {
				t.Fatalf("reduced: %s %s (%s); full: %s %s (%s)", red.Result, red.Property, red.Message, full.Result, full.Property, full.Message)
			}
			// A violation's depth is its counterexample's length: the shortest distance
			// to a bad state, which merging equivalent states keeps. When every property
			// holds, depth is the longest shortest run, and a merged state is as deep as
			// the shallowest state it stands for: it may only shrink. The entry bound is
			// the longest run while a process waits: paths map both ways, so it stays.
			// Partial-order reduction keeps neither lengths: it drops runs, so the
			// deepest state may be found later, and the entry bound is not reported.
			por := slices.ContainsFunc(red.Reduction, func(r string) bool { return strings.HasPrefix(r, "partial-order") })
			if (red.Depth > full.Depth && !por) || (red.Result == ResultViolation && red.Depth != full.Depth) {
				t.Errorf("reduced depth %d, full %d", red.Depth, full.Depth)
			}
			if por && red.EntryBound != 0 {
				t.Errorf("an entry bound (%d) from a search with partial-order reduction", red.EntryBound)
			} else if !por && red.EntryBound != full.EntryBound {
				t.Errorf("reduced entry bound %d, full %d", red.EntryBound, full.EntryBound)
			}
			if red.States > full.States {
				t.Errorf("reduced %d states, full %d", red.States, full.States)
			}
			if red.Result == ResultViolation {
				checkReplays(t, red, kernelProperty(red))
				if len(red.Counterexample.Path) != len(full.Counterexample.Path) {
					t.Errorf("reduced counterexample of %d steps, full %d", len(red.Counterexample.Path), len(full.Counterexample.Path))
				}
			}
			t.Logf("%s %s: full %d states, reduced %d (%v)", red.Result, red.Property, full.States, red.States, red.Reduction)
		})
	}
	t.Logf("%d configurations compared, %d of them reduced", compared, reduced)
	if compared < 60 || reduced < 8 {
		t.Errorf("only %d configurations compared (%d reduced): the harness has shrunk", compared, reduced)
	}
}

// kernelProperty is what the kernel reports for a counterexample: a lasso shows as a
// request pending too long.
func kernelProperty(res *Result) string {
	if res.Counterexample.Scenario.Monitors != nil && res.Property != sim.PropMutex && res.Property != sim.PropLeader {
		return sim.PropPending
	}
	return res.Property
}
