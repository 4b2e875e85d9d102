package cost

// Elections: when one starts, and when it has settled on one live leader.

import "github.com/teach-dist/playground/runtime/sim"

func (c *Collector) startElection(e *Event) {
	if c.spec.Family != sim.Election {
		return
	}
	if c.electCur >= 0 && c.elections[c.electCur].Settled == nil {
		return // another caller joins the election under way
	}
	c.beginElection(Point{Node: c.ids[e.Node], Seq: e.Seq, Step: c.step, T: e.T})
}

func (c *Collector) beginElection(p Point) {
	live := 0
	for _, a := range c.alive {
		if a {
			live++
		}
	}
	c.elections = append(c.elections, Election{Start: p, Leader: -1, Live: live})
	c.electCur = len(c.elections) - 1
	clear(c.declared)
}

// settle ends the current election once every live process has named a leader in it
// and they all name the same live process.
func (c *Collector) settle(e *Event) {
	if c.electCur < 0 {
		return
	}
	el := &c.elections[c.electCur]
	if el.Settled != nil {
		return
	}
	leader, live := -1, 0
	for i := range c.ids {
		if !c.alive[i] {
			continue
		}
		live++
		if !c.declared[i] || c.leader[i] < 0 {
			return
		}
		if leader >= 0 && c.leader[i] != leader {
			return
		}
		leader = c.leader[i]
	}
	if k, ok := c.index[leader]; live == 0 || !ok || !c.alive[k] {
		return
	}
	p := Point{Node: c.ids[e.Node], Seq: e.Seq, Step: c.step, T: e.T}
	el.Settled = &p
	el.Leader = leader
	el.Time = e.T - el.Start.T
}
