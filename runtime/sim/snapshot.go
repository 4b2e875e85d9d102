package sim

import (
	"errors"
	"maps"
	"slices"
)

// NodeView is what the inspector shows of one node.
type NodeView struct {
	ID     int
	Alive  bool
	InCS   bool
	Token  bool   // holds the token (token algorithms)
	Leader int    // id, -1: none recorded
	State  []byte // the node's canonical JSON (Encode)
}

// InFlight is a message on its way, with its arrival time (-1 while held).
type InFlight struct {
	Msg Message
	At  int
}

// Snapshot is the whole visible state of a run at one step.
type Snapshot struct {
	Step     int
	T        int
	Nodes    []NodeView
	InFlight []InFlight // by message id
	Groups   []int      // partition group per node
}

// Snapshot returns the current state; nothing in it aliases the run.
func (s *Sim) Snapshot() Snapshot {
	snap := s.NodesSnapshot()
	snap.InFlight = s.InFlight()
	return snap
}

// NodesSnapshot is Snapshot without the messages in flight (InFlight nil): what a
// caller that follows the run batch by batch needs, without copying and sorting every
// message in the network each time (Due answers for the messages it cares about).
func (s *Sim) NodesSnapshot() Snapshot {
	snap := Snapshot{Step: s.steps, T: s.now, Nodes: make([]NodeView, s.n), Groups: slices.Clone(s.nw.group)}
	var w StateWriter
	for i, nd := range s.nodes {
		w.Reset()
		nd.Encode(&w)
		snap.Nodes[i] = NodeView{
			ID: s.cfg.IDs[i], Alive: s.alive[i], InCS: s.cs.in[i], Leader: s.mon.leaderOf[i],
			State: slices.Clone(w.Bytes()),
		}
		if th, ok := nd.(TokenHolder); ok {
			snap.Nodes[i].Token = s.alive[i] && th.HoldsToken()
		}
	}
	return snap
}

// NotInFlight is Due's answer for a message that has left the network.
const NotInFlight = -2

// Due puts in due[k] when message ids[k] is due, as InFlight says it (its arrival
// time, -1 while held), or NotInFlight. ids must ascend. It looks at each message in
// the network once and copies none.
func (s *Sim) Due(ids []int64, due []int) {
	for k := range due[:len(ids)] {
		due[k] = NotInFlight
	}
	if len(ids) == 0 {
		return
	}
	lo, hi := ids[0], ids[len(ids)-1]
	for k := range s.nw.msgs.slots {
		ms := &s.nw.msgs.slots[k]
		if ms.state != slotLive || ms.msg.ID < lo || ms.msg.ID > hi {
			continue
		}
		j, found := slices.BinarySearch(ids, ms.msg.ID)
		if !found {
			continue
		}
		due[j] = ms.at
		if ms.held {
			due[j] = -1
		}
	}
}

// InFlight lists the messages in the network, oldest first.
func (s *Sim) InFlight() []InFlight {
	var out []InFlight
	for k := range s.nw.msgs.slots {
		ms := &s.nw.msgs.slots[k]
		if ms.state != slotLive {
			continue
		}
		at := ms.at
		if ms.held {
			at = -1
		}
		out = append(out, InFlight{Msg: ms.msg.Clone(), At: at})
	}
	slices.SortFunc(out, func(a, b InFlight) int { return int(a.Msg.ID - b.Msg.ID) })
	return out
}

// Node returns node i's state machine (read only: clone it before changing it).
func (s *Sim) Node(i int) Node { return s.nodes[i] }

// Alive reports whether node i is up.
func (s *Sim) Alive(i int) bool { return s.alive[i] }

// InCS reports whether node i is in the critical section.
func (s *Sim) InCS(i int) bool { return s.cs.in[i] }

// Waiting reports whether node i asked for the CS and has not entered it yet.
func (s *Sim) Waiting(i int) bool { return s.mon.pendingSince[i] >= 0 }

// Group is node i's side of the partition (Snapshot.Groups).
func (s *Sim) Group(i int) int { return s.nw.group[i] }

// Leader is the id node i takes as leader, -1 while none.
func (s *Sim) Leader(i int) int { return s.mon.leaderOf[i] }

// Armed lists the names of node i's armed timers, in name order.
func (s *Sim) Armed(i int) []string { return slices.Sorted(maps.Keys(s.tm.byNode[i])) }

// Intervention is a live action taken just before step Step; recording them is what
// makes an interactive run reproducible. An action that takes a step (TakesStep: a
// held message the user delivers) is step Step+1 itself; the state at a step includes
// the other interventions recorded for it, never the next one that takes a step.
type Intervention struct {
	Step   int
	Action Action
}

// Replay rebuilds a run from its configuration and interventions and advances it to
// the given step (or its end, if sooner). Seek is a replay: runs are cheap to redo.
func Replay(cfg Config, ivs []Intervention, step int, sink Sink) (*Sim, error) {
	return ReplayWhile(cfg, ivs, step, sink, nil)
}

// ErrStopped is ReplayWhile's error when goOn said stop.
var ErrStopped = errors.New("replay stopped")

// ReplayWhile is Replay that asks goOn (if not nil) before each step whether to go on,
// and returns the run where it stands with ErrStopped when it says no: an export
// bounded in time or size stops between steps and can say which step it reached.
func ReplayWhile(cfg Config, ivs []Intervention, step int, sink Sink, goOn func(*Sim) bool) (*Sim, error) {
	s, err := New(cfg, sink)
	if err != nil {
		return nil, err
	}
	k := 0
	for {
		for k < len(ivs) && ivs[k].Step <= s.steps && !ivs[k].Action.TakesStep() {
			if err := s.Apply(ivs[k].Action); err != nil {
				return nil, err
			}
			k++
		}
		if s.steps >= step {
			return s, nil
		}
		if goOn != nil && !goOn(s) {
			return s, ErrStopped
		}
		if k < len(ivs) && ivs[k].Step <= s.steps {
			// The user took this step (a held message delivered), not the network.
			if err := s.Apply(ivs[k].Action); err != nil {
				return nil, err
			}
			k++
			continue
		}
		ok, err := s.Step()
		if err != nil {
			return nil, err
		}
		if !ok && k == len(ivs) {
			return s, nil
		}
		if !ok {
			// The run was stuck when this intervention came: apply it now.
			if err := s.Apply(ivs[k].Action); err != nil {
				return nil, err
			}
			k++
		}
	}
}
