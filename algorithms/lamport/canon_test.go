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

// Lamport's deliveries commute over FIFO channels once the clock is at the horizon,
// with every other input that can come first then: the head of another sender's
// channel, or the release. The states are a FIFO run's (random workloads of several
// requests at random times, so timestamps differ), taken once every request is made,
// with the heads of the channels into each process and the horizon the explorer
// would compute (the largest request timestamp held, or one above).
func TestDeclaredDeliveriesCommute(t *testing.T) {
	var cases []simtest.CommuteCase
	for seed := uint64(1); len(cases) < 4000 && seed < 400; seed++ {
		acts := simtest.RandomActions(seed, 3, sim.Mutex, simtest.Workload{Requests: 2 + int(seed%5), Span: 8})
		last := 0
		for _, a := range acts {
			last = max(last, a.At)
		}
		cfg := config(seed, ids3, true, acts)
		cfg.Pending = 100_000
		s, err := sim.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		for s.HasNext() {
			if _, err := s.Step(); err != nil {
				t.Fatal(err)
			}
			if s.Now() <= last {
				continue // requests still to come: not quiet
			}
			cases = append(cases, quietCases(t, s, int(seed))...)
		}
	}
	simtest.DeliveriesCommute(t, Spec(), len(cases), func(_ *rand.Rand, trial int) simtest.CommuteCase { return cases[trial] })
}

// quietCases are the pairs of inputs each process of s may take next: the heads of
// two channels into it, or one and its release.
func quietCases(t *testing.T, s *sim.Sim, seed int) []simtest.CommuteCase {
	h := 0
	for i := range s.IDs() {
		if s.Alive(i) {
			h = max(h, stamp(s.Node(i)))
		}
	}
	heads := map[[2]int]sim.Message{}
	for _, f := range s.InFlight() {
		h = max(h, msgStamp(&f.Msg))
		if _, ok := heads[[2]int{f.Msg.From, f.Msg.To}]; !ok {
			heads[[2]int{f.Msg.From, f.Msg.To}] = f.Msg
		}
	}
	h += seed % 2
	var out []simtest.CommuteCase
	for to := range s.IDs() {
		var in []sim.Message
		for from := range s.IDs() {
			if m, ok := heads[[2]int{from, to}]; ok {
				in = append(in, m)
			}
		}
		for k, m := range in {
			others := []sim.Input{{Kind: sim.Release}}
			for j, o := range in {
				if j != k {
					others = append(others, sim.Input{Kind: sim.Deliver, Msg: o})
				}
			}
			for _, other := range others {
				f := simtest.NewFixture(t, Spec(), to, &sim.Setup{IDs: ids3})
				f.Node = s.Node(to).Clone()
				out = append(out, simtest.CommuteCase{F: f, Deliver: m, Other: other, Quiet: sim.Quiet{FIFO: true, Horizon: h}})
			}
		}
	}
	return out
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

// msgStamp is the stamp the algorithm declares a message holds (sim.Horizon.Msg).
var msgStamp = Spec().Canon.Horizon.Msg
