package explore

import "github.com/teach-dist/playground/runtime/sim"

// The kernel's monitors (sim.Deadlock, sim.LeaderProblems), on the explorer's states.

// quiescent is the kernel's notion: nothing in flight or armed but background
// traffic, no workload to come, nobody due to leave the CS.
func (x *search) quiescent(s *state) bool {
	m := x.m
	for _, f := range s.msgs {
		if !x.it.message(f.msg).bg {
			return false
		}
	}
	for _, t := range s.timers {
		if !x.it.timerBG(uint32(t.name)) {
			return false
		}
	}
	if m.cs > 0 {
		for i := range s.nodes {
			if s.nodes[i].alive && s.nodes[i].inCS {
				return false
			}
		}
	}
	if m.timed {
		return int(s.cursor) == len(m.events)
	}
	x.wl = x.workload(s, x.wl[:0])
	return len(x.wl) == 0
}

// checkState runs the checks that look at a state: at quiescence, deadlock (someone
// waits for the CS and nothing can happen) and leader agreement.
func (x *search) checkState(s *state) *finding {
	if !x.quiescent(s) {
		return nil
	}
	if f := x.checkDeadlock(s); f != nil {
		return f
	}
	if x.m.election {
		return x.checkLeaders(s)
	}
	return nil
}

func (x *search) checkDeadlock(s *state) *finding {
	if detail, _, _ := sim.Deadlock(x.world(s)); detail != "" {
		return &finding{property: sim.PropDeadlock, detail: detail}
	}
	return nil
}

// checkLeaders reports the first group whose leaders are wrong.
func (x *search) checkLeaders(s *state) *finding {
	var found *finding
	sim.LeaderProblems(x.world(s))(func(detail string, _ []int) bool {
		found = &finding{property: sim.PropLeader, detail: detail}
		return false
	})
	return found
}
