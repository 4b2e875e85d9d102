package sim

import (
	"maps"
	"math/rand/v2"
	"slices"
)

// Clone returns an independent copy of the run as it stands, which reports its events
// to sink: stepping either one never changes the other, and both go on exactly as the
// original would (the random source is copied with its position). A live session
// keeps clones every so many steps, so a seek replays from the nearest one instead of
// from step 0. Nodes are copied with their own Clone (the algorithm contract).
func (s *Sim) Clone(sink Sink) *Sim {
	c := *s
	c.sink = sink
	c.nodes = make([]Node, len(s.nodes))
	for i, nd := range s.nodes {
		c.nodes[i] = nd.Clone()
	}
	c.alive = slices.Clone(s.alive)
	pcg := *s.pcg
	c.pcg = &pcg
	c.rng = rand.New(c.pcg)
	// Scratch of a step in progress: a clone is taken between steps.
	c.ctx = Context{self: s.ctx.self, ids: s.ctx.ids}
	c.ev = Event{}
	c.in = Input{}

	c.q.items = slices.Clone(s.q.items)

	c.nw.lastArr = slices.Clone(s.nw.lastArr)
	c.nw.group = slices.Clone(s.nw.group)
	c.nw.msgs = pool[msgSlot]{slots: slices.Clone(s.nw.msgs.slots), free: slices.Clone(s.nw.msgs.free)}
	for k := range c.nw.msgs.slots {
		c.nw.msgs.slots[k].msg = c.nw.msgs.slots[k].msg.Clone()
	}
	c.nw.held = slices.Clone(s.nw.held)
	c.nw.armedDrops = slices.Clone(s.nw.armedDrops)

	c.tm.pool = pool[timerSlot]{slots: slices.Clone(s.tm.slots), free: slices.Clone(s.tm.free)}
	c.tm.byNode = make([]map[string]int32, len(s.tm.byNode))
	for i, m := range s.tm.byNode {
		if m != nil {
			c.tm.byNode[i] = maps.Clone(m)
		}
	}

	c.cs.in = slices.Clone(s.cs.in)
	c.cs.gen = slices.Clone(s.cs.gen)
	c.cs.due = slices.Clone(s.cs.due)

	c.mon.pendingSince = slices.Clone(s.mon.pendingSince)
	c.mon.pendingSeen = slices.Clone(s.mon.pendingSeen)
	c.mon.leaderOf = slices.Clone(s.mon.leaderOf)
	c.mon.quietFound = slices.Clone(s.mon.quietFound)
	return &c
}
