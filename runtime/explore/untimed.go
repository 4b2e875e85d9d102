package explore

import (
	"context"
	"errors"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// Answering a timed question without time. An algorithm that sets timers is searched
// with time: every message arrives within its window, a timer fires when due. For an
// algorithm whose timers only pace retries (sim.Canon.Asynchronous: Bakery's poll)
// that multiplies the states by every arrival time of every message in flight, which
// the algorithm never observes (Bakery, 3 processes: past 50 million states, no end).
// The search without time is far smaller, and it answers the timed question whenever
// it proves every property:
//
//   - Every timed run is an untimed run. With the whole workload at time 0 (the
//     timed search then runs it first, in order, as the untimed one does at its start)
//     and a least delay of at least one, dropping the clocks from a timed state gives
//     an untimed state, and every timed step (a delivery, a timer, a release) is an
//     untimed step between the two; time passing is no step. So a broken mutual
//     exclusion, a deadlock (a quiescent state where someone waits: the same in both)
//     or two processes taking different leaders that the timed search can reach, the
//     untimed one reaches too.
//   - A process that waits for ever in a timed run waits along a cycle of timed states,
//     which maps to a closed walk through untimed states in which it waits: inside one
//     strongly connected component of those states. Time passes on that cycle (with a
//     least delay and every time-out of at least one unit, only finitely many steps
//     fit in one instant), so, the cycle repeating for ever, no message stays in flight
//     throughout it (it would arrive by the largest delay), no armed timer stays armed
//     without firing or being set again, no process stays in the CS (cs > 0: it leaves
//     when its time is up). A component in which something stays so throughout, and no
//     step inside it takes it (delivers or loses that message, fires, sets or cancels
//     that timer, lets that process leave), holds no such cycle: the untimed cycles it
//     has keep a message, a timer or a process in the CS waiting for ever, which time
//     forbids.
//
//   - With partial-order reduction (reduce.go) the components are those of the
//     reduced graph, and a cycle that time allows in the whole graph shows there
//     too. Every set of steps the reduction takes alone is persistent, invisible, and
//     made of deliveries of messages in flight. A run that time allows takes every
//     message in flight sooner or later, so from a state of the reduced graph it takes
//     one of that set's deliveries at some point, and every step it takes before that
//     one commutes with it: the delivery may be taken first. Repeated, this turns the
//     run into a run of the reduced graph with the same steps, none added, in an
//     order that only swaps commuting ones (the cycle proviso, a fully expanded
//     state on every cycle, leaves no step aside for ever). It keeps the visible
//     steps in order, so the process still waits for ever, and it ends every
//     message, timer and stay in the CS the first run ends: the component of the
//     reduced graph it stays in is one time allows, which the check finds.
//
// So when the untimed search finds no violation and every component of waiting states
// is of that kind, every property holds in the timed search too, and that is the
// answer (without an entry bound: a length the untimed graph does not keep). Anything
// else (a violation, a component that time does not rule out, a bound reached) proves
// nothing about the timed runs: the timed search is run, exactly as without the
// declaration.

// errUntimedInconclusive stops an untimed search that cannot answer the timed question.
var errUntimedInconclusive = errors.New("explore: the search without time proves nothing here")

// ReductionUntimed is the Reduction entry of a timed question answered without time.
const ReductionUntimed = "untimed (every property proved without time, which covers every timed run)"

// untimedApplies reports whether a timed question about cfg may be answered first
// without time: the algorithm declares it, the whole workload is at time 0, and a
// message takes at least one unit and may take more.
func untimedApplies(cfg sim.Config, opt *Options) bool {
	if opt.Time != TimeAuto || opt.NoReduce || cfg.Spec.Canon == nil || !cfg.Spec.Canon.Asynchronous {
		return false
	}
	if cfg.Network.DelayMin < 1 || cfg.Network.DelayMin == cfg.Network.DelayMax {
		// A fixed delay leaves no arrival times to multiply the timed states: the
		// timed search is then the small one (Bakery, 3 processes, delay 1: 422
		// states with time, 851 950 without).
		return false
	}
	for _, a := range cfg.Actions {
		if a.At != 0 && a.Do != sim.ActDeliver && a.Do != sim.ActFire && a.Do != sim.ActTell {
			return false
		}
	}
	return true
}

// timeless reports whether this search answers a timed question without time.
func (x *search) timeless() bool { return x.untimed && x.it.sawTimer.Load() }

// timeoutsPositive reports whether every timer the algorithm set fires at least one
// unit later: otherwise steps could follow each other for ever in one instant.
func (x *search) timeoutsPositive() bool { return !x.it.zeroTimeout.Load() }

// fairWaits checks the waiting states of a complete untimed search: it returns
// errUntimedInconclusive when some component of states in which a process waits is
// not ruled out by time (see above), nil when all are.
func (x *search) fairWaits(ctx context.Context) (outcome, error) {
	if !x.timeoutsPositive() {
		return outcome{}, errUntimedInconclusive
	}
	n := x.st.count
	pend := make([]uint16, n)
	s := newState(x.m)
	for k := 0; k < n; k++ {
		if err := x.load(k, s); err != nil {
			return outcome{}, err
		}
		for i := range s.nodes {
			if s.nodes[i].alive && s.nodes[i].pending {
				pend[k] |= 1 << i
			}
		}
	}
	comp := make([]uint32, n) // component number + 1 within the current process's states
	for i := 0; i < x.m.n; i++ {
		bit := uint16(1) << i
		var fair bool
		b := x.components(ctx, pend, bit, comp, func(members []uint32) bool {
			fair = x.timeAllows(members, comp)
			return fair
		})
		if b != "" {
			return outcome{bound: b}, nil
		}
		if fair {
			return outcome{}, errUntimedInconclusive
		}
	}
	return outcome{}, nil
}

// components finds the strongly connected components of the states whose pend has
// bit, with an iterative Tarjan, and calls visit with the members of each one that
// holds a cycle (more than one state, or a step back to itself), comp numbering them;
// it stops when visit returns true. It returns the bound that stopped it, if any.
func (x *search) components(ctx context.Context, pend []uint16, bit uint16, comp []uint32, visit func([]uint32) bool) string {
	n := x.st.count
	const unseen = ^uint32(0)
	index := make([]uint32, n)
	low := make([]uint32, n)
	for k := range index {
		index[k] = unseen
	}
	clear(comp)
	onStack := make([]bool, n)
	type frame struct {
		k  uint32
		it edgeIter
	}
	var stack, members []uint32
	var call []frame
	next, ncomp := uint32(0), uint32(0)
	work := 0
	for r := 0; r < n; r++ {
		if pend[r]&bit == 0 || index[r] != unseen {
			continue
		}
		index[r], low[r] = next, next
		next++
		stack = append(stack, uint32(r))
		onStack[r] = true
		call = append(call[:0], frame{k: uint32(r), it: x.st.succ(r)})
		for len(call) > 0 {
			if work++; work&0xffff == 0 {
				if b := x.limits(ctx); b != "" {
					return b
				}
			}
			top := &call[len(call)-1]
			if t, ok := x.st.next(&top.it); ok {
				switch {
				case pend[t]&bit == 0:
				case index[t] == unseen:
					index[t], low[t] = next, next
					next++
					stack = append(stack, t)
					onStack[t] = true
					call = append(call, frame{k: t, it: x.st.succ(int(t))})
				case onStack[t]:
					low[top.k] = min(low[top.k], index[t])
				}
				continue
			}
			k := top.k
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].k
				low[p] = min(low[p], low[k])
			}
			if low[k] != index[k] {
				continue
			}
			ncomp++
			members = members[:0]
			for {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[v] = false
				comp[v] = ncomp
				members = append(members, v)
				if v == k {
					break
				}
			}
			if (len(members) > 1 || x.selfLoop(k)) && visit(members) {
				return ""
			}
		}
	}
	return ""
}

func (x *search) selfLoop(k uint32) bool {
	it := x.st.succ(int(k))
	for t, ok := x.st.next(&it); ok; t, ok = x.st.next(&it) {
		if t == k {
			return true
		}
	}
	return false
}

// obligation is something time forces to end: a message in flight (by its interned
// number), an armed timer (node, name) or a process in the CS.
type obligation struct {
	kind uint8 // obMsg, obTimer, obCS
	a, b uint32
}

const (
	obMsg uint8 = iota
	obTimer
	obCS
)

// timeAllows reports whether a component (members, numbered comp[members[0]]) may hold
// a cycle that a timed run could follow for ever: nothing stays pending throughout it
// that no step inside it ends.
func (x *search) timeAllows(members []uint32, comp []uint32) bool {
	id := comp[members[0]]
	s := newState(x.m)
	// What stays throughout: what the first member has, less what another lacks.
	var throughout []obligation
	for j, k := range members {
		if err := x.load(int(k), s); err != nil {
			return true
		}
		if j == 0 {
			throughout = x.obligations(s, throughout)
			continue
		}
		throughout = slices.DeleteFunc(throughout, func(o obligation) bool { return !x.holds(s, o) })
		if len(throughout) == 0 {
			return true
		}
	}
	// What the steps inside the component end: each step of each member is taken
	// again, and counts when it leads into the component (this does not rest on the
	// order in which the search stored the edges).
	var trs []trans
	next := newState(x.m)
	for _, k := range members {
		if err := x.load(int(k), s); err != nil {
			return true
		}
		trs = x.enumerate(s, trs)
		for _, t := range trs {
			if !slices.ContainsFunc(throughout, func(o obligation) bool { return x.ends(s, t, o) }) {
				continue
			}
			next.copyFrom(s)
			x.apply(next, t)
			if to, ok := x.find(next); !ok || comp[to] != id {
				continue
			}
			throughout = slices.DeleteFunc(throughout, func(o obligation) bool { return x.ends(s, t, o) })
			if len(throughout) == 0 {
				return true
			}
		}
	}
	return false
}

// obligations appends what time forces to end in s.
func (x *search) obligations(s *state, out []obligation) []obligation {
	for _, f := range s.msgs {
		out = append(out, obligation{kind: obMsg, a: f.msg})
	}
	for _, t := range s.timers {
		out = append(out, obligation{kind: obTimer, a: uint32(t.node), b: uint32(t.name)})
	}
	if x.m.cs > 0 {
		for i := range s.nodes {
			if s.nodes[i].alive && s.nodes[i].inCS {
				out = append(out, obligation{kind: obCS, a: uint32(i)})
			}
		}
	}
	return out
}

// holds reports whether obligation o is pending in s.
func (x *search) holds(s *state, o obligation) bool {
	switch o.kind {
	case obMsg:
		return slices.ContainsFunc(s.msgs, func(f flight) bool { return f.msg == o.a })
	case obTimer:
		return slices.ContainsFunc(s.timers, func(t timerSt) bool { return uint32(t.node) == o.a && uint32(t.name) == o.b })
	}
	nd := &s.nodes[o.a]
	return nd.alive && nd.inCS
}

// ends reports whether step t from s ends obligation o: delivers or loses that
// message, fires that timer or sets or cancels it, lets that process leave the CS.
func (x *search) ends(s *state, t trans, o obligation) bool {
	switch {
	case o.kind == obMsg && (t.kind == tDeliver || t.kind == tLose):
		if s.msgs[t.a].msg == o.a {
			return true
		}
	case o.kind == obMsg && t.kind == tDrop:
		if s.msgs[t.b].msg == o.a {
			return true
		}
	case o.kind == obTimer && t.kind == tTimer:
		if tm := s.timers[t.a]; uint32(tm.node) == o.a && uint32(tm.name) == o.b {
			return true
		}
	}
	if o.kind == obMsg {
		return false // a step removes no message but the one it delivers or loses
	}
	i, kind, arg, ok := x.nodeStep(s, t)
	if !ok || uint32(i) != o.a {
		return false
	}
	x.it.setUp(s.nodes)
	r := x.it.step(i, s.nodes[i].id, kind, arg)
	for _, e := range r.effs {
		switch {
		case o.kind == obTimer && (e.Kind == effSetTimer || e.Kind == effCancelTimer) && e.Ref == o.b:
			return true
		case o.kind == obCS && e.Kind == effExit:
			return true
		}
	}
	return false
}

// nodeStep says which process steps in t, with what input (sim.Transition.Stepping);
// ok is false for a step in which no process steps. Workload events do not come up:
// a search that answers without time has them all at its start.
func (x *search) nodeStep(s *state, t trans) (i int, kind sim.InputKind, arg uint32, ok bool) {
	var tr sim.Transition
	if !x.transition(s, t, &tr) || t.kind == tEvent {
		return 0, 0, 0, false
	}
	i, kind, ok = tr.Stepping(x.world(s))
	return i, kind, tr.Ref, ok
}
