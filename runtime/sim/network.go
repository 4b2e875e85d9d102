package sim

import (
	"slices"
)

// Network is the network model of a run.
type Network struct {
	DelayMin, DelayMax int     // uniform in [min, max]; min == max is a fixed delay
	FIFO               bool    // channels deliver in send order
	Loss               float64 // probability that a message is lost
	Hold               bool    // messages wait until an ActDeliver picks them
}

// Drop reasons, as written in the trace.
const (
	ReasonLost      = "lost"
	ReasonPartition = "partition"
	ReasonCrashed   = "receiver crashed"
	ReasonUser      = "dropped by the user"
)

type slotState uint8

const (
	slotFree slotState = iota
	slotLive
	slotDead // removed from the run; its queue item is skipped when popped
)

type msgSlot struct {
	msg   Message
	at    int // arrival time
	state slotState
	held  bool
	bg    bool // a background message (heartbeat): it never keeps a run from being quiet
}

// network is the messages of a run on their way: slots reused through a free list,
// the held ones of hold mode, the FIFO bookkeeping and the partition.
//
// Invariant: inflight counts the live slots that are not background messages; it
// never goes below zero, and a slot is delivered or freed only while it is in use.
type network struct {
	model   Network // in force: Config.Network, then as ActNetwork changed it
	lastArr []int   // FIFO: last arrival time per channel (from*n+to)
	group   []int   // partition group per node; all equal when connected

	msgs       pool[msgSlot]
	held       []int32 // hold mode: slots in send order
	nextID     int64
	inflight   int
	armedDrops []Action // drop filters waiting for a matching send
}

func newNetwork(model Network, n int) network {
	return network{model: model, lastArr: make([]int, n*n), group: make([]int, n), nextID: 1}
}

func (nw *network) release(slot int32) {
	if nw.msgs.slots[slot].state == slotFree {
		broken("message slot %d freed twice", slot)
	}
	nw.msgs.release(slot)
}

// leave stops counting a message as in flight.
func (nw *network) leave(ms *msgSlot) {
	if ms.bg {
		return
	}
	nw.inflight--
	if nw.inflight < 0 {
		broken("in-flight count below zero after message %d left", ms.msg.ID)
	}
}

// live returns the live slots that match keep, oldest message first.
func (nw *network) live(keep func(ms *msgSlot) bool) []int32 {
	var out []int32
	for k := range nw.msgs.slots {
		if ms := &nw.msgs.slots[k]; ms.state == slotLive && keep(ms) {
			out = append(out, int32(k))
		}
	}
	slices.SortFunc(out, func(a, b int32) int { return int(nw.msgs.slots[a].msg.ID - nw.msgs.slots[b].msg.ID) })
	return out
}

// fifoFromInFlight sets each channel's last arrival to the latest message in flight on
// it, so messages sent from now on arrive after them.
func (nw *network) fifoFromInFlight(n int) {
	clear(nw.lastArr)
	for k := range nw.msgs.slots {
		if ms := &nw.msgs.slots[k]; ms.state == slotLive && !ms.held {
			ch := ms.msg.From*n + ms.msg.To
			nw.lastArr[ch] = max(nw.lastArr[ch], ms.at)
		}
	}
}

// holdInFlight parks every scheduled message, in send order. Its queued item cannot be
// taken out of the heap: the old slot is marked dead (skipped when popped) and the
// message moves to a new, held slot.
func (nw *network) holdInFlight() {
	for _, old := range nw.live(func(ms *msgSlot) bool { return !ms.held }) {
		ms := nw.msgs.slots[old]
		nw.msgs.slots[old].state = slotDead
		slot := nw.msgs.alloc()
		ms.held = true
		nw.msgs.slots[slot] = ms
		nw.held = append(nw.held, slot)
	}
}

// launch numbers the message in play (cur) and writes its send event; a drop armed
// for it takes it at once (sent false).
func (s *Sim) launch() (sent bool, err error) {
	nw := &s.nw
	m := &s.cur
	m.ID = nw.nextID
	nw.nextID++
	if m.Type == AppMessage {
		s.mon.totals.App++ // not the algorithm's: its costs leave it out
	} else {
		s.mon.totals.Messages++
	}
	ev := s.event(EvSend, m.From)
	ev.Msg = *m
	if err := s.emit(ev); err != nil {
		return false, err
	}
	for k := range nw.armedDrops {
		if nw.armedDrops[k].matches(m) {
			nw.armedDrops = slices.Delete(nw.armedDrops, k, k+1)
			return false, s.dropped(m, m.From, ReasonUser)
		}
	}
	return true, nil
}

// post puts the message in play (cur), sent, on its way, unless the network loses it.
func (s *Sim) post() error {
	nw := &s.nw
	m := &s.cur
	if nw.model.Loss > 0 && s.rng.Float64() < nw.model.Loss {
		return s.dropped(m, m.From, ReasonLost)
	}
	at := s.arrival(m)
	slot := nw.msgs.alloc()
	bg := len(s.spec.BackgroundMessages) > 0 && slices.Contains(s.spec.BackgroundMessages, m.Type)
	hold := nw.model.Hold
	nw.msgs.slots[slot] = msgSlot{msg: *m, at: at, state: slotLive, held: hold, bg: bg}
	if !bg {
		nw.inflight++
	}
	if hold {
		nw.held = append(nw.held, slot)
		return nil
	}
	s.q.schedule(item{t: at, kind: itemMessage, slot: slot})
	return nil
}

// arrival draws a message's arrival time from the delay in force, after every message
// in flight on its channel when channels are FIFO.
func (s *Sim) arrival(m *Message) int {
	nw := &s.nw
	delay := nw.model.DelayMin
	if nw.model.DelayMax > nw.model.DelayMin {
		delay += s.rng.IntN(nw.model.DelayMax - nw.model.DelayMin + 1)
	}
	at := s.now + delay
	if nw.model.FIFO {
		ch := m.From*s.n + m.To
		at = max(at, nw.lastArr[ch])
		nw.lastArr[ch] = at
	}
	return at
}

func (s *Sim) dropped(m *Message, node int, reason string) error {
	if m.Type != AppMessage {
		s.mon.totals.Dropped++
	}
	ev := s.event(EvDrop, node)
	ev.Msg = *m
	ev.Reason = reason
	return s.emit(ev)
}

// deliverSlot takes message slot out of the network: it arrives.
func (s *Sim) deliverSlot(slot int32) error {
	ms := &s.nw.msgs.slots[slot]
	if ms.state != slotLive {
		broken("delivering message slot %d, which is not in use", slot)
	}
	s.cur = ms.msg
	s.nw.leave(ms)
	s.nw.release(slot)
	m := &s.cur
	return Take(kernel{s}, &Transition{Kind: TDeliver, From: m.From, To: m.To, App: m.Type == AppMessage})
}

func (s *Sim) deliverHeld(a *Action, live bool) error {
	nw := &s.nw
	for k, slot := range nw.held {
		m := &nw.msgs.slots[slot].msg
		if m.ID != a.Msg {
			continue
		}
		if nw.model.FIFO {
			// FIFO channels: only the oldest held message of a channel may go (the held
			// list is in send order).
			for _, o := range nw.held[:k] {
				if om := &nw.msgs.slots[o].msg; om.From == m.From && om.To == m.To {
					return refuse(live, a, "FIFO: message %d waits behind message %d on the channel %s -> %s",
						m.ID, om.ID, s.name(m.From), s.name(m.To))
				}
			}
		}
		nw.held = slices.Delete(nw.held, k, k+1)
		if live {
			s.steps++ // the user's pick is the network's step (Action.TakesStep)
		}
		return s.deliverSlot(slot)
	}
	return refuse(live, a, "message %d is not held in flight", a.Msg)
}

// setNetwork changes the network model from now on (see NetChange for the rules about
// messages in flight). Everything it touches goes in send order, so the same change
// at the same step always gives the same run.
func (s *Sim) setNetwork(c *NetChange) {
	nw := &s.nw
	old := nw.model
	nw.model = c.Apply(nw.model)
	if s.cfg.Pending <= 0 {
		// The liveness bound follows the slowest network the run has had, so a request
		// made while messages crawled is not reported for the network's slowness.
		cfg := s.cfg
		cfg.Network = nw.model
		if p := defaultPending(&cfg); p > s.mon.pendingLimit {
			s.mon.pendingLimit = p
		}
	}
	if nw.model.FIFO && !old.FIFO {
		nw.fifoFromInFlight(s.n)
	}
	switch {
	case nw.model.Hold && !old.Hold:
		nw.holdInFlight()
	case !nw.model.Hold && old.Hold:
		s.releaseHeld()
	}
}

// releaseHeld gives every held message, in send order, an arrival time drawn now.
func (s *Sim) releaseHeld() {
	nw := &s.nw
	if nw.model.FIFO {
		nw.fifoFromInFlight(s.n)
	}
	for _, slot := range nw.held {
		ms := &nw.msgs.slots[slot]
		ms.held = false
		ms.at = s.arrival(&ms.msg)
		s.q.schedule(item{t: ms.at, kind: itemMessage, slot: slot})
	}
	nw.held = nw.held[:0]
}

// drop removes a message in flight chosen by id or filter; a filter that matches
// nothing in flight is armed for the next matching send.
func (s *Sim) drop(a *Action, live bool) error {
	nw := &s.nw
	best := int32(-1)
	for slot := range nw.msgs.slots {
		ms := &nw.msgs.slots[slot]
		if ms.state == slotLive && a.matches(&ms.msg) && (best < 0 || ms.msg.ID < nw.msgs.slots[best].msg.ID) {
			best = int32(slot)
		}
	}
	if best < 0 {
		if a.Msg != 0 {
			return refuse(live, a, "message %d is not in flight", a.Msg)
		}
		nw.armedDrops = append(nw.armedDrops, *a)
		return nil
	}
	return s.removeInFlight(best, ReasonUser)
}

// removeInFlight takes a message out of the network: it is lost.
func (s *Sim) removeInFlight(slot int32, reason string) error {
	nw := &s.nw
	ms := &nw.msgs.slots[slot]
	s.cur = ms.msg
	nw.leave(ms)
	if ms.held {
		nw.held = slices.DeleteFunc(nw.held, func(x int32) bool { return x == slot })
		nw.release(slot)
	} else {
		ms.state = slotDead
	}
	return Take(kernel{s}, &Transition{Kind: TLose, To: s.cur.To, Reason: reason})
}

func (s *Sim) partition(groups [][]int) error {
	clear(s.nw.group)
	ev := s.event(EvPartition, -1)
	ev.Groups = make([][]int, len(groups))
	for g, members := range groups {
		ids := make([]int, len(members))
		for k, i := range members {
			s.nw.group[i] = g + 1
			ids[k] = s.cfg.IDs[i]
		}
		ev.Groups[g] = ids
	}
	return s.emit(ev)
}
