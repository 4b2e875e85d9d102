package explore

import (
	"fmt"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// The kernel's monitors, on the explorer's states.

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
	var waiting []string
	for i := range s.nodes {
		if nd := &s.nodes[i]; nd.alive && nd.pending {
			waiting = append(waiting, x.m.name(i))
		}
	}
	if waiting == nil {
		return nil
	}
	if cycle := x.waitCycle(s); cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = x.m.name(i)
		}
		return &finding{property: sim.PropDeadlock, detail: "wait-for cycle " + strings.Join(names, " -> ")}
	}
	return &finding{property: sim.PropDeadlock,
		detail: fmt.Sprintf("nothing is in flight and no timer is armed, yet %s still wait for the CS", strings.Join(waiting, ", "))}
}

// waitCycle is the kernel's wait-for cycle search (lowest index first).
func (x *search) waitCycle(s *state) []int {
	n := x.m.n
	edges := make([][]int, n)
	for i := range s.nodes {
		if !s.nodes[i].alive {
			continue
		}
		if w, ok := x.it.nodeState(i, s.nodes[i].id).(sim.WaitingFor); ok {
			edges[i] = w.WaitingFor()
		}
	}
	color := make([]int, n)
	var stack, found []int
	var visit func(int) bool
	visit = func(u int) bool {
		color[u] = 1
		stack = append(stack, u)
		for _, v := range edges[u] {
			if v < 0 || v >= n || !s.nodes[v].alive {
				continue
			}
			if color[v] == 1 {
				for k, w := range stack {
					if w == v {
						found = append(append([]int(nil), stack[k:]...), v)
						return true
					}
				}
			}
			if color[v] == 0 && visit(v) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = 2
		return false
	}
	for u := 0; u < n; u++ {
		if color[u] == 0 && visit(u) {
			return found
		}
	}
	return nil
}

// checkLeaders is the kernel's leader monitor: in each connected group where some
// alive process records a leader, all alive processes record the same alive one.
func (x *search) checkLeaders(s *state) *finding {
	maxGroup := uint8(0)
	for i := range s.nodes {
		maxGroup = max(maxGroup, s.group(i))
	}
	for g := 0; g <= int(maxGroup); g++ {
		if d := x.groupLeaderProblem(s, uint8(g)); d != "" {
			return &finding{property: sim.PropLeader, detail: d}
		}
	}
	return nil
}

func (x *search) groupLeaderProblem(s *state, g uint8) string {
	var members []int
	decided := false
	for i := range s.nodes {
		if s.group(i) == g && s.nodes[i].alive {
			members = append(members, i)
			decided = decided || s.nodes[i].leader >= 0
		}
	}
	if !decided {
		return ""
	}
	ids := x.m.ids
	var selfLeaders []string
	for _, i := range members {
		if int(s.nodes[i].leader) == ids[i] {
			selfLeaders = append(selfLeaders, x.m.name(i))
		}
	}
	if len(selfLeaders) > 1 {
		return fmt.Sprintf("%s each take themselves as leader", strings.Join(selfLeaders, " and "))
	}
	want := s.nodes[members[0]].leader
	for _, i := range members {
		l := s.nodes[i].leader
		if l < 0 {
			return fmt.Sprintf("%s has no leader", x.m.name(i))
		}
		if l != want {
			return fmt.Sprintf("%s takes P%d as leader but %s takes P%d", x.m.name(members[0]), want, x.m.name(i), l)
		}
	}
	for _, i := range members {
		if ids[i] == int(want) {
			return ""
		}
	}
	return fmt.Sprintf("all take P%d as leader, but P%d is crashed or cut off", want, want)
}
