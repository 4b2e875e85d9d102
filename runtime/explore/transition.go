package explore

import "github.com/teach-dist/playground/runtime/sim"

// The transitions a state offers: deliveries, losses, timers, workload events and
// the passing of time, in the fixed order that names them in a path.

// enumerate lists s's enabled transitions in a fixed order; a transition's number in
// this list is how a path names it.
func (x *search) enumerate(s *state, out []trans) []trans {
	m := x.m
	out = out[:0]
	for k := range s.msgs {
		f := s.msgs[k]
		if k > 0 && s.msgs[k-1] == f {
			continue // the same message twice: delivering either gives the same state
		}
		if m.fifo && k > 0 && x.it.message(s.msgs[k-1].msg).ch == x.it.message(f.msg).ch {
			continue // FIFO: only the oldest message of a channel can arrive
		}
		if m.timed && f.lo > 0 {
			continue
		}
		out = append(out, trans{kind: tDeliver, a: int32(k)})
	}
	if m.loss {
		for k := range s.msgs {
			if k > 0 && s.msgs[k-1] == s.msgs[k] {
				continue
			}
			out = append(out, trans{kind: tLose, a: int32(k)})
		}
	}
	if s.avail != 0 {
		for t, ev := range m.drops {
			if s.avail&(1<<t) == 0 || x.sameDropBefore(s, t) {
				continue
			}
			a := &m.events[ev].act
			for k := range s.msgs {
				if k > 0 && s.msgs[k-1] == s.msgs[k] {
					continue
				}
				mm := &x.it.message(s.msgs[k].msg).m
				if (a.From < 0 || mm.From == a.From) && (a.To < 0 || mm.To == a.To) && (a.Type == "" || mm.Type == a.Type) {
					out = append(out, trans{kind: tDrop, a: int32(t), b: int32(k)})
				}
			}
		}
	}
	for k, t := range s.timers {
		if !m.timed || t.left == 0 {
			out = append(out, trans{kind: tTimer, a: int32(k)})
		}
	}
	if m.cs > 0 {
		for i := range s.nodes {
			nd := &s.nodes[i]
			if nd.alive && nd.inCS && (!m.timed || nd.csLeft == 0) {
				out = append(out, trans{kind: tRelease, a: int32(i)})
			}
		}
	}
	out = x.workload(s, out)
	if m.timed && x.canTick(s) {
		out = append(out, trans{kind: tTick})
	}
	return out
}

// sameDropBefore reports whether an earlier available drop event has the same filter:
// using either gives the same choices, so only the first is offered.
func (x *search) sameDropBefore(s *state, t int) bool {
	a := &x.m.events[x.m.drops[t]].act
	for u := 0; u < t; u++ {
		b := &x.m.events[x.m.drops[u]].act
		if s.avail&(1<<u) != 0 && a.From == b.From && a.To == b.To && a.Type == b.Type {
			return true
		}
	}
	return false
}

// workload appends the workload events that can happen now.
func (x *search) workload(s *state, out []trans) []trans {
	m := x.m
	if m.timed {
		if int(s.cursor) < len(m.events) && m.events[s.cursor].at == int(s.now) {
			out = append(out, trans{kind: tEvent, a: s.cursor})
		}
		return out
	}
	for i := range s.nodes {
		if c := s.nodes[i].cursor; int(c) < len(m.perNode[i]) {
			ev := m.perNode[i][c]
			if x.applies(s, &m.events[ev].act) {
				out = append(out, trans{kind: tEvent, a: ev})
			}
		}
	}
	if int(s.cursor) < len(m.global) {
		out = append(out, trans{kind: tEvent, a: m.global[s.cursor]})
	}
	return out
}

// applies reports whether an event would do something now (sim.Applies); the kernel
// skips the ones that do not (a request from a node that already waits). Untimed
// searches hold such an event back until it applies: it happens whenever the node is
// ready.
func (x *search) applies(s *state, a *sim.Action) bool { return sim.Applies(x.world(s), a) }

// canTick reports whether time may pass: something waits for it, and nothing is due
// now that cannot wait.
func (x *search) canTick(s *state) bool {
	m := x.m
	waits := false
	for _, f := range s.msgs {
		if f.hi == 0 {
			return false
		}
		waits = true
	}
	for _, t := range s.timers {
		if t.left == 0 {
			return false
		}
		waits = true
	}
	if m.cs > 0 {
		for i := range s.nodes {
			if nd := &s.nodes[i]; nd.alive && nd.inCS {
				if nd.csLeft == 0 {
					return false
				}
				waits = true
			}
		}
	}
	if int(s.cursor) < len(m.events) {
		if m.events[s.cursor].at <= int(s.now) {
			return false
		}
		waits = true
	}
	return waits
}

// tickLength is how far time moves: one unit while a message can arrive now (each
// instant is then a different choice), else straight to the next instant at which
// something becomes possible.
func (x *search) tickLength(s *state) int32 {
	d := int32(1 << 30)
	for _, f := range s.msgs {
		if f.lo == 0 {
			return 1
		}
		d = min(d, f.lo)
	}
	for _, t := range s.timers {
		d = min(d, t.left)
	}
	if x.m.cs > 0 {
		for i := range s.nodes {
			if nd := &s.nodes[i]; nd.alive && nd.inCS {
				d = min(d, nd.csLeft)
			}
		}
	}
	if int(s.cursor) < len(x.m.events) {
		d = min(d, int32(x.m.events[s.cursor].at)-s.now)
	}
	return max(d, 1)
}
