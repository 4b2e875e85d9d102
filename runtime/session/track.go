package session

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// track follows the run through its trace events: it groups them into batches (one
// step, or one intervention), remembers when each message in flight was sent and which
// rules fired last, and keeps the latest events for the narration log. The same code
// runs on a live step and on a replay, which is what makes a rebuilt view equal a live one.
type track struct {
	capture bool // build batch frames (off while replaying for a seek)
	batchNo int
	cur     current

	sentAt    map[int64]int // message id -> send time, while in flight
	lit       []litRule     // the rules of the latest batch that fired any
	rules     [][]string    // per node index: the rules of its latest batch that fired any
	ruleBatch []int
	ring      eventRing       // the latest Recent trace events, encoded
	nodes     []protocol.Node // as last published
	line      []byte
	net       sim.Network // the network model as of the latest batch
	lastSeq   int64       // seq of the latest trace event, -1 before the first
}

type current struct {
	events   []byte // encoded events, comma separated
	count    int
	hasRules bool
	sends    []int64 // the messages sent in the batch, ascending
	due      []int   // when each of sends is due (sim.Due), reused
}

type litRule struct {
	node int // id
	rule string
}

// batch is one published unit: the events of a step or of an intervention.
type batch struct {
	step, t int
	seq     int64           // seq of the batch's last event (of the run's, if it has none)
	events  int             // trace events in the batch
	wire    *protocol.Batch // while capturing (a pointer: replays pass batches by the thousand)
}

// sameView reports whether a process looks the same in two views (rules aside: they
// are a snapshot's only).
func sameView(v, o *protocol.Node) bool {
	return v.ID == o.ID && v.Alive == o.Alive && v.CS == o.CS && v.Token == o.Token && v.Leader == o.Leader &&
		v.Group == o.Group && bytes.Equal(v.State, o.State)
}

// reset forgets everything: a new run (or a replay) starts.
func (s *Session) reset() {
	n := len(s.cfg.IDs)
	s.batchNo = 0
	s.cur = current{}
	s.sentAt = make(map[int64]int)
	s.lit = nil
	s.rules = make([][]string, n)
	s.ruleBatch = make([]int, n)
	for i := range s.ruleBatch {
		s.ruleBatch[i] = -1
	}
	s.ring.reset()
	s.nodes = nil
	s.net = s.cfg.Network
	s.lastSeq = -1
}

func (s *Session) begin() {
	s.batchNo++
	s.cur.events = s.cur.events[:0]
	s.cur.count = 0
	s.cur.hasRules = false
	s.cur.sends = s.cur.sends[:0]
}

// discard abandons the current batch (an intervention was refused, or the run failed).
func (s *Session) discard() { s.begin() }

// onEvent is the simulation's sink.
func (s *Session) onEvent(ev *sim.Event) {
	s.lastSeq = ev.Seq
	s.line = s.enc.Append(s.line[:0], ev)
	s.ring.add(s.line)
	if s.capture {
		if s.cur.count > 0 {
			s.cur.events = append(s.cur.events, ',')
		}
		s.cur.events = append(s.cur.events, s.line...)
	}
	s.cur.count++
	switch ev.Type {
	case sim.EvSend:
		s.sentAt[ev.Msg.ID] = ev.T
		s.cur.sends = append(s.cur.sends, ev.Msg.ID)
	case sim.EvDeliver, sim.EvDrop:
		delete(s.sentAt, ev.Msg.ID)
	case sim.EvRule:
		id := s.cfg.IDs[ev.Node]
		if !s.cur.hasRules {
			s.lit = s.lit[:0]
			s.cur.hasRules = true
		}
		s.lit = append(s.lit, litRule{node: id, rule: ev.Rule})
		if s.ruleBatch[ev.Node] != s.batchNo {
			s.rules[ev.Node] = s.rules[ev.Node][:0]
			s.ruleBatch[ev.Node] = s.batchNo
		}
		s.rules[ev.Node] = append(s.rules[ev.Node], ev.Rule)
	}
}

// end closes the current batch; while capturing it keeps the batch as the wire gives
// it, with the nodes whose view changed and the arrival time of every message it sent.
func (s *Session) end() batch {
	b := batch{step: s.sim.Steps(), t: s.sim.Now(), seq: s.lastSeq, events: s.cur.count}
	nw := s.sim.Network()
	netChanged, holdChanged := nw != s.net, nw.Hold != s.net.Hold
	s.net = nw
	if !s.capture {
		return b
	}
	snap := s.sim.NodesSnapshot()
	w := &protocol.Batch{Step: b.step, T: b.t}
	// The events are copied: the buffer they were collected in serves the next batch.
	w.Events = make([]byte, 0, len(s.cur.events)+2)
	w.Events = append(append(append(w.Events, '['), s.cur.events...), ']')
	views := views(&snap)
	for i := range views {
		if i < len(s.nodes) && sameView(&views[i], &s.nodes[i]) {
			continue
		}
		w.Nodes = append(w.Nodes, views[i])
	}
	s.nodes = views
	w.Arrive = make(protocol.Arrivals, 0, len(s.cur.sends))
	s.cur.due = slices.Grow(s.cur.due[:0], len(s.cur.sends))[:len(s.cur.sends)]
	s.sim.Due(s.cur.sends, s.cur.due)
	for k, id := range s.cur.sends {
		if s.cur.due[k] == sim.NotInFlight {
			continue // lost on the way (its drop event is in the batch), or delivered already
		}
		w.Arrive = append(w.Arrive, protocol.Arrival{Msg: id, At: s.cur.due[k]})
	}
	if netChanged {
		v := protocol.NetworkOf(&nw)
		w.Network = &v
	}
	if holdChanged {
		// Hold mode switched: every message in flight got held, or an arrival time.
		inFlight := s.sim.InFlight()
		w.Retime = make(protocol.Arrivals, len(inFlight))
		for k, f := range inFlight {
			w.Retime[k] = protocol.Arrival{Msg: f.Msg.ID, At: f.At}
		}
	}
	b.wire = w
	return b
}

// syncNodes records the current views as published (after a replay).
func (s *Session) syncNodes() {
	snap := s.sim.Snapshot()
	s.nodes = views(&snap)
}

func views(snap *sim.Snapshot) []protocol.Node {
	out := make([]protocol.Node, len(snap.Nodes))
	for i, n := range snap.Nodes {
		g := 0
		if i < len(snap.Groups) {
			g = snap.Groups[i]
		}
		out[i] = protocol.Node{ID: n.ID, Alive: n.Alive, CS: n.InCS, Token: n.Token, Leader: n.Leader, Group: g, State: n.State}
	}
	return out
}

// recent returns the latest events, oldest first (valid until the next event).
func (s *Session) recent() []json.RawMessage { return s.ring.events() }
