package algorithms

import (
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Token algorithms tell the view who holds the token: never two processes at once,
// and somebody holds it whenever a process is in the CS.
func TestAtMostOneTokenHolderAtEveryStep(t *testing.T) {
	tokenAlgorithms := 0
	for _, spec := range All() {
		ids := simtest.IDs(5)
		if _, ok := spec.New(0, &sim.Setup{IDs: ids, MaxDelay: 3}).(sim.TokenHolder); !ok {
			continue
		}
		tokenAlgorithms++
		for seed := uint64(1); seed <= 30; seed++ {
			cfg := sim.Config{Spec: spec, IDs: ids, Seed: seed, Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true},
				CS: 2, Until: 300, Actions: simtest.RandomActions(seed, 5, sim.Mutex, simtest.Workload{Requests: 12, Span: 100})}
			s, err := sim.New(cfg, nil)
			if err != nil {
				t.Fatalf("%s seed %d: %v", spec.Slug, seed, err)
			}
			held := 0
			for {
				snap := s.Snapshot()
				holders, inCS := 0, 0
				for _, n := range snap.Nodes {
					if n.Token {
						holders++
					}
					if n.InCS {
						inCS++
						if !n.Token {
							t.Fatalf("%s seed %d step %d: P%d is in the CS without the token", spec.Slug, seed, snap.Step, n.ID)
						}
					}
				}
				if holders > 1 {
					t.Fatalf("%s seed %d step %d: %d processes hold the token", spec.Slug, seed, snap.Step, holders)
				}
				held += holders
				ok, err := s.Step()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
			}
			if held == 0 {
				t.Fatalf("%s seed %d: nobody ever held the token", spec.Slug, seed)
			}
		}
	}
	if tokenAlgorithms < 4 {
		t.Fatalf("only %d algorithms say who holds the token; want ricart-agrawala-token, token-ring, suzuki-kasami, raymond", tokenAlgorithms)
	}
}
