package bakery

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// run drives one process through a random run of its protocol, as the network could:
// the answers it gets are to reads it sent and has no answer to yet (one per process
// and variable at a time), with any value; the poll fires only when armed; it leaves
// the CS only when in it; anyone may read its variables at any time.
type run struct {
	rng     *rand.Rand
	f       *simtest.Fixture
	self    int
	reads   []sim.Message // reads sent, not answered yet
	armed   bool          // the poll timer is armed
	entered bool          // in the CS
}

func newRun(t *testing.T, rng *rand.Rand, self int) *run {
	r := &run{rng: rng, self: self,
		f: simtest.Start(t, Spec(), self, &sim.Setup{IDs: unitIDs, MaxDelay: 3})}
	r.step(sim.Input{Kind: sim.Request})
	return r
}

// step gives the process one input and notes what it sent and armed.
func (r *run) step(in sim.Input) {
	if in.Kind == sim.Timer {
		r.armed = false
	}
	r.f.Step(in)
	for _, m := range r.f.Ctx.Sent() {
		if m.Type == MsgReadNumber || m.Type == MsgReadChoosing {
			r.reads = append(r.reads, m)
		}
	}
	for _, e := range r.f.Ctx.Effects() {
		switch e.Kind {
		case sim.SetTimer:
			r.armed = true
		case sim.EnterCS:
			r.entered = true
		case sim.ExitCS:
			r.entered = false
		}
	}
}

// answer takes the k-th read still unanswered and returns an answer to it.
func (r *run) answer(k int) sim.Message {
	rd := r.reads[k]
	r.reads = slices.Delete(r.reads, k, k+1)
	if rd.Type == MsgReadChoosing {
		return sim.Message{Type: MsgChoosing, From: rd.To, To: r.self, Arg: r.rng.IntN(2)}
	}
	return sim.Message{Type: MsgNumber, From: rd.To, To: r.self, Arg: r.rng.IntN(4)}
}

// read is a read of one of the process's variables by another process.
func (r *run) read() sim.Message {
	typ := MsgReadNumber
	if r.rng.IntN(2) == 0 {
		typ = MsgReadChoosing
	}
	return sim.Message{Type: typ, From: (r.self + 1 + r.rng.IntN(len(unitIDs)-1)) % len(unitIDs), To: r.self}
}

// other is any input that may come next, but an answer from the sender of first
// (whose one read is answered by first).
func (r *run) other(first sim.Message) sim.Input {
	var ins []sim.Input
	for k, rd := range r.reads {
		if rd.To != first.From || (first.Type != MsgNumber && first.Type != MsgChoosing) {
			ins = append(ins, sim.Input{Kind: sim.Deliver, Msg: r.peek(k)})
		}
	}
	if r.armed {
		ins = append(ins, sim.Input{Kind: sim.Timer, Timer: TimerPoll})
	}
	if r.entered {
		ins = append(ins, sim.Input{Kind: sim.Release})
	}
	ins = append(ins, sim.Input{Kind: sim.Deliver, Msg: r.read()})
	return ins[r.rng.IntN(len(ins))]
}

// peek is an answer to the k-th read, leaving it unanswered.
func (r *run) peek(k int) sim.Message {
	saved := slices.Clone(r.reads)
	m := r.answer(k)
	r.reads = saved
	return m
}

// The deliveries the bakery declares commuting (a read of choosing outside the
// doorway, a doorway number but the last, an answer in the bakery that does not say
// wait and is not the last to pass) give the same in either order with every other
// input that may come: the answer to another read, the poll firing, leaving the CS,
// a read by anyone. States come from random runs of one process from its request.
func TestDeclaredDeliveriesCommute(t *testing.T) {
	simtest.DeliveriesCommute(t, Spec(), 6000, func(rng *rand.Rand, trial int) simtest.CommuteCase {
		r := newRun(t, rng, trial%len(unitIDs))
		for range rng.IntN(12) {
			switch c := rng.IntN(5); {
			case c < 3 && len(r.reads) > 0:
				r.step(sim.Input{Kind: sim.Deliver, Msg: r.answer(rng.IntN(len(r.reads)))})
			case c == 3 && r.armed:
				r.step(sim.Input{Kind: sim.Timer, Timer: TimerPoll})
			case r.entered:
				r.step(sim.Input{Kind: sim.Release})
			default:
				r.step(sim.Input{Kind: sim.Deliver, Msg: r.read()})
			}
		}
		first := r.read()
		if len(r.reads) > 0 && rng.IntN(4) > 0 {
			first = r.answer(rng.IntN(len(r.reads)))
		}
		return simtest.CommuteCase{F: r.f, Deliver: first, Other: r.other(first), Quiet: sim.Quiet{Horizon: -1}}
	})
}

// Each kind of delivery the declaration covers comes up in those runs, and the ones
// it leaves out are left out: a number read in the bakery (the owner may enter and
// leave first), an answer that says wait (it arms the poll).
func TestCommutesDeclaration(t *testing.T) {
	bakeryAt := func(t *testing.T) *fixture {
		f := newFixture(t, iP3)
		f.Step(sim.Input{Kind: sim.Request})
		f.deliver(MsgNumber, iP9, 0)
		f.deliver(MsgNumber, iP1, 2)
		f.deliver(MsgNumber, iP7, 0) // ticket 3, every check reading choosing
		return f
	}
	tests := []struct {
		name string
		at   func(t *testing.T) *fixture
		msg  sim.Message
		want bool
	}{
		{"doorway number, not the last", func(t *testing.T) *fixture {
			f := newFixture(t, iP3)
			f.Step(sim.Input{Kind: sim.Request})
			return f
		}, sim.Message{Type: MsgNumber, From: iP9, Arg: 2}, true},
		{"doorway number, the last", func(t *testing.T) *fixture {
			f := newFixture(t, iP3)
			f.Step(sim.Input{Kind: sim.Request})
			f.deliver(MsgNumber, iP9, 0)
			f.deliver(MsgNumber, iP1, 0)
			return f
		}, sim.Message{Type: MsgNumber, From: iP7, Arg: 2}, false},
		{"choosing false in the bakery", bakeryAt, sim.Message{Type: MsgChoosing, From: iP9, Arg: 0}, true},
		{"choosing true in the bakery (wait)", bakeryAt, sim.Message{Type: MsgChoosing, From: iP9, Arg: 1}, false},
		{"read of choosing in the bakery", bakeryAt, sim.Message{Type: MsgReadChoosing, From: iP9}, true},
		{"read of number in the bakery", bakeryAt, sim.Message{Type: MsgReadNumber, From: iP9}, false},
		{"read of choosing in the doorway", func(t *testing.T) *fixture {
			f := newFixture(t, iP3)
			f.Step(sim.Input{Kind: sim.Request})
			return f
		}, sim.Message{Type: MsgReadChoosing, From: iP9}, false},
		{"number that passes, not the last", func(t *testing.T) *fixture {
			f := bakeryAt(t)
			f.deliver(MsgChoosing, iP9, 0)
			return f
		}, sim.Message{Type: MsgNumber, From: iP9, Arg: 0}, true},
		{"number that says wait", func(t *testing.T) *fixture {
			f := bakeryAt(t)
			f.deliver(MsgChoosing, iP9, 0)
			return f
		}, sim.Message{Type: MsgNumber, From: iP9, Arg: 1}, false},
		{"number that passes, the last", func(t *testing.T) *fixture {
			f := bakeryAt(t)
			for _, j := range []int{iP9, iP1, iP7} {
				f.deliver(MsgChoosing, j, 0)
			}
			f.deliver(MsgNumber, iP9, 0)
			f.deliver(MsgNumber, iP1, 0)
			return f
		}, sim.Message{Type: MsgNumber, From: iP7, Arg: 0}, false},
		{"an answer not awaited", bakeryAt, sim.Message{Type: MsgNumber, From: iP9, Arg: 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.at(t)
			m := tt.msg
			m.To = iP3
			if got := commutes(f.Node, &m, sim.Quiet{Horizon: -1}); got != tt.want {
				t.Errorf("commutes(%s, %+v) = %v, want %v", f.State(), m, got, tt.want)
			}
		})
	}
}

// A released process answers every read with no ticket and not choosing and ignores
// any answer: inert once no request is to come, before its request and after its
// turn; on its way it is not.
func TestInertWhenReleased(t *testing.T) {
	f := newFixture(t, iP3)
	check := func(want bool) {
		t.Helper()
		if got := inert(f.Node); got != want {
			t.Errorf("%s: inert %v, want %v", f.State(), got, want)
		}
	}
	check(true)
	f.Step(sim.Input{Kind: sim.Request})
	check(false) // doorway
	for _, j := range []int{iP9, iP1, iP7} {
		f.deliver(MsgNumber, j, 0)
	}
	check(false) // bakery
	for _, j := range []int{iP9, iP1, iP7} {
		f.deliver(MsgChoosing, j, 0)
		f.deliver(MsgNumber, j, 0)
	}
	check(false) // in the CS
	f.Step(sim.Input{Kind: sim.Release})
	check(true)
}
