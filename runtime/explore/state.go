package explore

import (
	"encoding/binary"
	"errors"
)

// A global state of the search: every node's interned state and the kernel's view of
// it (alive, in the CS, waiting, leader), the timers, the messages in flight and how
// far the workload has got. Its canonical encoding (key) is what the visited set
// stores: two states are the same exactly when their keys are equal.

type nodeSt struct {
	id      uint32 // interned state; meaningless while crashed
	alive   bool
	inCS    bool
	pending bool  // asked for the CS and not yet in it
	leader  int32 // id this node takes as leader, -1: none (election algorithms)
	cursor  int32 // untimed: next of its workload events
	csLeft  int32 // timed, cs > 0: time left in the CS
}

type timerSt struct {
	node uint16
	name uint16
	left int32 // timed: time until it fires
}

// flight is a message in the network. In timed searches lo and hi are the time left
// until its earliest and latest arrival.
type flight struct {
	msg    uint32
	lo, hi int32
}

type state struct {
	now    int32  // timed: the time, while workload events remain (then 0)
	cursor int32  // timed: next workload event; untimed: next partition/heal event
	avail  uint64 // drop events not yet used (timed: and already due)
	groups []uint8
	nodes  []nodeSt
	timers []timerSt // by (node, name)
	msgs   []flight  // canonical order: see insertFlight
}

func newState(m *model) *state {
	s := &state{nodes: make([]nodeSt, m.n)}
	if m.parts {
		s.groups = make([]uint8, m.n)
	}
	return s
}

func (s *state) copyFrom(o *state) {
	s.now, s.cursor, s.avail = o.now, o.cursor, o.avail
	s.groups = append(s.groups[:0], o.groups...)
	s.nodes = append(s.nodes[:0], o.nodes...)
	s.timers = append(s.timers[:0], o.timers...)
	s.msgs = append(s.msgs[:0], o.msgs...)
}

func (s *state) group(i int) uint8 {
	if s.groups == nil {
		return 0
	}
	return s.groups[i]
}

// encode appends the canonical key of s.
func (m *model) encode(b []byte, s *state) []byte {
	if m.timed {
		b = binary.AppendUvarint(b, uint64(s.now))
		b = binary.AppendUvarint(b, uint64(s.cursor))
	} else if len(m.global) > 0 {
		b = binary.AppendUvarint(b, uint64(s.cursor))
	}
	if len(m.drops) > 0 {
		b = binary.AppendUvarint(b, s.avail)
	}
	if m.parts {
		b = append(b, s.groups...)
	}
	for i := range s.nodes {
		nd := &s.nodes[i]
		if !m.timed && len(m.perNode[i]) > 0 {
			b = binary.AppendUvarint(b, uint64(nd.cursor))
		}
		if !nd.alive {
			b = append(b, 0)
			continue
		}
		b = binary.AppendUvarint(b, uint64(nd.id)+1)
		var flags byte
		if nd.inCS {
			flags |= 1
		}
		if nd.pending {
			flags |= 2
		}
		b = append(b, flags)
		if m.election {
			b = binary.AppendUvarint(b, uint64(nd.leader+1))
		}
		if m.timed && m.cs > 0 && nd.inCS {
			b = binary.AppendUvarint(b, uint64(nd.csLeft))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.timers)))
	for _, t := range s.timers {
		b = binary.AppendUvarint(b, uint64(t.node))
		b = binary.AppendUvarint(b, uint64(t.name))
		if m.timed {
			b = binary.AppendUvarint(b, uint64(t.left))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.msgs)))
	for _, f := range s.msgs {
		b = binary.AppendUvarint(b, uint64(f.msg))
		if m.timed {
			b = binary.AppendUvarint(b, uint64(f.lo))
			b = binary.AppendUvarint(b, uint64(f.hi))
		}
	}
	return b
}

var errKey = errors.New("explore: corrupt state key")

type keyReader struct {
	b   []byte
	err bool
}

func (r *keyReader) u() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *keyReader) byte1() byte {
	if len(r.b) == 0 {
		r.err = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// decode reads a key written by encode into s.
func (m *model) decode(b []byte, s *state) error {
	r := keyReader{b: b}
	s.now, s.cursor, s.avail = 0, 0, 0
	if m.timed {
		s.now = int32(r.u())
		s.cursor = int32(r.u())
	} else if len(m.global) > 0 {
		s.cursor = int32(r.u())
	}
	if len(m.drops) > 0 {
		s.avail = r.u()
	}
	if m.parts {
		s.groups = s.groups[:0]
		for i := 0; i < m.n; i++ {
			s.groups = append(s.groups, r.byte1())
		}
	} else {
		s.groups = nil
	}
	s.nodes = s.nodes[:0]
	for i := 0; i < m.n; i++ {
		nd := nodeSt{leader: -1}
		if !m.timed && len(m.perNode[i]) > 0 {
			nd.cursor = int32(r.u())
		}
		id := r.u()
		if id != 0 {
			nd.alive = true
			nd.id = uint32(id - 1)
			flags := r.byte1()
			nd.inCS, nd.pending = flags&1 != 0, flags&2 != 0
			if m.election {
				nd.leader = int32(r.u()) - 1
			}
			if m.timed && m.cs > 0 && nd.inCS {
				nd.csLeft = int32(r.u())
			}
		}
		s.nodes = append(s.nodes, nd)
	}
	nt := int(r.u())
	s.timers = s.timers[:0]
	for k := 0; k < nt && !r.err; k++ {
		t := timerSt{node: uint16(r.u()), name: uint16(r.u())}
		if m.timed {
			t.left = int32(r.u())
		}
		s.timers = append(s.timers, t)
	}
	nm := int(r.u())
	s.msgs = s.msgs[:0]
	for k := 0; k < nm && !r.err; k++ {
		f := flight{msg: uint32(r.u())}
		if m.timed {
			f.lo, f.hi = int32(r.u()), int32(r.u())
		}
		s.msgs = append(s.msgs, f)
	}
	if r.err || len(r.b) != 0 {
		return errKey
	}
	return nil
}

// nparts is how many parts a state is cut into for the store (tree.go): one per
// process, then the header.
func (m *model) nparts() int { return 1 + m.n }

// encodeParts appends s's parts to b, each in the encoding encode uses for the same
// fields, and records where each ends (offsets in b) in ends. Part i is process i:
// its workload cursor, its node state and the kernel's view of it, its armed timers
// and the messages it sent that are in flight, in the canonical order; the last part
// is the header (workload, drop tokens, partition, time).
func (x *search) encodeParts(b []byte, s *state, ends []int) ([]byte, []int) {
	m := x.m
	ends = ends[:0]
	from := x.from[:0]
	for _, f := range s.msgs {
		from = append(from, int8(x.it.message(f.msg).ch/int32(m.n)))
	}
	x.from = from
	tk := 0
	for i := range s.nodes {
		nd := &s.nodes[i]
		if !m.timed && len(m.perNode[i]) > 0 {
			b = binary.AppendUvarint(b, uint64(nd.cursor))
		}
		if !nd.alive {
			b = append(b, 0)
		} else {
			b = binary.AppendUvarint(b, uint64(nd.id)+1)
			var flags byte
			if nd.inCS {
				flags |= 1
			}
			if nd.pending {
				flags |= 2
			}
			b = append(b, flags)
			if m.election {
				b = binary.AppendUvarint(b, uint64(nd.leader+1))
			}
			if m.timed && m.cs > 0 && nd.inCS {
				b = binary.AppendUvarint(b, uint64(nd.csLeft))
			}
		}
		// Timers are kept in order of node: process i's are the next ones.
		t0 := tk
		for tk < len(s.timers) && int(s.timers[tk].node) == i {
			tk++
		}
		b = binary.AppendUvarint(b, uint64(tk-t0))
		for _, t := range s.timers[t0:tk] {
			b = binary.AppendUvarint(b, uint64(t.name))
			if m.timed {
				b = binary.AppendUvarint(b, uint64(t.left))
			}
		}
		count := 0
		for _, f := range from {
			if int(f) == i {
				count++
			}
		}
		b = binary.AppendUvarint(b, uint64(count))
		for k, f := range s.msgs {
			if int(from[k]) != i {
				continue
			}
			b = binary.AppendUvarint(b, uint64(f.msg))
			if m.timed {
				b = binary.AppendUvarint(b, uint64(f.lo))
				b = binary.AppendUvarint(b, uint64(f.hi))
			}
		}
		ends = append(ends, len(b))
	}
	if m.timed {
		b = binary.AppendUvarint(b, uint64(s.now))
		b = binary.AppendUvarint(b, uint64(s.cursor))
	} else if len(m.global) > 0 {
		b = binary.AppendUvarint(b, uint64(s.cursor))
	}
	if len(m.drops) > 0 {
		b = binary.AppendUvarint(b, s.avail)
	}
	if m.parts {
		b = append(b, s.groups...)
	}
	ends = append(ends, len(b))
	return b, ends
}

// decodeParts reads the parts written by encodeParts into s.
func (x *search) decodeParts(parts [][]byte, s *state) error {
	m := x.m
	r := keyReader{b: parts[m.n]}
	s.now, s.cursor, s.avail = 0, 0, 0
	if m.timed {
		s.now = int32(r.u())
		s.cursor = int32(r.u())
	} else if len(m.global) > 0 {
		s.cursor = int32(r.u())
	}
	if len(m.drops) > 0 {
		s.avail = r.u()
	}
	if m.parts {
		s.groups = s.groups[:0]
		for i := 0; i < m.n; i++ {
			s.groups = append(s.groups, r.byte1())
		}
	} else {
		s.groups = nil
	}
	if r.err || len(r.b) != 0 {
		return errKey
	}
	s.nodes = s.nodes[:0]
	s.timers = s.timers[:0]
	s.msgs = s.msgs[:0]
	for i := 0; i < m.n; i++ {
		r = keyReader{b: parts[i]}
		nd := nodeSt{leader: -1}
		if !m.timed && len(m.perNode[i]) > 0 {
			nd.cursor = int32(r.u())
		}
		id := r.u()
		if id != 0 {
			nd.alive = true
			nd.id = uint32(id - 1)
			flags := r.byte1()
			nd.inCS, nd.pending = flags&1 != 0, flags&2 != 0
			if m.election {
				nd.leader = int32(r.u()) - 1
			}
			if m.timed && m.cs > 0 && nd.inCS {
				nd.csLeft = int32(r.u())
			}
		}
		s.nodes = append(s.nodes, nd)
		nt := int(r.u())
		for k := 0; k < nt && !r.err; k++ {
			t := timerSt{node: uint16(i), name: uint16(r.u())}
			if m.timed {
				t.left = int32(r.u())
			}
			s.timers = append(s.timers, t)
		}
		nm := int(r.u())
		for k := 0; k < nm && !r.err; k++ {
			f := flight{msg: uint32(r.u())}
			if m.timed {
				f.lo, f.hi = int32(r.u()), int32(r.u())
			}
			s.msgs = append(s.msgs, f)
		}
		if r.err || len(r.b) != 0 {
			return errKey
		}
	}
	x.sortFlights(s)
	return nil
}
