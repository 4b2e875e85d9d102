package scenarios

import (
	"fmt"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

// A scenario that gives no ids gets its algorithm's default ids (sim.Defaults.IDs):
// 0..N-1, except where the notes number from 1 and a rule depends on it (Maekawa's V_i).
func TestDefaultIDsComeFromTheAlgorithm(t *testing.T) {
	want := map[string]int{"maekawa": 1} // first id; 0 for the others
	for _, spec := range algorithms.All() {
		for _, n := range []int{3, 7} {
			sc, err := Parse(fmt.Appendf(nil, `{"version":1,"algorithm":%q,"nodes":%d}`, spec.Slug, n))
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
				t.Errorf("%s N=%d: ids %v, want %v", spec.Slug, n, cfg.IDs, ids)
			}
		}
	}
}
