package lamport

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// What the explorer's reductions rest on: the canonical forms commute with every step
// once nobody asks again. Node states come from random runs of one process with
// requests, late messages and stale timestamps, as non-FIFO channels produce them.
func TestCanonicalFormsCommuteWithEveryQuietStep(t *testing.T) {
	simtest.CanonCommutes(t, Spec(), 3000, func(rng *rand.Rand, trial int) simtest.QuietCase {
		f := newFixture(t, trial%3, ids3)
		self := f.Ctx.Self()
		randomInput := func(requests bool) sim.Input {
			from := (self + 1 + rng.IntN(2)) % 3
			switch k := rng.IntN(5); {
			case k == 0 && requests:
				return sim.Input{Kind: sim.Request}
			case k == 1:
				return sim.Input{Kind: sim.Release}
			default:
				typ := []string{MsgRequest, MsgReply, MsgRelease}[rng.IntN(3)]
				return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: typ, From: from, To: self, TS: 1 + rng.IntN(12)}}
			}
		}
		for range rng.IntN(10) {
			f.Step(randomInput(true))
		}
		return simtest.QuietCase{F: f.Fixture, In: randomInput(false)}
	})
}

// The horizon's figures on one state: the largest request timestamp held (own and
// queued; a REQUEST's, not a REPLY's), the clock capped there and what was heard one
// above; a released process forgets its queue and what it heard.
func TestHorizonCapsAboveTheLargestRequest(t *testing.T) {
	n := &node{self: 0, ids: ids3, state: "REQUESTED", clock: 9, ts: 2,
		queue: []entry{{2, 0}, {4, 2}}, latest: []int{0, 7, 3}}
	if got := stamp(n); got != 4 {
		t.Errorf("stamp %d, want 4 (the queued request of P30)", got)
	}
	if got := msgStamp(&sim.Message{Type: MsgRequest, TS: 5}); got != 5 {
		t.Errorf("a REQUEST's stamp %d, want 5", got)
	}
	if got := msgStamp(&sim.Message{Type: MsgReply, TS: 5}); got != 0 {
		t.Errorf("a REPLY's stamp %d, want 0", got)
	}
	c := capNode(n, 4).(*node)
	if c.clock != 4 || !slices.Equal(c.latest, []int{0, 5, 3}) || n.clock != 9 {
		t.Errorf("capped at 4: clock %d, latest %v (the original's clock now %d); want 4, [0 5 3], 9", c.clock, c.latest, n.clock)
	}
	m := sim.Message{Type: MsgRelease, TS: 8}
	if capMsg(&m, 4); m.TS != 5 {
		t.Errorf("a RELEASE at 8 capped at 4: %d, want 5", m.TS)
	}
	r := &node{self: 0, ids: ids3, state: "RELEASED", clock: 3, queue: []entry{{2, 1}}, latest: []int{0, 3, 2}}
	if c := canonNode(r, true).(*node); len(c.queue) != 0 || slices.ContainsFunc(c.latest, func(v int) bool { return v != 0 }) || c.clock != 3 {
		t.Errorf("released, quiet: %+v; want the queue and latest forgotten, the clock kept", c)
	}
	if c := canonNode(r, false).(*node); len(c.queue) != 1 {
		t.Errorf("released, not quiet: the queue forgotten")
	}
}
