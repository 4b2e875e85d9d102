package session

import (
	"bytes"
	"slices"

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
	ring      eventRing  // the latest Recent trace events, encoded
	nodes     []nodeView // as last published
	line      []byte
	net       sim.Network // the network model as of the latest batch
	lastSeq   int64       // seq of the latest trace event, -1 before the first
}

type current struct {
	events   []byte // encoded events, comma separated
	count    int
	hasRules bool
	sends    []int64
}

type litRule struct {
	node int // id
	rule string
}

// batch is one published unit: the events of a step or of an intervention.
type batch struct {
	step, t int
	seq     int64 // seq of the batch's last event (of the run's, if it has none)
	events  int   // trace events in the batch
	json    []byte
}

type nodeView struct {
	id     int
	alive  bool
	cs     bool
	token  bool
	leader int
	group  int
	state  []byte
}

func (v *nodeView) equal(o *nodeView) bool {
	return v.id == o.id && v.alive == o.alive && v.cs == o.cs && v.token == o.token && v.leader == o.leader &&
		v.group == o.group && bytes.Equal(v.state, o.state)
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

// end closes the current batch; while capturing it encodes the batch for the wire,
// with the nodes whose view changed and the arrival time of every message it sent.
func (s *Session) end() batch {
	b := batch{step: s.sim.Steps(), t: s.sim.Now(), seq: s.lastSeq, events: s.cur.count}
	nw := s.sim.Network()
	netChanged, holdChanged := nw != s.net, nw.Hold != s.net.Hold
	s.net = nw
	if !s.capture {
		return b
	}
	snap := s.sim.Snapshot()
	buf := make([]byte, 0, 64+len(s.cur.events))
	buf = append(buf, `{"step":`...)
	buf = appendInt(buf, b.step)
	buf = append(buf, `,"t":`...)
	buf = appendInt(buf, b.t)
	buf = append(buf, `,"events":[`...)
	buf = append(buf, s.cur.events...)
	buf = append(buf, `],"nodes":[`...)
	views := views(&snap)
	first := true
	for i := range views {
		if i < len(s.nodes) && views[i].equal(&s.nodes[i]) {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = appendNode(buf, &views[i], nil)
	}
	s.nodes = views
	buf = append(buf, `],"arrive":{`...)
	first = true
	for _, id := range s.cur.sends {
		k, found := slices.BinarySearchFunc(snap.InFlight, id, func(f sim.InFlight, id int64) int {
			return int(f.Msg.ID - id)
		})
		if !found {
			continue // lost on the way: its drop event is in the batch
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = append(buf, '"')
		buf = appendInt(buf, int(id))
		buf = append(buf, `":`...)
		buf = appendInt(buf, snap.InFlight[k].At)
	}
	buf = append(buf, '}')
	if netChanged {
		buf = append(buf, `,"network":`...)
		buf = appendNetwork(buf, &nw)
	}
	if holdChanged {
		// Hold mode switched: every message in flight got held, or an arrival time.
		buf = append(buf, `,"retime":{`...)
		for k := range snap.InFlight {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, '"')
			buf = appendInt(buf, int(snap.InFlight[k].Msg.ID))
			buf = append(buf, `":`...)
			buf = appendInt(buf, snap.InFlight[k].At)
		}
		buf = append(buf, '}')
	}
	buf = append(buf, '}')
	b.json = buf
	return b
}

// syncNodes records the current views as published (after a replay).
func (s *Session) syncNodes() {
	snap := s.sim.Snapshot()
	s.nodes = views(&snap)
}

func views(snap *sim.Snapshot) []nodeView {
	out := make([]nodeView, len(snap.Nodes))
	for i, n := range snap.Nodes {
		g := 0
		if i < len(snap.Groups) {
			g = snap.Groups[i]
		}
		out[i] = nodeView{id: n.ID, alive: n.Alive, cs: n.InCS, token: n.Token, leader: n.Leader, group: g, state: n.State}
	}
	return out
}

// recent returns the latest events, oldest first (valid until the next event).
func (s *Session) recent() [][]byte { return s.ring.events() }
