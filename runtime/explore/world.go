package explore

import (
	"fmt"

	"github.com/teach-dist/playground/runtime/sim"
)

// A transition of the search is carried out by the kernel's transition function
// (sim.Take), on the search's own state: world is that state as a sim.World. The
// search only says which message, timer or event a transition takes out of the state,
// and keeps its representation: nodes are interned and stepped through the memo
// (intern.go), messages in flight are kept in canonical order, time as windows. It
// keeps no trace.

// world is state s as sim.Take changes it. A reference (Ref) is an interned message
// or timer name.
type world struct {
	x      *search
	s      *state
	quiet  bool     // whether s was quiet at the last node step (canonical forms)
	found  *finding // the first property broken during the transition
	groups []int    // Groups' answer
}

// world returns the search's world on state s.
func (x *search) world(s *state) *world {
	w := &x.w
	w.x, w.s = x, s
	x.it.setUp(s.nodes)
	return w
}

// transition sets in tr, which is zero, transition t out of s in the kernel's terms;
// it reports false for time passing, which is the search's own.
func (x *search) transition(s *state, t trans, tr *sim.Transition) bool {
	switch t.kind {
	case tDeliver, tLose, tDrop:
		k := t.a
		tr.Kind = sim.TDeliver
		switch t.kind {
		case tLose:
			tr.Kind, tr.Reason = sim.TLose, sim.ReasonLost
		case tDrop:
			k = t.b
			tr.Kind, tr.Reason = sim.TLose, sim.ReasonUser
		}
		f := s.msgs[k]
		m := &x.it.message(f.msg).m
		tr.From, tr.To, tr.Ref = m.From, m.To, f.msg
	case tTimer:
		tm := s.timers[t.a]
		tr.Kind, tr.Node, tr.Ref = sim.TTimer, int(tm.node), uint32(tm.name)
	case tRelease:
		tr.Kind, tr.Node = sim.TEndCS, int(t.a)
	case tEvent:
		tr.Kind, tr.Act = sim.TAct, &x.m.events[t.a].act
	default:
		return false
	}
	return true
}

// take carries out tr on s and returns the property it broke, if any.
func (x *search) take(s *state, tr *sim.Transition) *finding {
	w := x.world(s)
	w.found = nil
	if err := sim.Take(w, tr); err != nil {
		// This world refuses nothing: an error is a bug, which explore's recover words.
		panic(fmt.Sprintf("explore: %v", err))
	}
	return w.found
}

func (w *world) IDs() []int          { return w.x.m.ids }
func (w *world) Up() []bool          { return w.x.it.upNodes } // kept by setUp
func (w *world) InCS(i int) bool     { return w.s.nodes[i].inCS }
func (w *world) Waiting(i int) bool  { return w.s.nodes[i].pending }
func (w *world) Leader(i int) int    { return int(w.s.nodes[i].leader) }
func (w *world) Node(i int) sim.Node { return w.x.it.nodeState(i, w.s.nodes[i].id) }

func (w *world) Groups() []int {
	if w.s.groups == nil {
		return nil
	}
	w.groups = w.groups[:0]
	for _, g := range w.s.groups {
		w.groups = append(w.groups, int(g))
	}
	return w.groups
}

func (w *world) StepNode(i int, kind sim.InputKind, ref uint32) ([]sim.Did, error) {
	x, s := w.x, w.s
	nd := &s.nodes[i]
	r := x.it.step(i, nd.id, kind, ref)
	nd.id = r.next
	if x.canon != nil {
		w.quiet = x.quiet(s)
		if x.canon.Node != nil {
			nd.id = x.it.canonNode(i, r.next, w.quiet)
		}
	}
	return r.effs, nil
}

func (w *world) SetAlive(i int, up bool) {
	nd := &w.s.nodes[i]
	nd.alive = up
	if up {
		nd.id = w.x.it.fresh[i]
	}
	w.x.it.setUp(w.s.nodes)
}

func (w *world) SetInCS(i int, in bool) int {
	nd := &w.s.nodes[i]
	nd.inCS, nd.csLeft = in, 0
	if in && w.x.m.timed {
		nd.csLeft = w.x.m.cs
	}
	inside := 0
	for k := range w.s.nodes {
		if w.s.nodes[k].inCS {
			inside++
		}
	}
	return inside
}

func (w *world) SetWaiting(i int, waiting bool) { w.s.nodes[i].pending = waiting }
func (w *world) SetLeader(i int, id int)        { w.s.nodes[i].leader = int32(id) }

func (w *world) Arm(i int, ref uint32, after int) {
	w.x.timerSet = true
	w.s.removeTimer(i, ref)
	t := timerSt{node: uint16(i), name: uint16(ref)}
	if w.x.m.timed {
		t.left = int32(after)
	}
	w.x.it.insertTimer(w.s, t)
}

func (w *world) Disarm(i int, ref uint32) { w.s.removeTimer(i, ref) }

func (w *world) DisarmAll(i int) {
	s := w.s
	ts := s.timers[:0]
	for _, t := range s.timers {
		if int(t.node) != i {
			ts = append(ts, t)
		}
	}
	s.timers = ts
}

func (w *world) Send(_ int, ref uint32) (uint32, bool, error) { return ref, true, nil }

func (w *world) Post(ref uint32) error {
	x := w.x
	f := flight{msg: ref}
	if x.canon != nil && x.canon.Msg != nil {
		f.msg = x.it.canonMsg(ref, w.quiet)
	}
	if x.m.timed {
		f.lo, f.hi = x.m.dmin, x.m.dmax
	}
	x.insertFlight(w.s, f)
	return nil
}

func (w *world) LoseTo(i int, _ string) error {
	s := w.s
	ms := s.msgs[:0]
	for _, f := range s.msgs {
		if w.x.it.message(f.msg).m.To != i {
			ms = append(ms, f)
		}
	}
	s.msgs = ms
	return nil
}

func (w *world) Partition(groups [][]int) error {
	clear(w.s.groups)
	for g, members := range groups {
		for _, i := range members {
			w.s.groups[i] = uint8(g + 1)
		}
	}
	return nil
}

func (w *world) Heal() error {
	clear(w.s.groups)
	return nil
}

// What the trace would show: the search keeps none.
func (w *world) Record(sim.EventType, int) error   { return nil }
func (w *world) Delivered(uint32, int) error       { return nil }
func (w *world) Dropped(uint32, int, string) error { return nil }
func (w *world) Fired(int, uint32) error           { return nil }
func (w *world) RuleFired(int, uint32) error       { return nil }
func (w *world) Violation(property, detail string, _, _ []int) error {
	if w.found == nil {
		w.found = &finding{property: property, detail: detail}
	}
	return nil
}

// apply carries out transition t on s and puts the result in canonical form. It
// returns a finding when a property broke during the step itself (two processes in
// the CS).
func (x *search) apply(s *state, t trans) *finding {
	f := x.applyStep(s, t)
	x.capAtHorizon(s)
	return f
}

func (x *search) applyStep(s *state, t trans) *finding {
	var tr sim.Transition
	// What the step takes out of the state (the message, the timer, the time left in
	// the CS) before sim.Take carries it out.
	switch t.kind {
	case tTick:
		x.passTime(s)
		return nil
	case tEvent:
		f := x.event(s, t.a)
		// The workload moved on: the state may have become quiet, which changes the
		// canonical form of everything. Otherwise s was canonical, and the world put
		// what the step changed (its node, the messages it sent) in canonical form.
		x.canonical(s)
		return f
	case tDeliver, tLose:
		x.transition(s, t, &tr)
		s.removeMsg(int(t.a))
	case tDrop:
		x.transition(s, t, &tr)
		s.removeMsg(int(t.b))
		s.avail &^= 1 << t.a
	case tTimer:
		x.transition(s, t, &tr)
		s.timers = append(s.timers[:t.a], s.timers[t.a+1:]...)
	case tRelease:
		x.transition(s, t, &tr)
		s.nodes[t.a].csLeft = 0
	}
	return x.take(s, &tr)
}

// passTime lets time pass (tickLength): the arrival windows, the timers and the time
// left in the CS count down.
func (x *search) passTime(s *state) {
	m := x.m
	d := x.tickLength(s)
	x.tick = d
	for k := range s.msgs {
		f := &s.msgs[k]
		f.lo = max(f.lo-d, 0)
		f.hi -= d
	}
	for k := range s.timers {
		s.timers[k].left -= d
	}
	if m.cs > 0 {
		for i := range s.nodes {
			if nd := &s.nodes[i]; nd.alive && nd.inCS {
				nd.csLeft -= d
			}
		}
	}
	if int(s.cursor) < len(m.events) {
		s.now += d
	}
}

// event carries out workload event k and moves past it.
func (x *search) event(s *state, k int32) *finding {
	m := x.m
	a := &m.events[k].act
	if m.timed {
		s.cursor++
		if int(s.cursor) == len(m.events) {
			// Nothing is scheduled any more: the time no longer matters. Nothing else
			// reads s.now during this event.
			s.now = 0
		}
	} else if a.Do == sim.ActPartition || a.Do == sim.ActHeal {
		s.cursor++
	} else if a.Do != sim.ActDrop {
		s.nodes[a.Node].cursor++
	}
	return x.act(s, k)
}

// act carries out workload event k without moving past it. A drop event is the
// search's own: a token that lets one matching message be lost, from now on.
func (x *search) act(s *state, k int32) *finding {
	a := &x.m.events[k].act
	if a.Do == sim.ActDrop {
		s.avail |= 1 << x.m.dropIndex(k)
		return nil
	}
	return x.take(s, &sim.Transition{Kind: sim.TAct, Act: a})
}

// insertFlight puts a message in the canonical order: by content (its encoding, then
// its arrival window) when channels are not FIFO; by channel, in send order within a
// channel, when they are. Neither order depends on the numbers the interner gave, which
// differ between runs with several workers: so the transitions of a state, listed in
// this order, and the order in which the search finds states do not either.
func (x *search) insertFlight(s *state, f flight) {
	k := len(s.msgs)
	if x.m.fifo {
		ch := x.it.message(f.msg).ch
		for k > 0 && x.it.message(s.msgs[k-1].msg).ch > ch {
			k--
		}
	} else {
		for k > 0 && x.it.flightLess(f, s.msgs[k-1]) {
			k--
		}
	}
	s.msgs = append(s.msgs, flight{})
	copy(s.msgs[k+1:], s.msgs[k:])
	s.msgs[k] = f
}

func (it *interner) flightLess(a, b flight) bool {
	if a.msg != b.msg {
		return it.msgLess(a.msg, b.msg)
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return a.hi < b.hi
}

func (s *state) removeMsg(k int) {
	s.msgs = append(s.msgs[:k], s.msgs[k+1:]...)
}

func (s *state) removeTimer(i int, name uint32) {
	for k, t := range s.timers {
		if int(t.node) == i && uint32(t.name) == name {
			s.timers = append(s.timers[:k], s.timers[k+1:]...)
			return
		}
	}
}

// insertTimer keeps the timers in order of node, then name (not the name's number,
// for the reason given at insertFlight).
func (it *interner) insertTimer(s *state, t timerSt) {
	k := len(s.timers)
	for k > 0 && (s.timers[k-1].node > t.node || (s.timers[k-1].node == t.node && s.timers[k-1].name != t.name &&
		it.timerName(uint32(s.timers[k-1].name)) > it.timerName(uint32(t.name)))) {
		k--
	}
	s.timers = append(s.timers, timerSt{})
	copy(s.timers[k+1:], s.timers[k:])
	s.timers[k] = t
}
