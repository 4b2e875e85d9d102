package suzukikasami

import (
	"math/rand/v2"
	"testing"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// What the explorer's reductions rest on: the canonical forms commute with every step
// that can still come once nobody asks again. Node states come from random runs of
// one process: requests, stale REQUESTs, tokens with random LN and queues. The one
// input left out is a TOKEN to a process that has not asked: once quiet, nobody
// sends the token to a process whose request is not outstanding.
func TestCanonicalFormsCommuteWithEveryQuietStep(t *testing.T) {
	simtest.CanonCommutes(t, Spec(), 3000, func(rng *rand.Rand, trial int) simtest.QuietCase {
		f := newFixture(t, trial%4, "")
		self := f.Ctx.Self()
		randomInput := func(requests bool) sim.Input {
			from := (self + 1 + rng.IntN(3)) % 4
			switch k := rng.IntN(6); {
			case k == 0 && requests:
				return sim.Input{Kind: sim.Request}
			case k == 1:
				return sim.Input{Kind: sim.Release}
			case k == 2 && (requests || f.Node.(*node).state == cs.Requested):
				ln := make([]int, 4)
				for j := range ln {
					ln[j] = rng.IntN(3)
				}
				q := rng.Perm(4)[:rng.IntN(3)]
				for j := range q {
					q[j] = unitIDs[q[j]]
				}
				return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: MsgToken, From: from, To: self, Vec: ln, Queue: q}}
			default:
				return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: MsgRequest, From: from, To: self, Arg: 1 + rng.IntN(3)}}
			}
		}
		for range rng.IntN(10) {
			f.Step(randomInput(true))
		}
		return simtest.QuietCase{F: f.Fixture, In: randomInput(false)}
	})
}

// Only a released process without the token is idle: inert, its request numbers
// forgotten once quiet and kept before.
func TestIdleProcessesAreInert(t *testing.T) {
	idle := &node{state: cs.Released, rn: []int{1, 2, 0, 1}}
	if !inert(idle) || inert(&node{state: cs.Released, token: true}) || inert(&node{state: cs.Requested}) {
		t.Error("inert: only a released process without the token")
	}
	if c := canonNode(idle, true).(*node); c.rn[0]+c.rn[1]+c.rn[3] != 0 || idle.rn[1] != 2 {
		t.Errorf("idle, quiet: %v (the original's %v); want the numbers forgotten in a copy", c.rn, idle.rn)
	}
	if c := canonNode(idle, false).(*node); c.rn[1] != 2 {
		t.Error("idle, not quiet: the numbers forgotten")
	}
}
