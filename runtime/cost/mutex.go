package cost

// Mutual exclusion: requests, entries and exits, the delays between them, and the
// notes' ordering property judged with vector clocks.

import "slices"

type request struct {
	node      int
	seq       int64
	step      int
	t         int
	vc        []int // the request event's vector clock
	msgsAt    int   // algorithm messages sent before it
	contended bool  // another process wanted or held the CS while it waited
	done      bool  // granted, or cancelled by a crash
	bakery    int64 // the seq at which it entered the bakery (its doorway ended); -1: not yet
}

// doorwayEnds notes that process i's pending request entered the bakery.
func (c *Collector) doorwayEnds(i int, e *Event) {
	if r := c.pending[i]; r != nil && r.bakery < 0 {
		r.bakery = e.Seq
	}
}

// mustGoFirst says whether request a must be granted before request r under the
// run's definition of ordering: a happened before r, or, for the bakery (002), a
// entered the bakery before r entered the doorway (its request).
func (c *Collector) mustGoFirst(a, r *request) bool {
	if c.spec.DoorwayEnds != "" {
		return a.bakery >= 0 && a.bakery < r.seq
	}
	return happenedBefore(a, r)
}

func (c *Collector) request(i int, e *Event) {
	c.vc[i][i]++
	c.requests++
	r := &request{node: i, seq: e.Seq, step: c.step, t: e.T, vc: slices.Clone(c.vc[i]), msgsAt: c.msgs, bakery: -1}
	for j, p := range c.pending {
		if p != nil && j != i {
			p.contended = true
			r.contended = true
		}
		if c.inCS[j] && j != i {
			r.contended = true
		}
	}
	c.pending[i] = r
	c.last[i] = r
}

// happenedBefore: request a happened before request b (at another process) when b's
// clock has seen a's own event.
func happenedBefore(a, b *request) bool {
	return a.node < len(b.vc) && a.vc[a.node] <= b.vc[a.node]
}

func (c *Collector) enter(i int, e *Event) {
	c.entries++
	c.inCS[i] = true
	grant := Point{Node: c.ids[i], Seq: e.Seq, Step: c.step, T: e.T}
	r := c.pending[i]
	if r != nil {
		c.pending[i] = nil
		r.done = true
		c.client.add(float64(e.T - r.t))
		if !r.contended {
			c.toEnter.add(float64(c.msgs - r.msgsAt))
		}
		// The ordering property: every request that happened before this one must
		// have been granted already.
		ordered, broken := false, false
		for j, a := range c.last {
			if j == i || a == nil || !c.mustGoFirst(a, r) {
				continue
			}
			ordered = true
			if !a.done && c.pending[j] == a {
				broken = true
				if c.first == nil {
					c.first = &Violation{
						Earlier: Point{Node: c.ids[j], Seq: a.seq, Step: a.step, T: a.t},
						Later:   Point{Node: c.ids[i], Seq: r.seq, Step: r.step, T: r.t},
						Grant:   grant,
					}
				}
			}
		}
		if ordered {
			c.checked++
		}
		if broken {
			c.violations++
		}
	}
	if c.syncOpen {
		c.syncOpen = false
		if slices.Contains(c.syncWaiting, i) {
			c.sync.add(float64(e.T - c.syncT))
		}
	}
	c.vc[i][i]++
}

// exitWait is one exit from the CS whose messages are on their way: 003's exit delay
// is the time from leaving until the last of them has arrived.
type exitWait struct {
	t, last, left int // the exit's time, the latest arrival so far, messages still on their way
}

// openExits starts the wait of every exit of the activation closing now for the
// messages its process sent in it; an exit that sent none has no exit delay.
func (c *Collector) openExits() {
	for _, p := range c.act.exited {
		var w *exitWait
		for _, m := range c.act.msgIDs {
			if m.from != p {
				continue
			}
			if w == nil {
				w = &exitWait{t: c.act.t, last: c.act.t}
			}
			if c.exitsOpen == nil {
				c.exitsOpen = map[int64]*exitWait{}
			}
			c.exitsOpen[m.id] = w
			w.left++
		}
	}
}

// exitArrived notes the arrival (at t) or the loss (t < 0) of a message an exit sent;
// the exit delay is measured once none is left on its way and at least one arrived.
func (c *Collector) exitArrived(id int64, t int) {
	w := c.exitsOpen[id]
	if w == nil {
		return
	}
	delete(c.exitsOpen, id)
	if t >= 0 {
		w.last = max(w.last, t)
	}
	if w.left--; w.left == 0 && w.last > w.t {
		c.exitDelay.add(float64(w.last - w.t))
	}
}

func (c *Collector) exit(i int, e *Event) {
	c.exits++
	c.inCS[i] = false
	c.act.exited = append(c.act.exited, i)
	c.syncWaiting = c.syncWaiting[:0]
	for j, p := range c.pending {
		if p != nil && j != i && c.alive[j] {
			c.syncWaiting = append(c.syncWaiting, j)
		}
	}
	c.syncOpen = len(c.syncWaiting) > 0
	c.syncT = e.T
	c.vc[i][i]++
}
