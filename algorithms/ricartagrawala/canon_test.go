package ricartagrawala

import (
	"math/rand/v2"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// The deliveries Ricart-Agrawala declares commuting (a REPLY while waiting, a REQUEST
// it defers whatever comes first) give the same in either order with every other
// input that can still come once nobody asks again: a REQUEST or REPLY from anyone
// (stale ones too, as channels without FIFO deliver them), or leaving the CS. States
// come from random runs of one process, its request among them. A REPLY the process
// already counted is not sent twice on a reliable network: the generator sends each
// sender's REPLY once.
func TestDeclaredDeliveriesCommute(t *testing.T) {
	simtest.DeliveriesCommute(t, Spec(), 4000, func(rng *rand.Rand, trial int) simtest.CommuteCase {
		const n = 4
		ids := []int{30, 10, 40, 20}
		f := simtest.Start(t, Spec(), trial%n, &sim.Setup{IDs: ids})
		self := f.Ctx.Self()
		replied := map[int]bool{}
		message := func() sim.Message {
			from := (self + 1 + rng.IntN(n-1)) % n
			if rng.IntN(2) == 0 && !replied[from] {
				replied[from] = true
				return sim.Message{Type: MsgReply, From: from, To: self, TS: 1 + rng.IntN(9)}
			}
			return sim.Message{Type: MsgRequest, From: from, To: self, TS: 1 + rng.IntN(4)}
		}
		f.Step(sim.Input{Kind: sim.Request})
		for range rng.IntN(5) {
			f.Deliver(message())
		}
		first := message()
		other := sim.Input{Kind: sim.Release}
		if rng.IntN(3) > 0 {
			other = sim.Input{Kind: sim.Deliver, Msg: message()}
		}
		return simtest.CommuteCase{F: f, Deliver: first, Other: other, Quiet: sim.Quiet{Horizon: -1}}
	})
}
