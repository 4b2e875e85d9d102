package sim

import (
	"fmt"
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
	var waiting []int
	for i, since := range s.mon.pendingSince {
		if since >= 0 && s.alive[i] {
			waiting = append(waiting, i)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	if cycle := s.waitCycle(); cycle != nil {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = s.name(i)
		}
		members := slices.Clone(cycle[:len(cycle)-1])
		slices.Sort(members)
		return s.quietViolation(PropDeadlock, "wait-for cycle "+strings.Join(names, " -> "), members, cycle)
	}
	names := make([]string, len(waiting))
	for k, i := range waiting {
		names[k] = s.name(i)
	}
	return s.quietViolation(PropDeadlock, fmt.Sprintf("nothing is in flight and no timer is armed, yet %s still wait for the CS", strings.Join(names, ", ")), waiting, nil)
}

// waitCycle finds a cycle in the wait-for graph of alive nodes, searching from the
// lowest index so the answer is deterministic. It returns the cycle closed on itself.
func (s *Sim) waitCycle() []int {
	edges := make([][]int, s.n)
	any := false
	for i, nd := range s.nodes {
		if w, ok := nd.(WaitingFor); ok && s.alive[i] {
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
	color := make([]int, s.n)
	var stack []int
	var found []int
	var visit func(int) bool
	visit = func(u int) bool {
		color[u] = grey
		stack = append(stack, u)
		for _, v := range edges[u] {
			if v < 0 || v >= s.n || !s.alive[v] {
				continue
			}
			if color[v] == grey {
				for k, x := range stack {
					if x == v {
						found = append(append([]int(nil), stack[k:]...), v)
						return true
					}
				}
			}
			if color[v] == white && visit(v) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = black
		return false
	}
	for u := 0; u < s.n; u++ {
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
	maxGroup := 0
	for _, g := range s.nw.group {
		maxGroup = max(maxGroup, g)
	}
	for g := 0; g <= maxGroup; g++ {
		if detail, nodes := s.groupLeaderProblem(g); detail != "" {
			if err := s.quietViolation(PropLeader, detail, nodes, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// groupLeaderProblem says what is wrong with group g's leaders ("" if nothing), and
// which processes it is about.
func (s *Sim) groupLeaderProblem(g int) (string, []int) {
	var members []int
	decided := false
	for i := range s.nodes {
		if s.nw.group[i] == g && s.alive[i] {
			members = append(members, i)
			decided = decided || s.mon.leaderOf[i] >= 0
		}
	}
	if !decided {
		return "", nil
	}
	var selfLeaders []string
	var selves []int
	for _, i := range members {
		if s.mon.leaderOf[i] == s.cfg.IDs[i] {
			selfLeaders = append(selfLeaders, s.name(i))
			selves = append(selves, i)
		}
	}
	if len(selfLeaders) > 1 {
		return fmt.Sprintf("%s each take themselves as leader", strings.Join(selfLeaders, " and ")), selves
	}
	want := s.mon.leaderOf[members[0]]
	for _, i := range members {
		l := s.mon.leaderOf[i]
		if l < 0 {
			return fmt.Sprintf("%s has no leader", s.name(i)), []int{i}
		}
		if l != want {
			return fmt.Sprintf("%s takes P%d as leader but %s takes P%d", s.name(members[0]), want, s.name(i), l), []int{members[0], i}
		}
	}
	for _, i := range members {
		if s.cfg.IDs[i] == want {
			return "", nil
		}
	}
	// The leader they agree on is not among them: the processes concerned are the
	// leader itself, if it is one of the run's (crashed or on the other side).
	var gone []int
	if k := slices.Index(s.cfg.IDs, want); k >= 0 {
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
