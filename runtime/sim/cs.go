package sim

import (
	"fmt"
	"strings"
)

// critical is who is in the critical section, and the ends of CS time still to come.
//
// Invariant: count is the number of nodes with in[i] set, and pendingRelease the number
// with due[i] set; neither goes below zero.
type critical struct {
	in             []bool
	count          int
	gen            []uint32 // bumped as node i leaves: a queued release of an older entry is stale
	due            []bool   // node i's scheduled end of CS still counts in pendingRelease
	pendingRelease int
}

func newCritical(n int) critical {
	return critical{in: make([]bool, n), gen: make([]uint32, n), due: make([]bool, n)}
}

// leave takes node i out of the CS; it reports whether it was in.
func (cs *critical) leave(i int) bool {
	if !cs.in[i] {
		return false
	}
	cs.in[i] = false
	cs.count--
	cs.gen[i]++
	cs.releaseDone(i)
	if cs.count < 0 {
		broken("CS count below zero after node %d left", i)
	}
	return true
}

// releaseDone stops counting node i's scheduled end of CS as work to come: it is being
// carried out, or the node left the CS first (exit or crash) and the queued item is now
// stale. Counting a stale item until it was popped made the run look busy, so the
// quiescence checks (deadlock, leader) came late or never.
func (cs *critical) releaseDone(i int) {
	if cs.due[i] {
		cs.due[i] = false
		cs.pendingRelease--
		if cs.pendingRelease < 0 {
			broken("pending CS ends below zero after node %d", i)
		}
	}
}

func (s *Sim) enter(i int) error {
	cs := &s.cs
	if cs.in[i] {
		return nil
	}
	cs.in[i] = true
	cs.count++
	s.mon.pendingSince[i] = -1
	s.mon.totals.Entries++
	if err := s.emit(s.event(EvEnter, i)); err != nil {
		return err
	}
	if cs.count > 1 {
		var others []string
		var inside []int
		for j := range cs.in {
			if cs.in[j] {
				inside = append(inside, j)
			}
			if cs.in[j] && j != i {
				others = append(others, s.name(j))
			}
		}
		if err := s.violation(PropMutex, fmt.Sprintf("%s entered the CS while %s is in it", s.name(i), strings.Join(others, ", ")), inside, nil); err != nil {
			return err
		}
	}
	if s.cfg.CS > 0 {
		s.q.schedule(item{t: s.now + s.cfg.CS, kind: itemRelease, slot: int32(i), gen: cs.gen[i]})
		cs.pendingRelease++
		cs.due[i] = true
	}
	return nil
}

func (s *Sim) exit(i int) error {
	if !s.cs.leave(i) {
		return nil
	}
	return s.emit(s.event(EvExit, i))
}

func (s *Sim) release(i int) error {
	if !s.alive[i] || !s.cs.in[i] {
		return nil
	}
	return s.stepNode(i, s.input(Release))
}
