package explore

import (
	"fmt"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// Carrying out a transition, as the kernel would: the node steps, their effects, and
// the canonical order of what is in flight.

// apply carries out transition t on s and puts the result in canonical form. It
// returns a finding when a property broke during the step itself (two processes in
// the CS).
func (x *search) apply(s *state, t trans) *finding {
	f := x.applyRaw(s, t)
	if t.kind == tEvent {
		// The workload moved on: the state may have become quiet, which changes the
		// canonical form of everything. Otherwise s was canonical, and effects put
		// what the step changed (its node, the messages it sent) in canonical form.
		x.canonical(s)
	}
	return f
}

func (x *search) applyRaw(s *state, t trans) *finding {
	m := x.m
	x.it.setUp(s.nodes)
	switch t.kind {
	case tDeliver:
		f := s.msgs[t.a]
		s.removeMsg(int(t.a))
		info := x.it.message(f.msg)
		to := info.m.To
		if !s.nodes[to].alive || s.group(info.m.From) != s.group(to) {
			return nil // lost on arrival, as the kernel drops it
		}
		r := x.it.step(to, s.nodes[to].id, sim.Deliver, f.msg)
		return x.effects(s, to, r)
	case tLose:
		s.removeMsg(int(t.a))
	case tDrop:
		s.removeMsg(int(t.b))
		s.avail &^= 1 << t.a
	case tTimer:
		tm := s.timers[t.a]
		s.timers = append(s.timers[:t.a], s.timers[t.a+1:]...)
		i := int(tm.node)
		r := x.it.step(i, s.nodes[i].id, sim.Timer, uint32(tm.name))
		return x.effects(s, i, r)
	case tRelease:
		i := int(t.a)
		s.nodes[i].csLeft = 0
		r := x.it.step(i, s.nodes[i].id, sim.Release, 0)
		return x.effects(s, i, r)
	case tEvent:
		return x.event(s, t.a)
	case tTick:
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
	return nil
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

// act carries out workload event k without moving past it.
func (x *search) act(s *state, k int32) *finding {
	m := x.m
	x.it.setUp(s.nodes)
	a := &m.events[k].act
	if !x.applies(s, a) {
		return nil // skipped, as the kernel skips it
	}
	switch a.Do {
	case sim.ActRequest:
		i := a.Node
		s.nodes[i].pending = true
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Request, 0))
	case sim.ActRelease:
		i := a.Node
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Release, 0))
	case sim.ActElect:
		i := a.Node
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Elect, 0))
	case sim.ActCrash:
		x.crash(s, a.Node)
	case sim.ActRecover:
		i := a.Node
		s.nodes[i] = nodeSt{alive: true, leader: -1, cursor: s.nodes[i].cursor}
		r := x.it.step(i, x.it.fresh[i], sim.Recover, 0)
		return x.effects(s, i, r)
	case sim.ActPartition:
		clear(s.groups)
		for g, members := range a.Groups {
			for _, i := range members {
				s.groups[i] = uint8(g + 1)
			}
		}
	case sim.ActHeal:
		clear(s.groups)
	case sim.ActDrop:
		s.avail |= 1 << m.dropIndex(k) // timed: from now on it may drop a message
	}
	return nil
}

func (x *search) crash(s *state, i int) {
	s.nodes[i] = nodeSt{leader: -1, cursor: s.nodes[i].cursor}
	ts := s.timers[:0]
	for _, t := range s.timers {
		if int(t.node) != i {
			ts = append(ts, t)
		}
	}
	s.timers = ts
	// Messages on their way to a crashed process are lost.
	ms := s.msgs[:0]
	for _, f := range s.msgs {
		if x.it.message(f.msg).m.To != i {
			ms = append(ms, f)
		}
	}
	s.msgs = ms
}

// effects carries out what node i did in a step, in order, as the kernel does.
func (x *search) effects(s *state, i int, r stepResult) *finding {
	m := x.m
	nd := &s.nodes[i]
	nd.id = r.next
	quiet := false
	if x.canon != nil {
		quiet = x.quiet(s)
		if x.canon.Node != nil {
			nd.id = x.it.canonNode(i, r.next, quiet)
		}
	}
	var found *finding
	for _, e := range r.effs {
		switch e.kind {
		case effSend:
			info := x.it.message(e.a)
			if s.group(info.m.From) != s.group(info.m.To) {
				continue // the partition drops it as it leaves
			}
			f := flight{msg: e.a}
			if x.canon != nil && x.canon.Msg != nil {
				f.msg = x.it.canonMsg(e.a, quiet)
			}
			if m.timed {
				f.lo, f.hi = m.dmin, m.dmax
			}
			x.insertFlight(s, f)
		case effSetTimer:
			x.timerSet = true
			s.removeTimer(i, e.a)
			t := timerSt{node: uint16(i), name: uint16(e.a)}
			if m.timed {
				t.left = e.after
			}
			x.it.insertTimer(s, t)
		case effCancelTimer:
			s.removeTimer(i, e.a)
		case effEnter:
			if nd.inCS {
				continue
			}
			nd.inCS, nd.pending = true, false
			if m.timed {
				nd.csLeft = m.cs
			}
			if found == nil {
				found = x.checkMutex(s, i)
			}
		case effExit:
			nd.inCS, nd.csLeft = false, 0
		case effLeader:
			nd.leader = int32(e.a)
		}
	}
	return found
}

func (x *search) checkMutex(s *state, i int) *finding {
	var others []string
	for j := range s.nodes {
		if j != i && s.nodes[j].inCS {
			others = append(others, x.m.name(j))
		}
	}
	if others == nil {
		return nil
	}
	return &finding{property: sim.PropMutex,
		detail: fmt.Sprintf("%s entered the CS while %s is in it", x.m.name(i), strings.Join(others, ", "))}
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
