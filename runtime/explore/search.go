package explore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
)

// tkind is what a transition of the search does.
type tkind uint8

const (
	tDeliver tkind = iota // a: index in msgs
	tLose                 // a: index in msgs (network.loss)
	tDrop                 // a: drop event (token), b: index in msgs
	tTimer                // a: index in timers
	tRelease              // a: node whose time in the CS is over
	tEvent                // a: workload event
	tTick                 // time passes (timed searches)
)

type trans struct {
	kind tkind
	a, b int32
}

// finding is a broken property.
type finding struct {
	property string
	detail   string
}

// errRestartTimed stops an untimed search that met a timer: it is redone timed.
var errRestartTimed = errors.New("explore: the algorithm sets timers")

type search struct {
	m   *model
	it  *interner
	st  *store
	opt *Options

	cur, next *state
	trs       []trans
	wl        []trans // quiescent's own buffer
	key       []byte
	tick      int32 // the last tick's length

	transitions int64
	depth       int
	start       time.Time
}

// enumerate lists s's enabled transitions in a fixed order; a transition's number in
// this list is how a path names it.
func (x *search) enumerate(s *state, out []trans) []trans {
	m := x.m
	out = out[:0]
	for k := range s.msgs {
		f := s.msgs[k]
		if k > 0 && s.msgs[k-1] == f {
			continue // the same message twice: delivering either gives the same state
		}
		if m.fifo && k > 0 && x.it.msgs[s.msgs[k-1].msg].ch == x.it.msgs[f.msg].ch {
			continue // FIFO: only the oldest message of a channel can arrive
		}
		if m.timed && f.lo > 0 {
			continue
		}
		out = append(out, trans{kind: tDeliver, a: int32(k)})
	}
	if m.loss {
		for k := range s.msgs {
			if k > 0 && s.msgs[k-1] == s.msgs[k] {
				continue
			}
			out = append(out, trans{kind: tLose, a: int32(k)})
		}
	}
	if s.avail != 0 {
		for t, ev := range m.drops {
			if s.avail&(1<<t) == 0 || x.sameDropBefore(s, t) {
				continue
			}
			a := &m.events[ev].act
			for k := range s.msgs {
				if k > 0 && s.msgs[k-1] == s.msgs[k] {
					continue
				}
				mm := &x.it.msgs[s.msgs[k].msg].m
				if (a.From < 0 || mm.From == a.From) && (a.To < 0 || mm.To == a.To) && (a.Type == "" || mm.Type == a.Type) {
					out = append(out, trans{kind: tDrop, a: int32(t), b: int32(k)})
				}
			}
		}
	}
	for k, t := range s.timers {
		if !m.timed || t.left == 0 {
			out = append(out, trans{kind: tTimer, a: int32(k)})
		}
	}
	if m.cs > 0 {
		for i := range s.nodes {
			nd := &s.nodes[i]
			if nd.alive && nd.inCS && (!m.timed || nd.csLeft == 0) {
				out = append(out, trans{kind: tRelease, a: int32(i)})
			}
		}
	}
	out = x.workload(s, out)
	if m.timed && x.canTick(s) {
		out = append(out, trans{kind: tTick})
	}
	return out
}

// sameDropBefore reports whether an earlier available drop event has the same filter:
// using either gives the same choices, so only the first is offered.
func (x *search) sameDropBefore(s *state, t int) bool {
	a := &x.m.events[x.m.drops[t]].act
	for u := 0; u < t; u++ {
		b := &x.m.events[x.m.drops[u]].act
		if s.avail&(1<<u) != 0 && a.From == b.From && a.To == b.To && a.Type == b.Type {
			return true
		}
	}
	return false
}

// workload appends the workload events that can happen now.
func (x *search) workload(s *state, out []trans) []trans {
	m := x.m
	if m.timed {
		if int(s.cursor) < len(m.events) && m.events[s.cursor].at == int(s.now) {
			out = append(out, trans{kind: tEvent, a: s.cursor})
		}
		return out
	}
	for i := range s.nodes {
		if c := s.nodes[i].cursor; int(c) < len(m.perNode[i]) {
			ev := m.perNode[i][c]
			if x.applies(s, &m.events[ev].act) {
				out = append(out, trans{kind: tEvent, a: ev})
			}
		}
	}
	if int(s.cursor) < len(m.global) {
		out = append(out, trans{kind: tEvent, a: m.global[s.cursor]})
	}
	return out
}

// applies reports whether an event would do something now; the kernel skips the ones
// that do not (a request from a node that already waits). Untimed searches hold such
// an event back until it applies: it happens whenever the node is ready.
func (x *search) applies(s *state, a *sim.Action) bool {
	switch a.Do {
	case sim.ActRequest:
		nd := &s.nodes[a.Node]
		return nd.alive && !nd.pending && !nd.inCS
	case sim.ActRelease:
		nd := &s.nodes[a.Node]
		return nd.alive && nd.inCS
	case sim.ActElect, sim.ActCrash:
		return s.nodes[a.Node].alive
	case sim.ActRecover:
		return !s.nodes[a.Node].alive
	}
	return true
}

// canTick reports whether time may pass: something waits for it, and nothing is due
// now that cannot wait.
func (x *search) canTick(s *state) bool {
	m := x.m
	waits := false
	for _, f := range s.msgs {
		if f.hi == 0 {
			return false
		}
		waits = true
	}
	for _, t := range s.timers {
		if t.left == 0 {
			return false
		}
		waits = true
	}
	if m.cs > 0 {
		for i := range s.nodes {
			if nd := &s.nodes[i]; nd.alive && nd.inCS {
				if nd.csLeft == 0 {
					return false
				}
				waits = true
			}
		}
	}
	if int(s.cursor) < len(m.events) {
		if m.events[s.cursor].at <= int(s.now) {
			return false
		}
		waits = true
	}
	return waits
}

// tickLength is how far time moves: one unit while a message can arrive now (each
// instant is then a different choice), else straight to the next instant at which
// something becomes possible.
func (x *search) tickLength(s *state) int32 {
	d := int32(1 << 30)
	for _, f := range s.msgs {
		if f.lo == 0 {
			return 1
		}
		d = min(d, f.lo)
	}
	for _, t := range s.timers {
		d = min(d, t.left)
	}
	if x.m.cs > 0 {
		for i := range s.nodes {
			if nd := &s.nodes[i]; nd.alive && nd.inCS {
				d = min(d, nd.csLeft)
			}
		}
	}
	if int(s.cursor) < len(x.m.events) {
		d = min(d, int32(x.m.events[s.cursor].at)-s.now)
	}
	return max(d, 1)
}

// apply carries out transition t on s. It returns a finding when a property broke
// during the step itself (two processes in the CS).
func (x *search) apply(s *state, t trans) *finding {
	m := x.m
	switch t.kind {
	case tDeliver:
		f := s.msgs[t.a]
		s.removeMsg(int(t.a))
		info := &x.it.msgs[f.msg]
		to := info.m.To
		if !s.nodes[to].alive || s.group(info.m.From) != s.group(to) {
			return nil // lost on arrival, as the kernel drops it
		}
		r := x.it.step(to, s.nodes[to].id, sim.Deliver, f.msg)
		return x.effects(s, to, r)
	case tLose:
		s.removeMsg(int(t.a))
	case tDrop:
		s.removeMsg(int(t.b))
		s.avail &^= 1 << t.a
	case tTimer:
		tm := s.timers[t.a]
		s.timers = append(s.timers[:t.a], s.timers[t.a+1:]...)
		i := int(tm.node)
		r := x.it.step(i, s.nodes[i].id, sim.Timer, uint32(tm.name))
		return x.effects(s, i, r)
	case tRelease:
		i := int(t.a)
		s.nodes[i].csLeft = 0
		r := x.it.step(i, s.nodes[i].id, sim.Release, 0)
		return x.effects(s, i, r)
	case tEvent:
		return x.event(s, t.a)
	case tTick:
		d := x.tickLength(s)
		x.tick = d
		for k := range s.msgs {
			f := &s.msgs[k]
			f.lo = max(f.lo-d, 0)
			f.hi -= d
		}
		for k := range s.timers {
			s.timers[k].left -= d
		}
		if m.cs > 0 {
			for i := range s.nodes {
				if nd := &s.nodes[i]; nd.alive && nd.inCS {
					nd.csLeft -= d
				}
			}
		}
		if int(s.cursor) < len(m.events) {
			s.now += d
		}
	}
	return nil
}

// event carries out workload event k and moves past it.
func (x *search) event(s *state, k int32) *finding {
	m := x.m
	a := &m.events[k].act
	if m.timed {
		s.cursor++
		if int(s.cursor) == len(m.events) {
			// Nothing is scheduled any more: the time no longer matters. Nothing else
			// reads s.now during this event.
			s.now = 0
		}
	} else if a.Do == sim.ActPartition || a.Do == sim.ActHeal {
		s.cursor++
	} else if a.Do != sim.ActDrop {
		s.nodes[a.Node].cursor++
	}
	return x.act(s, k)
}

// act carries out workload event k without moving past it.
func (x *search) act(s *state, k int32) *finding {
	m := x.m
	a := &m.events[k].act
	if !x.applies(s, a) {
		return nil // skipped, as the kernel skips it
	}
	switch a.Do {
	case sim.ActRequest:
		i := a.Node
		s.nodes[i].pending = true
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Request, 0))
	case sim.ActRelease:
		i := a.Node
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Release, 0))
	case sim.ActElect:
		i := a.Node
		return x.effects(s, i, x.it.step(i, s.nodes[i].id, sim.Elect, 0))
	case sim.ActCrash:
		x.crash(s, a.Node)
	case sim.ActRecover:
		i := a.Node
		s.nodes[i] = nodeSt{alive: true, leader: -1, cursor: s.nodes[i].cursor}
		r := x.it.step(i, x.it.fresh[i], sim.Recover, 0)
		return x.effects(s, i, r)
	case sim.ActPartition:
		clear(s.groups)
		for g, members := range a.Groups {
			for _, i := range members {
				s.groups[i] = uint8(g + 1)
			}
		}
	case sim.ActHeal:
		clear(s.groups)
	case sim.ActDrop:
		s.avail |= 1 << m.dropIndex(k) // timed: from now on it may drop a message
	}
	return nil
}

func (x *search) crash(s *state, i int) {
	s.nodes[i] = nodeSt{leader: -1, cursor: s.nodes[i].cursor}
	ts := s.timers[:0]
	for _, t := range s.timers {
		if int(t.node) != i {
			ts = append(ts, t)
		}
	}
	s.timers = ts
	// Messages on their way to a crashed process are lost.
	ms := s.msgs[:0]
	for _, f := range s.msgs {
		if x.it.msgs[f.msg].m.To != i {
			ms = append(ms, f)
		}
	}
	s.msgs = ms
}

// effects carries out what node i did in a step, in order, as the kernel does.
func (x *search) effects(s *state, i int, r stepResult) *finding {
	m := x.m
	nd := &s.nodes[i]
	nd.id = r.next
	var found *finding
	for _, e := range x.it.effs[r.from:r.to] {
		switch e.kind {
		case effSend:
			info := &x.it.msgs[e.a]
			if s.group(info.m.From) != s.group(info.m.To) {
				continue // the partition drops it as it leaves
			}
			f := flight{msg: e.a}
			if m.timed {
				f.lo, f.hi = m.dmin, m.dmax
			}
			x.insertFlight(s, f)
		case effSetTimer:
			s.removeTimer(i, e.a)
			t := timerSt{node: uint16(i), name: uint16(e.a)}
			if m.timed {
				t.left = e.after
			}
			s.insertTimer(t)
		case effCancelTimer:
			s.removeTimer(i, e.a)
		case effEnter:
			if nd.inCS {
				continue
			}
			nd.inCS, nd.pending = true, false
			if m.timed {
				nd.csLeft = m.cs
			}
			if found == nil {
				found = x.checkMutex(s, i)
			}
		case effExit:
			nd.inCS, nd.csLeft = false, 0
		case effLeader:
			nd.leader = int32(e.a)
		}
	}
	return found
}

func (x *search) checkMutex(s *state, i int) *finding {
	var others []string
	for j := range s.nodes {
		if j != i && s.nodes[j].inCS {
			others = append(others, x.m.name(j))
		}
	}
	if others == nil {
		return nil
	}
	return &finding{property: sim.PropMutex,
		detail: fmt.Sprintf("%s entered the CS while %s is in it", x.m.name(i), strings.Join(others, ", "))}
}

// insertFlight puts a message in the canonical order: by content (its interned
// number, then its arrival window) when channels are not FIFO; by channel, in send
// order within a channel, when they are.
func (x *search) insertFlight(s *state, f flight) {
	k := len(s.msgs)
	if x.m.fifo {
		ch := x.it.msgs[f.msg].ch
		for k > 0 && x.it.msgs[s.msgs[k-1].msg].ch > ch {
			k--
		}
	} else {
		for k > 0 && flightLess(f, s.msgs[k-1]) {
			k--
		}
	}
	s.msgs = append(s.msgs, flight{})
	copy(s.msgs[k+1:], s.msgs[k:])
	s.msgs[k] = f
}

func flightLess(a, b flight) bool {
	if a.msg != b.msg {
		return a.msg < b.msg
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return a.hi < b.hi
}

func (s *state) removeMsg(k int) {
	s.msgs = append(s.msgs[:k], s.msgs[k+1:]...)
}

func (s *state) removeTimer(i int, name uint32) {
	for k, t := range s.timers {
		if int(t.node) == i && uint32(t.name) == name {
			s.timers = append(s.timers[:k], s.timers[k+1:]...)
			return
		}
	}
}

func (s *state) insertTimer(t timerSt) {
	k := len(s.timers)
	for k > 0 && (s.timers[k-1].node > t.node || (s.timers[k-1].node == t.node && s.timers[k-1].name > t.name)) {
		k--
	}
	s.timers = append(s.timers, timerSt{})
	copy(s.timers[k+1:], s.timers[k:])
	s.timers[k] = t
}

// quiescent is the kernel's notion: nothing in flight or armed but background
// traffic, no workload to come, nobody due to leave the CS.
func (x *search) quiescent(s *state) bool {
	m := x.m
	for _, f := range s.msgs {
		if !x.it.msgs[f.msg].bg {
			return false
		}
	}
	for _, t := range s.timers {
		if !x.it.timerBG[t.name] {
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
		if w, ok := x.it.nodes[i][s.nodes[i].id].(sim.WaitingFor); ok {
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

// initial builds the state after every node's Init, in index order, as sim.New does;
// an untimed search then runs the events at time 0 (the kernel runs them before any
// message can arrive), recording them in path if it is not nil.
func (x *search) initial(s *state, path *[]pstep) *finding {
	var found *finding
	for i := range s.nodes {
		s.nodes[i] = nodeSt{alive: true, leader: -1}
	}
	if x.m.drops != nil && !x.m.timed {
		s.avail = 1<<len(x.m.drops) - 1
		if len(x.m.drops) == 64 {
			s.avail = ^uint64(0)
		}
	}
	for i := range s.nodes {
		r := x.it.step(i, x.it.fresh[i], sim.Init, 0)
		if f := x.effects(s, i, r); f != nil && found == nil {
			found = f
		}
	}
	for _, k := range x.m.start {
		if path != nil {
			*path = append(*path, x.describe(s, trans{kind: tEvent, a: k}))
		}
		if f := x.act(s, k); f != nil && found == nil {
			found = f
		}
	}
	return found
}

// outcome is how a search ended.
type outcome struct {
	found *finding
	last  uint32 // the state reached by the violating path (or its parent, with via)
	via   int    // -1, or the number of the violating transition out of last
	bound string // the limit that stopped the search, if any

	// A lasso (liveness): the states of the path, the cycle being its last repeat
	// steps, and the process it keeps waiting.
	states []uint32
	repeat int
	waiter int
	kernel string // the property the kernel reports for it, if not the same
}

// run is the breadth-first search.
func (x *search) run(ctx context.Context) (outcome, error) {
	m := x.m
	x.cur, x.next = newState(m), newState(m)
	found := x.initial(x.cur, nil)
	if !m.timed && x.it.sawTimer && x.opt.Time == TimeAuto {
		return outcome{}, errRestartTimed
	}
	x.key = m.encode(x.key[:0], x.cur)
	x.st.insert(x.key, noParent)
	if found == nil {
		found = x.checkState(x.cur)
	}
	if found != nil {
		return outcome{found: found, last: 0, via: -1}, nil
	}
	levelEnd := 1
	lastCheck := time.Now()
	for k := 0; k < x.st.count; k++ {
		if k == levelEnd {
			x.depth++
			levelEnd = x.st.count
		}
		if err := m.decode(x.st.key(k), x.cur); err != nil {
			return outcome{}, err
		}
		x.trs = x.enumerate(x.cur, x.trs)
		x.st.startEdges(k)
		for ord, t := range x.trs {
			x.next.copyFrom(x.cur)
			f := x.apply(x.next, t)
			if !m.timed && x.it.sawTimer && x.opt.Time == TimeAuto {
				return outcome{}, errRestartTimed
			}
			x.transitions++
			if f != nil {
				return outcome{found: f, last: uint32(k), via: ord}, nil
			}
			x.key = m.encode(x.key[:0], x.next)
			if len(x.key) > MaxKey {
				return outcome{}, fmt.Errorf("explore: a state takes more than %d bytes to encode (too many messages in flight?)", MaxKey)
			}
			idx, isNew := x.st.insert(x.key, uint32(k))
			x.st.addEdge(idx)
			if !isNew {
				continue
			}
			if int64(x.st.count) > x.opt.MaxStates {
				return outcome{bound: BoundStates}, nil
			}
			if f := x.checkState(x.next); f != nil {
				return outcome{found: f, last: idx, via: -1}, nil
			}
		}
		if k&1023 == 1023 {
			if b := x.limits(ctx); b != "" {
				return outcome{bound: b}, nil
			}
			if x.opt.Progress != nil && time.Since(lastCheck) >= x.opt.ProgressEvery {
				lastCheck = time.Now()
				x.opt.Progress(x.progress())
			}
		}
	}
	x.st.startEdges(x.st.count) // close the last state's edges
	return outcome{}, nil
}

// limits reports which bound, if any, stops the search now.
func (x *search) limits(ctx context.Context) string {
	if x.opt.MaxStates > 0 && int64(x.st.count) >= x.opt.MaxStates {
		return BoundStates
	}
	if x.opt.MaxMemory > 0 && x.memory() >= x.opt.MaxMemory {
		return BoundMemory
	}
	if err := ctx.Err(); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return BoundTime
		}
		return BoundCancelled
	}
	return ""
}

func (x *search) memory() int64 { return x.st.memory() + x.it.bytes }

func (x *search) progress() Progress {
	secs := time.Since(x.start).Seconds()
	p := Progress{States: int64(x.st.count), Transitions: x.transitions, Depth: x.depth, Seconds: secs, Memory: x.memory()}
	if secs > 0 {
		p.StatesPerSecond = float64(x.st.count) / secs
	}
	return p
}
