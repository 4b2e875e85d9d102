// Package causal computes Lamport's happened-before relation over a run's trace: the
// Lamport clock and the vector clock of every event of a process, worked out from the
// trace alone (never from an algorithm's own clock). The space-time diagram in the
// browser does the same in static/causal.js; the browser tests check one against the
// other, and exports (a ShiViz log) can take their clocks from here.
//
// The model is the textbook one. The events of a process are the trace events that
// carry a node and are something the process did or underwent: send, deliver, request,
// enter, exit, elect, leader, crash, recover, timer. Each ticks its process's clocks;
// a deliver first takes the maximum with the clocks its message was sent with. A rule
// is not an event of its own (it names the code the preceding event ran), a drop is
// the network's doing, and violations, partitions and heals belong to no process. A
// process keeps its clocks across a crash and a recovery: its line in the diagram
// goes on, and so does its process order.
package causal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// IsProcessEvent reports whether a trace event of this type is an event of a process.
func IsProcessEvent(typ string) bool {
	switch typ {
	case "send", "deliver", "request", "enter", "exit", "elect", "leader", "crash", "recover", "timer":
		return true
	}
	return false
}

// Event is what causality needs of a trace event.
type Event struct {
	Type string // the trace v1 type
	Node int    // the process's position (0..n-1), not its id; -1 when none
	Msg  int64  // send and deliver: the message id
}

// Clock is the clocks of one event.
type Clock struct {
	Process int   // position of the process; -1: not a process event (no clocks)
	Lamport int   // Lamport's scalar clock
	Vector  []int // one entry per process position
}

// Tracker computes clocks one event at a time, in trace order.
type Tracker struct {
	n       int
	lamport []int
	vec     [][]int
	sent    map[int64]Clock // clocks of the sends whose message is still on its way
}

// NewTracker starts every clock of n processes at zero.
func NewTracker(n int) *Tracker {
	t := &Tracker{n: n, lamport: make([]int, n), vec: make([][]int, n), sent: make(map[int64]Clock)}
	for i := range t.vec {
		t.vec[i] = make([]int, n)
	}
	return t
}

// Next returns the clocks of the next event of the trace.
func (t *Tracker) Next(ev Event) Clock {
	p := ev.Node
	if !IsProcessEvent(ev.Type) || p < 0 || p >= t.n {
		if ev.Type == "drop" {
			delete(t.sent, ev.Msg)
		}
		return Clock{Process: -1}
	}
	if ev.Type == "deliver" {
		if s, ok := t.sent[ev.Msg]; ok {
			t.lamport[p] = max(t.lamport[p], s.Lamport)
			for k, v := range s.Vector {
				t.vec[p][k] = max(t.vec[p][k], v)
			}
			delete(t.sent, ev.Msg)
		}
	}
	t.lamport[p]++
	t.vec[p][p]++
	c := Clock{Process: p, Lamport: t.lamport[p], Vector: slices.Clone(t.vec[p])}
	if ev.Type == "send" {
		t.sent[ev.Msg] = c
	}
	return c
}

// Compute returns the clocks of every event of a trace of n processes.
func Compute(n int, events []Event) []Clock {
	t := NewTracker(n)
	out := make([]Clock, len(events))
	for i, ev := range events {
		out[i] = t.Next(ev)
	}
	return out
}

// HappenedBefore reports whether a happened before b (a -> b, strictly): both are
// process events and b's vector clock knows of a.
func HappenedBefore(a, b Clock) bool {
	if a.Process < 0 || b.Process < 0 {
		return false
	}
	// a -> b iff b has seen a's own count; two distinct events never share a vector.
	return a.Vector[a.Process] <= b.Vector[a.Process] && !slices.Equal(a.Vector, b.Vector)
}

// Concurrent reports whether two process events are unordered by happened-before.
func Concurrent(a, b Clock) bool {
	return a.Process >= 0 && b.Process >= 0 && !slices.Equal(a.Vector, b.Vector) &&
		!HappenedBefore(a, b) && !HappenedBefore(b, a)
}

// FromSim takes what causality needs from a kernel event (its Node is a position).
func FromSim(ev *sim.Event) Event {
	e := Event{Type: ev.Type.String(), Node: ev.Node}
	switch ev.Type {
	case sim.EvSend, sim.EvDeliver, sim.EvDrop:
		e.Msg = ev.Msg.ID
	case sim.EvEnd, sim.EvViolation, sim.EvPartition, sim.EvHeal:
		e.Node = -1
	}
	return e
}

// ParseTrace reads trace v1 JSON Lines, whose nodes are ids, into events whose nodes
// are positions in ids.
func ParseTrace(data []byte, ids []int) ([]Event, error) {
	pos := make(map[int]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	var out []Event
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var ev struct {
			Type string
			Node *int
			Msg  *struct{ ID int64 }
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		e := Event{Type: ev.Type, Node: -1}
		if ev.Node != nil {
			p, ok := pos[*ev.Node]
			if !ok {
				return nil, fmt.Errorf("line %d: node %d is not one of the ids %v", n+1, *ev.Node, ids)
			}
			e.Node = p
		}
		if ev.Msg != nil {
			e.Msg = ev.Msg.ID
		}
		out = append(out, e)
	}
	return out, nil
}
