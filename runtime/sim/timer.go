package sim

import (
	"slices"
)

type timerSlot struct {
	node  int
	name  string
	state slotState
	bg    bool
}

// timers is every node's armed timers: slots reused through a free list, found by node
// and name.
//
// Invariant: byNode[i][name] is the live slot of node i's timer name, and a timer's slot
// is in byNode exactly while it is live; active counts the live timers that are not
// background timers and never goes below zero.
type timers struct {
	pool[timerSlot]
	byNode []map[string]int32
	active int // armed timers that are not background timers
}

// kill marks a live timer dead: its queued item is skipped when popped.
func (tm *timers) kill(slot int32) {
	t := &tm.slots[slot]
	if t.state == slotLive {
		t.state = slotDead
		tm.deactivate(t)
	}
}

func (tm *timers) deactivate(t *timerSlot) {
	if t.bg {
		return
	}
	tm.active--
	if tm.active < 0 {
		broken("armed timer count below zero after %s of node %d", t.name, t.node)
	}
}

// disarm takes node i's timer name out of the book: it will not fire.
func (tm *timers) disarm(i int, name string) (int32, bool) {
	slot, ok := tm.byNode[i][name]
	if ok {
		tm.kill(slot)
		delete(tm.byNode[i], name)
	}
	return slot, ok
}

// disarmAll forgets every timer of node i (it crashed).
func (tm *timers) disarmAll(i int) {
	for _, slot := range tm.byNode[i] {
		tm.kill(slot)
	}
	clear(tm.byNode[i])
}

func (s *Sim) setTimer(i int, name string, after int) {
	tm := &s.tm
	if old, ok := tm.byNode[i][name]; ok {
		tm.kill(old)
	}
	slot := tm.alloc()
	bg := slices.Contains(s.spec.BackgroundTimers, name)
	tm.slots[slot] = timerSlot{node: i, name: name, state: slotLive, bg: bg}
	if !bg {
		tm.active++
	}
	if tm.byNode[i] == nil {
		tm.byNode[i] = make(map[string]int32)
	}
	tm.byNode[i][name] = slot
	s.q.schedule(item{t: s.now + max(after, 0), kind: itemTimer, slot: slot})
}

func (s *Sim) fireTimer(slot int32) error {
	tm := &s.tm
	t := tm.slots[slot]
	if t.state != slotLive {
		broken("timer slot %d fired while not armed", slot)
	}
	if got, ok := tm.byNode[t.node][t.name]; !ok || got != slot {
		broken("timer %s of node %d fired from slot %d, but the book holds it at %d (%t)", t.name, t.node, slot, got, ok)
	}
	tm.release(slot)
	delete(tm.byNode[t.node], t.name)
	tm.deactivate(&t)
	s.curTimer = t.name
	return Take(kernel{s}, &Transition{Kind: TTimer, Node: t.node})
}

// fireNow fires node a.Node's armed timer a.Timer at once, as if it had come due. In
// hold mode the user (or a counterexample of the explorer) chooses the order of
// deliveries; this lets a time-out be placed in that order too. The timer's scheduled
// expiry is cancelled, so it fires once.
func (s *Sim) fireNow(a *Action, live bool) error {
	if no, err := s.refused(a, live); no {
		return err
	}
	if _, ok := s.tm.disarm(a.Node, a.Timer); !ok {
		return refuse(live, a, "%s has no timer %q armed", s.name(a.Node), a.Timer)
	}
	s.curTimer = a.Timer
	return Take(kernel{s}, &Transition{Kind: TTimer, Node: a.Node})
}
