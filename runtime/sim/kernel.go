package sim

// kernel is a run as Take changes it (World): the kernel's own record of each part
// (network.go, timer.go, cs.go, monitor.go) and its trace. A reference (Ref) means the
// message in play (Sim.cur) or the timer in play (Sim.curTimer) when a transition
// carries it, and effect k of the node's step when an effect does.
type kernel struct{ *Sim }

func (k kernel) Up() []bool    { return k.alive }
func (k kernel) Groups() []int { return k.nw.group }

func (k kernel) StepNode(i int, kind InputKind, _ uint32) ([]Did, error) {
	in := k.input(kind)
	switch kind {
	case Deliver:
		in.Msg = k.cur
	case Timer:
		in.Timer = k.curTimer
	}
	if err := k.ctx.Call(k.spec, i, k.nodes[i], in); err != nil {
		return nil, err
	}
	return k.ctx.did, nil
}

func (k kernel) SetAlive(i int, up bool) {
	k.alive[i] = up
	if up {
		k.nodes[i] = k.spec.New(i, &k.setup)
	}
}

func (k kernel) SetInCS(i int, in bool) int {
	cs := &k.cs
	if !in {
		cs.leave(i)
		return cs.count
	}
	cs.in[i] = true
	cs.count++
	if k.cfg.CS > 0 {
		k.q.schedule(item{t: k.now + k.cfg.CS, kind: itemRelease, slot: int32(i), gen: cs.gen[i]})
		cs.pendingRelease++
		cs.due[i] = true
	}
	return cs.count
}

func (k kernel) SetWaiting(i int, waiting bool) {
	mon := &k.mon
	if !waiting {
		mon.pendingSince[i] = -1
		return
	}
	mon.pendingSince[i] = k.now
	mon.pendingSeen[i] = false
	mon.nextDeadline = min(mon.nextDeadline, k.now+mon.pendingLimit)
}

func (k kernel) SetLeader(i int, id int) { k.mon.leaderOf[i] = id }

func (k kernel) Arm(i int, ref uint32, after int) { k.setTimer(i, k.ctx.effects[ref].Timer, after) }
func (k kernel) Disarm(i int, ref uint32)         { k.tm.disarm(i, k.ctx.effects[ref].Timer) }
func (k kernel) DisarmAll(i int)                  { k.tm.disarmAll(i) }

func (k kernel) Send(_ int, ref uint32) (uint32, bool, error) {
	// The message leaves the node: it must not share slices with the node's state.
	k.cur = k.ctx.effects[ref].Msg.Clone()
	sent, err := k.launch()
	return 0, sent, err
}

func (k kernel) Post(uint32) error { return k.post() }

func (k kernel) LoseTo(i int, reason string) error {
	for _, slot := range k.nw.live(func(ms *msgSlot) bool { return ms.msg.To == i }) {
		if err := k.removeInFlight(slot, reason); err != nil {
			return err
		}
	}
	return nil
}

func (k kernel) Partition(groups [][]int) error { return k.partition(groups) }

func (k kernel) Heal() error {
	clear(k.nw.group)
	return k.emit(k.event(EvHeal, -1))
}

func (k kernel) Record(kind EventType, i int) error {
	ev := k.event(kind, i)
	switch kind {
	case EvEnter:
		k.mon.totals.Entries++
	case EvLeader:
		ev.Leader = k.mon.leaderOf[i]
	}
	if err := k.emit(ev); err != nil {
		return err
	}
	if kind == EvElect {
		k.mon.totals.Elections++
	}
	return nil
}

func (k kernel) Delivered(_ uint32, to int) error {
	ev := k.event(EvDeliver, to)
	ev.Msg = k.cur
	if k.cur.Type != AppMessage {
		k.mon.totals.Delivered++
	}
	return k.emit(ev)
}

func (k kernel) Dropped(_ uint32, node int, reason string) error {
	return k.dropped(&k.cur, node, reason)
}

func (k kernel) Fired(i int, _ uint32) error {
	ev := k.event(EvTimer, i)
	ev.Name = k.curTimer
	return k.emit(ev)
}

func (k kernel) RuleFired(i int, ref uint32) error {
	e := &k.ctx.effects[ref]
	ev := k.event(EvRule, i)
	ev.Rule = e.Rule
	ev.Why = e.Why
	return k.emit(ev)
}

func (k kernel) Violation(property, detail string, nodes, cycle []int) error {
	return k.violation(property, detail, nodes, cycle)
}
