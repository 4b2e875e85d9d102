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
	if s.ctx.up != nil {
		c.ctx.up = c.alive // Up (a perfect failure detector) reads the clone's own record of who is up
	}
	c.ev = Event{}
	c.in = Input{}
	c.cur, c.curTimer = Message{}, ""

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

// Footprint estimates the bytes a Clone of the run holds, to budget the clones a
// session keeps: the kernel's tables and the messages in them, which grow with the
// run (a 128-process Bakery has thousands of messages in flight: about 2.5 MB), and
// each node at a header and a few slices of N. An estimate by sizes of the structs,
// not a measure: within a factor of two of runtime.MemStats (runtime/session,
// TestFootprintEstimatesAClone).
func (s *Sim) Footprint() int {
	const (
		word     = 8
		itemSize = 32  // item: t, seq, kind, slot, gen
		slotSize = 128 // msgSlot: a Message (ids, type, stamps, two slice headers) and its state
		timer    = 48  // timerSlot, and as much again in its node's map
	)
	b := len(s.q.items)*itemSize + len(s.nw.msgs.slots)*slotSize + len(s.nw.lastArr)*word
	for k := range s.nw.msgs.slots {
		m := &s.nw.msgs.slots[k].msg
		b += (len(m.Vec) + len(m.Queue)) * word
	}
	b += 2 * len(s.tm.slots) * timer
	b += s.n * (256 + s.n*word) // node states (a few slices of N), CS and monitor slices
	for _, nd := range s.nodes {
		if f, ok := nd.(Footprinter); ok {
			b += f.Footprint()
		}
	}
	return b
}

// Footprinter is implemented by nodes whose state can grow well past a few slices of N
// (an algorithm written in Starlark keeps up to thousands of values): Footprint adds
// the bytes they estimate for themselves.
type Footprinter interface {
	Footprint() int
}
