package scenarios

import (
	"fmt"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

// A scenario that gives no ids gets its algorithm's default ids (sim.Defaults.IDs):
// 0..N-1, except where the notes number from 1 and a rule depends on it (Maekawa's V_i).
// A version 1 file keeps the ids it was written with: 0..N-1 for every algorithm.
func TestDefaultIDsComeFromTheAlgorithm(t *testing.T) {
	for version, want := range map[int]map[string]int{2: {"maekawa": 1}, 1: {}} { // first id; 0 for the others
		testDefaultIDs(t, version, want)
	}
}

func testDefaultIDs(t *testing.T, version int, want map[string]int) {
	for _, spec := range algorithms.All() {
		for _, n := range []int{3, 7} {
			sc, err := Parse(fmt.Appendf(nil, `{"version":%d,"algorithm":%q,"nodes":%d}`, version, spec.Slug, n))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			first := want[spec.Slug]
			ids := make([]int, n)
			for i := range ids {
				ids[i] = first + i
			}
			if !slices.Equal(cfg.IDs, ids) {
				t.Errorf("version %d, %s N=%d: ids %v, want %v", version, spec.Slug, n, cfg.IDs, ids)
			}
		}
	}
}
