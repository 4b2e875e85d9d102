package sim

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

// Monitors run after every step. Mutual exclusion is checked as a node enters the CS
// (see enter in cs.go). Here: requests pending too long, and, once the run is quiescent (nothing
// in flight, no timer armed, no workload or CS exit still to come), deadlock and leader
// agreement. Each finding is a violation event, reported once per episode.

// Violation properties, as written in the trace.
const (
	PropMutex    = "mutual-exclusion"
	PropPending  = "pending"
	PropDeadlock = "deadlock"
	PropLeader   = "leader"
)

// monitors is what the monitors keep between steps, and the run's totals.
type monitors struct {
	pendingSince []int  // -1: no request pending
	pendingSeen  []bool // node i's current wait was reported
	pendingLimit int
	nextDeadline int      // the earliest time a pending request may be reported
	leaderOf     []int    // id, -1: none
	quietSeen    bool     // the current quiescent period has been checked
	quietFound   []string // findings reported in the current quiescent period
	totals       Totals
}

func newMonitors(n, pendingLimit int) monitors {
	m := monitors{
		pendingSince: make([]int, n),
		pendingSeen:  make([]bool, n),
		leaderOf:     make([]int, n),
		pendingLimit: pendingLimit,
		nextDeadline: MaxTime + 1,
	}
	for i := range n {
		m.pendingSince[i] = -1
		m.leaderOf[i] = -1
	}
	return m
}

// Quiescent reports whether nothing can happen any more without outside help.
func (s *Sim) Quiescent() bool {
	return s.nw.inflight == 0 && s.tm.active == 0 && s.pendingActions == 0 && s.cs.pendingRelease == 0
}

func (s *Sim) monitorStep() error {
	if s.now >= s.mon.nextDeadline {
		if err := s.checkPending(); err != nil {
			return err
		}
	}
	if !s.Quiescent() {
		s.mon.quietSeen = false
		s.mon.quietFound = s.mon.quietFound[:0]
		return nil
	}
	if s.mon.quietSeen {
		return nil
	}
	s.mon.quietSeen = true
	if err := s.checkDeadlock(); err != nil {
		return err
	}
	return s.checkLeaders()
}

// quietViolation reports a finding of the quiescent checks once per quiet period.
func (s *Sim) quietViolation(property, detail string, nodes, cycle []int) error {
	key := property + ": " + detail
	if slices.Contains(s.mon.quietFound, key) {
		return nil
	}
	s.mon.quietFound = append(s.mon.quietFound, key)
	return s.violation(property, detail, nodes, cycle)
}

func (s *Sim) checkPending() error {
	s.mon.nextDeadline = MaxTime + 1
	for i, since := range s.mon.pendingSince {
		if since < 0 || s.mon.pendingSeen[i] {
			continue
		}
		deadline := since + s.mon.pendingLimit
		if s.now < deadline {
			s.mon.nextDeadline = min(s.mon.nextDeadline, deadline)
			continue
		}
		s.mon.pendingSeen[i] = true
		detail := fmt.Sprintf("%s has waited %d time units for the CS (limit %d)", s.name(i), s.now-since, s.mon.pendingLimit)
		if err := s.violation(PropPending, detail, []int{i}, nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) checkDeadlock() error {
	if detail, nodes, cycle := Deadlock(kernel{s}); detail != "" {
		return s.quietViolation(PropDeadlock, detail, nodes, cycle)
	}
	return nil
}

// Deadlock says what is wrong with a quiescent run in which some alive process still
// waits for the CS ("" when none waits): the wait-for cycle, if there is one, with its
// members in index order and the cycle closed on itself; otherwise the waiting
// processes. The kernel's monitor and the explorer both judge by it.
func Deadlock(v View) (detail string, nodes, cycle []int) {
	up := v.Up()
	var waiting []int
	for i := range v.IDs() {
		if v.Waiting(i) && up[i] {
			waiting = append(waiting, i)
		}
	}
	if len(waiting) == 0 {
		return "", nil, nil
	}
	if cycle := waitCycle(v); cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = nameOf(v, i)
		}
		members := slices.Clone(cycle[:len(cycle)-1])
		slices.Sort(members)
		return "wait-for cycle " + strings.Join(names, " -> "), members, cycle
	}
	names := make([]string, len(waiting))
	for k, i := range waiting {
		names[k] = nameOf(v, i)
	}
	return fmt.Sprintf("nothing is in flight and no timer is armed, yet %s still wait for the CS", strings.Join(names, ", ")), waiting, nil
}

// waitCycle finds a cycle in the wait-for graph of alive nodes, searching from the
// lowest index so the answer is deterministic. It returns the cycle closed on itself.
func waitCycle(v View) []int {
	n := len(v.IDs())
	up := v.Up()
	edges := make([][]int, n)
	any := false
	for i := range n {
		if !up[i] {
			continue
		}
		if w, ok := v.Node(i).(WaitingFor); ok {
			edges[i] = w.WaitingFor()
			any = any || len(edges[i]) > 0
		}
	}
	if !any {
		return nil
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, n)
	var stack []int
	var found []int
	var visit func(int) bool
	visit = func(u int) bool {
		color[u] = grey
		stack = append(stack, u)
		for _, w := range edges[u] {
			if w < 0 || w >= n || !up[w] {
				continue
			}
			if color[w] == grey {
				for k, x := range stack {
					if x == w {
						found = append(append([]int(nil), stack[k:]...), w)
						return true
					}
				}
			}
			if color[w] == white && visit(w) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = black
		return false
	}
	for u := 0; u < n; u++ {
		if color[u] == white && visit(u) {
			return found
		}
	}
	return nil
}

// checkLeaders verifies that in every connected group where some alive node records a
// leader, all alive nodes record the same alive leader of that group.
func (s *Sim) checkLeaders() error {
	if s.spec.Family != Election {
		return nil
	}
	for detail, nodes := range LeaderProblems(kernel{s}) {
		if err := s.quietViolation(PropLeader, detail, nodes, nil); err != nil {
			return err
		}
	}
	return nil
}

// LeaderProblems yields, for each connected group of a quiescent run in which some
// alive process records a leader, what is wrong with its leaders, and which processes
// it is about: all its alive processes must take the same alive process of the group.
// The kernel's monitor and the explorer both judge by it.
func LeaderProblems(v View) iter.Seq2[string, []int] {
	return func(yield func(string, []int) bool) {
		groups := v.Groups()
		maxGroup := 0
		for i := range v.IDs() {
			maxGroup = max(maxGroup, side(groups, i))
		}
		for g := 0; g <= maxGroup; g++ {
			if detail, nodes := groupLeaderProblem(v, groups, g); detail != "" && !yield(detail, nodes) {
				return
			}
		}
	}
}

// groupLeaderProblem says what is wrong with group g's leaders ("" if nothing), and
// which processes it is about.
func groupLeaderProblem(v View, groups []int, g int) (string, []int) {
	ids, up := v.IDs(), v.Up()
	var members []int
	decided := false
	for i := range ids {
		if side(groups, i) == g && up[i] {
			members = append(members, i)
			decided = decided || v.Leader(i) >= 0
		}
	}
	if !decided {
		return "", nil
	}
	var selfLeaders []string
	var selves []int
	for _, i := range members {
		if v.Leader(i) == ids[i] {
			selfLeaders = append(selfLeaders, nameOf(v, i))
			selves = append(selves, i)
		}
	}
	if len(selfLeaders) > 1 {
		return fmt.Sprintf("%s each take themselves as leader", strings.Join(selfLeaders, " and ")), selves
	}
	want := v.Leader(members[0])
	for _, i := range members {
		l := v.Leader(i)
		if l < 0 {
			return fmt.Sprintf("%s has no leader", nameOf(v, i)), []int{i}
		}
		if l != want {
			return fmt.Sprintf("%s takes P%d as leader but %s takes P%d", nameOf(v, members[0]), want, nameOf(v, i), l), []int{members[0], i}
		}
	}
	for _, i := range members {
		if ids[i] == want {
			return "", nil
		}
	}
	// The leader they agree on is not among them: the processes concerned are the
	// leader itself, if it is one of the run's (crashed or on the other side).
	var gone []int
	if k := slices.Index(ids, want); k >= 0 {
		gone = []int{k}
	}
	return fmt.Sprintf("all take P%d as leader, but P%d is crashed or cut off", want, want), gone
}

// violation reports a broken property: what, in words (detail), and as data: the
// processes concerned (indexes, in index order) and, for a deadlock, the wait-for
// cycle closed on itself.
func (s *Sim) violation(property, detail string, nodes, cycle []int) error {
	s.mon.totals.Violations++
	ev := s.event(EvViolation, -1)
	ev.Property = property
	ev.Detail = detail
	ev.Nodes = nodes
	ev.Cycle = cycle
	return s.emit(ev)
}
