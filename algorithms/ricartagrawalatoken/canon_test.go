package ricartagrawalatoken

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// What the explorer's reductions rest on: the canonical forms commute with every step
// that can still come once nobody asks again. Node states come from random runs of
// one process: requests, stale REQUESTs, tokens with random vectors. The one input
// left out is a TOKEN to a process that neither waits nor holds it: once quiet,
// nobody sends the token to a process that did not ask.
func TestCanonicalFormsCommuteWithEveryQuietStep(t *testing.T) {
	simtest.CanonCommutes(t, Spec(), 3000, func(rng *rand.Rand, trial int) simtest.QuietCase {
		f := newFixture(t, trial%5, ids5[rng.IntN(5)])
		self := f.Ctx.Self()
		randomInput := func(requests bool) sim.Input {
			from := (self + 1 + rng.IntN(4)) % 5
			switch k := rng.IntN(6); {
			case k == 0 && requests:
				return sim.Input{Kind: sim.Request}
			case k == 1:
				return sim.Input{Kind: sim.Release}
			case k == 2 && (requests || f.n.waiting):
				vec := make([]int, 5)
				for j := range vec {
					vec[j] = rng.IntN(8)
				}
				return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: MsgToken, From: from, To: self, TS: rng.IntN(12), Vec: vec}}
			default:
				return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: MsgRequest, From: from, To: self, TS: 1 + rng.IntN(8)}}
			}
		}
		for range rng.IntN(10) {
			f.Step(randomInput(true))
		}
		f.n = f.Node.(*node)
		return simtest.QuietCase{F: f.Fixture, In: randomInput(false)}
	})
}

// The horizon's figures on one state, and who is idle: the largest request timestamp
// held (a REQUEST's, not the token's clocks), the clock and the token's entries capped
// there; an idle process forgets its requests and its clock.
func TestHorizonCapsTheTokensClocks(t *testing.T) {
	n := &node{self: 0, ids: ids5, state: TokenPresent, clock: 9, request: []int{0, 3, 1, 0, 2}, token: []int{7, 2, 0, 1, 5}}
	if got := stamp(n); got != 3 {
		t.Errorf("stamp %d, want 3", got)
	}
	if got := msgStamp(&sim.Message{Type: MsgToken, TS: 9}); got != 0 {
		t.Errorf("a TOKEN's stamp %d, want 0", got)
	}
	c := capNode(n, 3).(*node)
	if c.clock != 3 || !slices.Equal(c.token, []int{3, 2, 0, 1, 3}) || n.clock != 9 {
		t.Errorf("capped at 3: clock %d, token %v (the original's clock now %d)", c.clock, c.token, n.clock)
	}
	m := sim.Message{Type: MsgToken, TS: 9, Vec: []int{7, 2, 0}}
	if capMsg(&m, 3); m.TS != 3 || !slices.Equal(m.Vec, []int{3, 2, 0}) {
		t.Errorf("a TOKEN capped at 3: %d %v", m.TS, m.Vec)
	}
	idle := &node{self: 1, ids: ids5, state: NoToken, clock: 4, request: []int{1, 0, 2, 0, 0}}
	if !inert(idle) || inert(&node{state: NoToken, waiting: true}) || inert(n) {
		t.Error("inert: only a process that neither holds the token nor waits")
	}
	if c := canonNode(idle, true).(*node); c.clock != 0 || slices.Max(c.request) != 0 {
		t.Errorf("idle, quiet: %+v; want the requests and the clock forgotten", c)
	}
	if c := canonNode(idle, false).(*node); c.clock != 4 {
		t.Error("idle, not quiet: the clock forgotten")
	}
}

// msgStamp is the stamp the algorithm declares a message holds (sim.Horizon.Msg).
var msgStamp = Spec().Canon.Horizon.Msg
