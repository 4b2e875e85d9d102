package sim

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
