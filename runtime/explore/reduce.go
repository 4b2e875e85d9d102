package explore

import (
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/teach-dist/playground/runtime/sim"
)

// Canonical forms: an algorithm may declare (sim.Spec.Canon) that parts of its state
// only matter up to order, or not at all once the workload is over. The search then
// stores every state in that form. Two states with the same canonical form behave
// alike for every property checked, by the algorithm's declaration, so the canonical
// states form a quotient of the full graph that keeps every verdict and every
// shortest distance: a counterexample is as short as the full search's. The
// soundness tests (reduce_test.go) check that claim on every configuration they can
// reach both ways.

// canonical puts s in canonical form; nothing happens without a declaration or when the
// search is asked for the full graph.
func (x *search) canonical(s *state) {
	c := x.canon
	if c == nil {
		return
	}
	quiet := x.quiet(s)
	if c.Node != nil {
		for i := range s.nodes {
			if s.nodes[i].alive {
				s.nodes[i].id = x.it.canonNode(i, s.nodes[i].id, quiet)
			}
		}
	}
	if c.Msg != nil {
		x.mapFlights(s, func(id uint32) uint32 { return x.it.canonMsg(id, quiet) })
	}
}

// mapFlights puts every message in flight of s in the form f gives, and the messages
// back in their canonical order if one changed.
func (x *search) mapFlights(s *state, f func(uint32) uint32) {
	changed := false
	for k := range s.msgs {
		if id := f(s.msgs[k].msg); id != s.msgs[k].msg {
			s.msgs[k].msg, changed = id, true
		}
	}
	if changed {
		x.sortFlights(s)
	}
}

// quiet reports whether no workload event can happen any more from s: no request,
// election, crash, recovery, partition or drop token to come.
func (x *search) quiet(s *state) bool {
	m := x.m
	if m.timed {
		return int(s.cursor) == len(m.events)
	}
	if int(s.cursor) < len(m.global) {
		return false
	}
	for i := range s.nodes {
		if int(s.nodes[i].cursor) < len(m.perNode[i]) {
			return false
		}
	}
	return true
}

func quietIndex(quiet bool) int {
	if quiet {
		return 1
	}
	return 0
}

// canonNode returns the number of node i's state id in canonical form (memoised).
func (st *stepper) canonNode(i int, id uint32, quiet bool) uint32 {
	info := st.nodes[i].v.at(id)
	return memoised(&info.canon[quietIndex(quiet)], func() uint32 {
		return st.node(i, st.m.spec.Canon.Node(info.nd, quiet))
	})
}

// canonMsg returns the number of message id in canonical form (memoised).
func (st *stepper) canonMsg(id uint32, quiet bool) uint32 {
	info := st.message(id)
	return memoised(&info.canon[quietIndex(quiet)], func() uint32 {
		m := info.m.Clone()
		st.m.spec.Canon.Msg(&m, quiet)
		return st.msg(&m)
	})
}

// memoised returns the number slot holds (plus one; 0 while unknown), computing and
// storing it the first time. Another worker may store the same number meanwhile; a
// nil slot memoises nothing.
func memoised(slot *atomic.Uint32, of func() uint32) uint32 {
	if slot == nil {
		return of()
	}
	if v := slot.Load(); v != 0 {
		return v - 1
	}
	v := of()
	slot.Store(v + 1)
	return v
}

// The horizon (sim.Horizon): once quiet, every node state and message is stored
// capped at the largest request timestamp still held in s. The horizon can only fall
// as requests are served and forgotten, and capping at h then at a lower h' is capping
// at h', so the stored form depends on the state alone. A quiet state has no workload
// to come, so capping commutes with every step (the algorithm's declaration) and the
// capped states form a quotient of the graph as the canonical forms do.

// horizon is the largest request timestamp s holds, or -1 when s is not capped (no
// declaration, a full search, or workload still to come).
func (x *search) horizon(s *state) int {
	if x.canon == nil || x.canon.Horizon == nil || !x.quiet(s) {
		return -1
	}
	h := 0
	for i := range s.nodes {
		if s.nodes[i].alive {
			h = max(h, x.it.stamp(&x.it.nodes[i].v.at(s.nodes[i].id).capped, func() int {
				return x.canon.Horizon.Node(x.it.nodeState(i, s.nodes[i].id))
			}))
		}
	}
	for _, f := range s.msgs {
		info := x.it.message(f.msg)
		h = max(h, x.it.stamp(&info.capped, func() int { return x.canon.Horizon.Msg(&info.m) }))
	}
	return h
}

// capAtHorizon caps every node state and message of s at its horizon.
func (x *search) capAtHorizon(s *state) {
	h := x.horizon(s)
	if h < 0 {
		return
	}
	for i := range s.nodes {
		if nd := &s.nodes[i]; nd.alive {
			nd.id = x.it.capNode(i, nd.id, h)
		}
	}
	x.mapFlights(s, func(id uint32) uint32 { return x.it.capMsg(id, h) })
}

// stamp returns the memoised request timestamp of c, computing it once.
func (st *stepper) stamp(c *capped, of func() int) int {
	if v := c.stamp.Load(); v != 0 {
		return int(v - 1)
	}
	v := of()
	c.stamp.Store(int32(v + 1))
	return v
}

// capNode returns the number of node i's state id capped at h (memoised).
func (st *stepper) capNode(i int, id uint32, h int) uint32 {
	info := st.nodes[i].v.at(id)
	return memoised(info.capped.slot(h), func() uint32 {
		return st.node(i, st.m.spec.Canon.Horizon.CapNode(info.nd, h))
	})
}

// capMsg returns the number of message id capped at h (memoised).
func (st *stepper) capMsg(id uint32, h int) uint32 {
	info := st.message(id)
	return memoised(info.capped.slot(h), func() uint32 {
		m := info.m.Clone()
		st.m.spec.Canon.Horizon.CapMsg(&m, h)
		return st.msg(&m)
	})
}

// slot is where the form capped at h is memoised, nil for a horizon past capMemo.
func (c *capped) slot(h int) *atomic.Uint32 {
	if h < capMemo {
		return &c.at[h]
	}
	return nil
}

// sameMessage reports whether a message the kernel holds is the one a path step
// delivers: the same content, or, in a reduced search, the same canonical form.
func (x *search) sameMessage(held *sim.Message, p *pstep) bool {
	if equalContent(held, &p.msg) {
		return true
	}
	if x.canon == nil || (x.canon.Msg == nil && p.horizon < 0) {
		return false
	}
	c := held.Clone()
	if x.canon.Msg != nil {
		x.canon.Msg(&c, p.quiet)
	}
	if p.horizon >= 0 {
		x.canon.Horizon.CapMsg(&c, p.horizon)
	}
	return equalContent(&c, &p.msg)
}

func equalContent(h, m *sim.Message) bool {
	return h.Type == m.Type && h.From == m.From && h.To == m.To && h.TS == m.TS && h.Arg == m.Arg &&
		slices.Equal(h.Vec, m.Vec) && slices.Equal(h.Queue, m.Queue)
}

// Partial-order reduction. Once the workload is over (quiet), a delivery to a process
// the algorithm declares inert (sim.Canon.Inert: its canonical state is final and it
// only answers the sender) commutes with every other step: it changes no process's
// state, it removes its own message and appends to the channel back to the sender,
// which only that process writes; no crash, partition or drop can come any more to
// interfere, and no message is lost at random (the reduction is off with network
// loss). Such a delivery is also invisible: it changes nobody's CS, waiting or leader.
// So {that delivery} is a persistent set, and the search may take it alone. The same
// holds for a delivery the algorithm declares to commute with every other step of its
// receiver (sim.Canon.Commutes: Ricart-Agrawala's REPLY that is not the last, and a
// REQUEST deferred whatever the receiver does first), when the step itself is
// invisible: the other processes' steps change other processes, and the receiver's
// own, sent yet or not, commute with it by the declaration, which checkCommutes tests
// against the ones at hand.
//
// Every deadlock (a state with no way on) stays reachable, and by a path of the same
// length (the delivery must happen on every run to it: a persistent step stays enabled
// until it is taken). The cycle proviso keeps every cycle of the reduced graph with a
// fully expanded state: a state is expanded by its one delivery only when that leads
// one level deeper in the breadth-first order (to a new state, or one already found
// on the next level), so a cycle of such steps would go deeper for ever. With invisibility, that keeps every run's sequence of visible steps, so
// mutual exclusion breaks in the reduced graph exactly when it breaks in the full one,
// and a process that may wait for ever still may (bounded entry). What is not kept is
// the length of such a run: a mutual exclusion or entry counterexample is therefore
// searched again without this reduction (explore), so that it is a shortest one.

// porApplies reports whether the search may use partial-order reduction.
func (x *search) porApplies() bool {
	m := x.m
	return x.canon != nil && (x.canon.Inert != nil || x.canon.Commutes != nil) && !m.timed && !m.loss &&
		len(m.bgMsgs) == 0 && len(m.bgTimers) == 0
}

// ample returns the number (in trs) of a transition of s that may be taken alone, or
// -1 for all of them. States numbered next and on are one level deeper than s.
func (x *search) ample(s *state, trs []trans, next int) (int, error) {
	if s.avail != 0 || !x.quiet(s) {
		return -1, nil
	}
	var quiet sim.Quiet // what Commutes may rest on: the same for every delivery of s
	if x.canon.Commutes != nil {
		quiet = sim.Quiet{FIFO: x.m.fifo, Horizon: x.horizon(s)}
	}
	for o, t := range trs {
		if t.kind != tDeliver {
			continue
		}
		f := s.msgs[t.a]
		info := x.it.message(f.msg)
		to := info.m.To
		nd := &s.nodes[to]
		// A message to a crashed process, or across the partition, is only lost.
		if sim.LostOnArrival(nd.alive, int(s.group(info.m.From)), int(s.group(to))) == "" {
			node := x.it.nodeState(to, nd.id)
			switch {
			case x.canon.Inert != nil && x.canon.Inert(node):
				if err := x.checkInert(s, to, f.msg); err != nil {
					return -1, err
				}
			case x.canon.Commutes != nil && x.canon.Commutes(node, &info.m, quiet):
				if !x.invisible(s, t) {
					continue
				}
				if err := x.checkCommutes(s, trs, o, quiet.Horizon); err != nil {
					return -1, err
				}
			default:
				continue
			}
		}
		x.next.copyFrom(s)
		x.apply(x.next, t)
		if k, ok := x.find(x.next); ok && int(k) < next {
			continue // the cycle proviso: only one level deeper
		}
		return o, nil
	}
	return -1, nil
}

// checkCommutes checks the declaration (sim.Canon.Commutes) on the delivery trs[o]
// against the receiver's other steps at hand (deliveries, its timers, leaving the
// CS): the delivery sets and cancels no timer, and either order gives the receiver
// the same state, and the same messages and entries and exits between them (capped
// at s's horizon h, -1 for none).
func (x *search) checkCommutes(s *state, trs []trans, o, h int) error {
	x.it.setUp(s.nodes)
	t := trs[o]
	to := x.stepper(s, t)
	id := s.nodes[to].id
	m := s.msgs[t.a].msg
	for _, e := range x.it.step(to, id, sim.Deliver, m).effs {
		if e.Kind == effSetTimer || e.Kind == effCancelTimer {
			// Its order with that timer's firing would matter.
			return fmt.Errorf("explore: %s: %s is declared to commute with %s's other steps, but it sets or cancels a timer (Canon.Commutes)",
				x.m.spec.Slug, x.it.message(m).desc, x.m.name(to))
		}
	}
	for k, u := range trs {
		if k == o || x.stepper(s, u) != to {
			continue
		}
		var kind sim.InputKind
		var arg uint32
		switch u.kind {
		case tDeliver:
			kind, arg = sim.Deliver, s.msgs[u.a].msg
		case tRelease:
			kind = sim.Release
		case tTimer:
			kind, arg = sim.Timer, uint32(s.timers[u.a].name)
		default:
			continue
		}
		a, aDid := x.twoSteps(to, id, h, sim.Deliver, m, kind, arg)
		b, bDid := x.twoSteps(to, id, h, kind, arg, sim.Deliver, m)
		if a != b || !slices.Equal(aDid, bDid) {
			return fmt.Errorf("explore: %s: %s is declared to commute with %s's other steps, but not with %s (Canon.Commutes)",
				x.m.spec.Slug, x.it.message(m).desc, x.m.name(to), x.describe(s, u).words)
		}
	}
	return nil
}

// twoSteps gives node i's state id two inputs in turn, each step's result put in
// canonical form (capped at the horizon h, if h >= 0), and returns the state and what
// the steps did, in canonical form and sorted (messages as a multiset, entries and
// exits counted).
func (x *search) twoSteps(i int, id uint32, h int, k1 sim.InputKind, a1 uint32, k2 sim.InputKind, a2 uint32) (uint32, []uint64) {
	var did []uint64
	for _, in := range [2]struct {
		kind sim.InputKind
		arg  uint32
	}{{k1, a1}, {k2, a2}} {
		r := x.it.step(i, id, in.kind, in.arg)
		id = r.next
		if x.canon.Node != nil {
			id = x.it.canonNode(i, id, true)
		}
		if h >= 0 {
			id = x.it.capNode(i, id, h)
		}
		for _, e := range r.effs {
			v := uint64(e.Kind) << 32
			if e.Kind == effSend {
				ref := e.Ref
				if x.canon.Msg != nil {
					ref = x.it.canonMsg(ref, true)
				}
				if h >= 0 {
					ref = x.it.capMsg(ref, h)
				}
				v |= uint64(ref)
			}
			did = append(did, v)
		}
	}
	slices.Sort(did)
	return id, did
}

// checkInert checks the declaration on the delivery at hand: the process only answers
// the sender and stays as it is.
func (x *search) checkInert(s *state, i int, msg uint32) error {
	x.it.setUp(s.nodes)
	id := s.nodes[i].id
	r := x.it.step(i, id, sim.Deliver, msg)
	from := x.it.message(msg).m.From
	for _, e := range r.effs {
		if e.Kind != effSend || e.Arg != from {
			return fmt.Errorf("explore: %s: %s is declared inert but does more than answer %s", x.m.spec.Slug, x.m.name(i), x.it.message(msg).desc)
		}
	}
	if x.it.canonNode(i, r.next, true) != id {
		return fmt.Errorf("explore: %s: %s is declared inert but %s changes its state", x.m.spec.Slug, x.m.name(i), x.it.message(msg).desc)
	}
	return nil
}

// Partial-order reduction on FIFO channels. On a FIFO channel only the oldest message
// can arrive, and only its receiver takes it. Take a set P of processes closed under
// "may send on an empty channel": for every p in P, every process that may still send
// to p (alive, in p's part of the partition) and whose channel to p is empty is in P
// too. Let T be the steps of P's processes, and let them all be deliveries that
// change nothing the properties see (no entry into or exit from the CS, no leader).
// A step outside T is another process's: it cannot enable a new step of P (a message
// it sends into P joins the back of a channel that already has a head, which stays
// there until a process of P takes it, and P's processes only move by T), nor disable
// one (only a receiver takes from its channels), and it commutes with every step of
// T: they change different processes, and taking a channel's head commutes with
// appending to its back. So T is a persistent set (Godefroid), and invisible: the
// search may take T alone. A single process whose channels all hold a message is the
// smallest such set; when one of its channels is empty, the sender joins it, and so
// on. This needs what the inert reduction needs (no loss, no background traffic, no
// time), and no drop token, partition, heal, crash or recovery to come (each could
// remove or strand a message of T, or let a process send again); with canonical
// forms, no workload event at all, since the last one changes the canonical form of
// every process (quiet).
//
// What it keeps and what not is the inert reduction's (above): deadlocks at the same
// distance (a delivery of T stays enabled until a process of P takes one, so every
// run to a deadlock takes one of them), every cycle with a fully expanded state (the
// same proviso: every step of T must lead one level deeper), visible steps in the
// same order; a broken mutual exclusion or bounded entry is searched again without it.

// sporApplies reports whether the search may use partial-order reduction on FIFO
// channels.
func (x *search) sporApplies() bool {
	m := x.m
	return m.fifo && !m.timed && !m.loss && len(m.bgMsgs) == 0 && len(m.bgTimers) == 0
}

// sporState reports whether s allows the reduction at all (see above).
func (x *search) sporState(s *state) bool {
	m := x.m
	if s.avail != 0 || int(s.cursor) < len(m.global) || (x.canon != nil && !x.quiet(s)) {
		return false
	}
	for i := range s.nodes {
		for _, ev := range m.perNode[i][s.nodes[i].cursor:] {
			if d := m.events[ev].act.Do; d == sim.ActCrash || d == sim.ActRecover {
				return false
			}
		}
	}
	x.it.setUp(s.nodes)
	return true
}

// sporSets returns the candidate sets of processes of s (bit masks, see above), each
// process's closure once, those with the fewest steps first (ties: the lowest
// process first), so that the search tries the smallest persistent sets first.
func (x *search) sporSets(s *state, trs []trans) []uint16 {
	n := x.m.n
	var fed [MaxNodes]uint16 // fed[p] bit q: the channel from q to p holds a message
	for _, f := range s.msgs {
		ch := int(x.it.message(f.msg).ch)
		fed[ch%n] |= 1 << (ch / n)
	}
	var steps [MaxNodes]int
	for _, t := range trs {
		if p := x.stepper(s, t); p >= 0 {
			steps[p]++
		}
	}
	sets := x.psets[:0]
	defer func() { x.psets = sets }()
	for p := range n {
		set := x.closure(s, p, &fed)
		if !slices.Contains(sets, set) {
			sets = append(sets, set)
		}
	}
	count := func(set uint16) int {
		c := 0
		for p := range n {
			if set&(1<<p) != 0 {
				c += steps[p]
			}
		}
		return c
	}
	slices.SortStableFunc(sets, func(a, b uint16) int { return count(a) - count(b) })
	return sets
}

// closure is the smallest set of processes that holds p and every process that may
// still send on an empty channel into one of its members.
func (x *search) closure(s *state, p int, fed *[MaxNodes]uint16) uint16 {
	set, work := uint16(1)<<p, uint16(1)<<p
	for work != 0 {
		r := bits.TrailingZeros16(work)
		work &^= 1 << r
		for q := range s.nodes {
			if set&(1<<q) == 0 && s.nodes[q].alive && s.group(q) == s.group(r) && fed[r]&(1<<q) == 0 {
				set |= 1 << q
				work |= 1 << q
			}
		}
	}
	return set
}

// stepper is the process whose step t is (a delivery: its receiver), or -1 for a
// step of no process.
func (x *search) stepper(s *state, t trans) int {
	m := x.m
	switch t.kind {
	case tDeliver, tLose:
		return x.it.message(s.msgs[t.a].msg).m.To
	case tTimer:
		return int(s.timers[t.a].node)
	case tRelease:
		return int(t.a)
	case tEvent:
		if a := &m.events[t.a].act; a.Do != sim.ActPartition && a.Do != sim.ActHeal {
			return a.Node
		}
	}
	return -1
}

// sporSet returns the steps of the processes in set (a bit mask) among s's
// transitions (trs) when they are all invisible deliveries and fewer than trs (see
// above), but for the cycle proviso, which their expansion checks (expandState).
func (x *search) sporSet(s *state, trs []trans, set uint16) ([]trans, bool) {
	out := x.pset[:0]
	defer func() { x.pset = out }()
	for _, t := range trs {
		p := x.stepper(s, t)
		if p < 0 {
			return nil, false // sporState rules these out; a step of no process is never persistent here
		}
		if set&(1<<p) == 0 {
			continue
		}
		if t.kind != tDeliver || !x.invisible(s, t) {
			return nil, false // a step of P that is not an invisible delivery
		}
		out = append(out, t)
	}
	if len(out) == 0 || len(out) == len(trs) {
		return nil, false
	}
	return out, true
}

// invisible reports whether delivery t changes nothing the properties see: the
// receiver neither enters nor leaves the CS nor takes a leader (a message to a
// crashed process, or across the partition, is only lost).
func (x *search) invisible(s *state, t trans) bool {
	f := s.msgs[t.a]
	info := x.it.message(f.msg)
	to := info.m.To
	if sim.LostOnArrival(s.nodes[to].alive, int(s.group(info.m.From)), int(s.group(to))) != "" {
		return true
	}
	r := x.it.step(to, s.nodes[to].id, sim.Deliver, f.msg)
	for _, e := range r.effs {
		if e.Kind == effEnter || e.Kind == effExit || e.Kind == effLeader {
			return false
		}
	}
	return true
}
