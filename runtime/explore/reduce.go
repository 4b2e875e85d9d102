package explore

import (
	"slices"

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
		changed := false
		for k := range s.msgs {
			if id := x.it.canonMsg(s.msgs[k].msg, quiet); id != s.msgs[k].msg {
				s.msgs[k].msg, changed = id, true
			}
		}
		// FIFO queues keep their order: a canonical message stays on its channel.
		if changed && !x.m.fifo {
			slices.SortFunc(s.msgs, func(a, b flight) int {
				switch {
				case flightLess(a, b):
					return -1
				case flightLess(b, a):
					return 1
				}
				return 0
			})
		}
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
func (it *interner) canonNode(i int, id uint32, quiet bool) uint32 {
	q := quietIndex(quiet)
	tab := it.canonNodes[q][i]
	if int(id) < len(tab) && tab[id] != 0 {
		return tab[id] - 1
	}
	c := it.node(i, it.m.spec.Canon.Node(it.nodes[i][id], quiet))
	if grow := len(it.nodes[i]) - len(tab); grow > 0 {
		it.bytes += int64(grow) * 4
		tab = append(tab, make([]uint32, grow)...)
	}
	tab[id] = c + 1
	it.canonNodes[q][i] = tab
	return c
}

// canonMsg returns the number of message id in canonical form (memoised).
func (it *interner) canonMsg(id uint32, quiet bool) uint32 {
	q := quietIndex(quiet)
	tab := it.canonMsgs[q]
	if int(id) < len(tab) && tab[id] != 0 {
		return tab[id] - 1
	}
	m := it.msgs[id].m.Clone()
	it.m.spec.Canon.Msg(&m, quiet)
	c := it.msg(&m)
	if grow := len(it.msgs) - len(tab); grow > 0 {
		it.bytes += int64(grow) * 4
		tab = append(tab, make([]uint32, grow)...)
	}
	tab[id] = c + 1
	it.canonMsgs[q] = tab
	return c
}

// sameMessage reports whether a message the kernel holds is the one a path step
// delivers: the same content, or, in a reduced search, the same canonical form.
func (x *search) sameMessage(held *sim.Message, p *pstep) bool {
	if equalContent(held, &p.msg) {
		return true
	}
	if x.canon == nil || x.canon.Msg == nil {
		return false
	}
	c := held.Clone()
	x.canon.Msg(&c, p.quiet)
	return equalContent(&c, &p.msg)
}

func equalContent(h, m *sim.Message) bool {
	return h.Type == m.Type && h.From == m.From && h.To == m.To && h.TS == m.TS && h.Arg == m.Arg &&
		slices.Equal(h.Vec, m.Vec) && slices.Equal(h.Queue, m.Queue)
}
