// Package cost measures a run against the course notes' theory: messages per entry
// to and exit from the critical section, client and synchronisation delays, election
// messages and time, and the notes' ordering property (a request that happened before
// another is granted first). It reads trace events, from the kernel through a sim.Sink
// or decoded from trace v1, and evaluates each algorithm's Spec.Costs for the run's N.
// It is pure: no clock, no goroutine, no I/O beyond the reader it is given.
package cost

import "github.com/teach-dist/playground/runtime/sim"

// Options tune a Collector.
type Options struct {
	// MeanDelay is the message time T that delays are expressed in; 0 leaves them in
	// virtual time only.
	MeanDelay float64
	// Params are the run's params (what the Spec's ParseParams returned): the
	// derived figures of costs that depend on them (sim.Cost.ValueFor) use them.
	Params any
}

// MeanDelay is the network's mean delay, the notes' T for this run.
func MeanDelay(nw sim.Network) float64 { return float64(nw.DelayMin+nw.DelayMax) / 2 }

type stat struct {
	n        int
	sum, max float64
}

func (s *stat) add(v float64) {
	s.n++
	s.sum += v
	s.max = max(s.max, v)
}

// activation is one kernel step or intervention: the sends a process makes in the
// activation in which it leaves the CS count as messages of the exit. Its slices are
// reused from one activation to the next.
type activation struct {
	open   bool
	exited []int     // processes that left the CS in it
	sends  []int     // per process: algorithm messages sent in it (only touched ones are non-zero)
	sent   []int     // processes that sent in it
	msgIDs []sentMsg // the algorithm messages sent in it, for the exit delay
	node   int       // trace mode: the process acting
	t      int
	// starter: it began with a recovery or a background (failure detector) timer, the
	// inputs on which a process calls an election by itself
	starter bool
}

// sentMsg is one algorithm message sent in an activation.
type sentMsg struct {
	from int
	id   int64
}

// exitSends counts the messages the processes that left the CS sent in it.
func (a *activation) exitSends() int {
	n := 0
	for _, p := range a.exited {
		if p < len(a.sends) {
			n += a.sends[p]
		}
	}
	return n
}

func (a *activation) reset() {
	for _, p := range a.sent {
		a.sends[p] = 0
	}
	*a = activation{exited: a.exited[:0], sends: a.sends, sent: a.sent[:0], msgIDs: a.msgIDs[:0]}
}

// Collector measures a run from its events, in order.
type Collector struct {
	spec      *sim.Spec
	ids       []int
	index     map[int]int // id -> index
	meanDelay float64
	params    any // the run's, for sim.Cost.ValueFor
	bg        map[string]bool
	bgTimers  map[string]bool

	step    int
	stepped bool // Boundary is called: activations are exact
	act     activation
	lastT   int

	msgs, bgMsgs, requests, entries, exits, exitMsgs int

	alive   []bool
	inCS    []bool
	pending []*request // per process: its waiting request
	last    []*request // per process: its latest request
	vc      [][]int
	msgVC   map[int64][]int
	spare   [][]int // clocks of delivered messages, reused for the next sends

	toEnter, client, sync, exitDelay stat
	exitsOpen                        map[int64]*exitWait // by message id: the exit it belongs to
	syncOpen                         bool
	syncT                            int
	syncWaiting                      []int // processes waiting when the CS was left

	checked, violations int
	first               *Violation

	leader    []int  // per process: the leader it names, -1: none
	declared  []bool // per process: named a leader in the current election
	elections []Election
	electCur  int // index of the current election, -1: none
}

// New returns a collector for a run of spec. ids are the run's ids in index order;
// with nil ids (a decoded trace of unknown setup) processes are learnt as they appear.
func New(spec *sim.Spec, ids []int, opts Options) *Collector {
	c := &Collector{
		spec:      spec,
		index:     map[int]int{},
		meanDelay: opts.MeanDelay,
		params:    opts.Params,
		bg:        map[string]bool{},
		bgTimers:  map[string]bool{},
		step:      -1,
		msgVC:     map[int64][]int{},
		electCur:  -1,
	}
	for _, m := range spec.BackgroundMessages {
		c.bg[m] = true
	}
	for _, m := range spec.BackgroundTimers {
		c.bgTimers[m] = true
	}
	for _, id := range ids {
		c.process(id)
	}
	return c
}

// process returns the index of id, adding it if it is new.
func (c *Collector) process(id int) int {
	if i, ok := c.index[id]; ok {
		return i
	}
	i := len(c.ids)
	c.index[id] = i
	c.ids = append(c.ids, id)
	c.alive = append(c.alive, true)
	c.inCS = append(c.inCS, false)
	c.pending = append(c.pending, nil)
	c.last = append(c.last, nil)
	c.leader = append(c.leader, -1)
	c.declared = append(c.declared, false)
	for k := range c.vc {
		c.vc[k] = append(c.vc[k], 0)
	}
	c.vc = append(c.vc, make([]int, len(c.ids)))
	// Clocks already attached to messages in flight gain the new component lazily (see
	// merge), so growing stays cheap.
	return i
}

// Boundary says that the events that follow belong to a new kernel step or
// intervention, numbered step (the timeline's step). Callers that know the steps call
// it before each; without it, steps are unknown and activations are inferred.
func (c *Collector) Boundary(step int) {
	c.closeActivation()
	c.step = step
	c.stepped = true
}

// Sink returns a sink for the kernel's events. The collector must have been given the
// run's ids: kernel events carry node indexes, which it reads as they are.
func (c *Collector) Sink() sim.Sink {
	return func(ev *sim.Event) {
		e := Event{Seq: ev.Seq, T: ev.T, Type: ev.Type, Node: ev.Node, Leader: ev.Leader, Name: ev.Name}
		if ev.Type == sim.EvRule {
			e.Name = ev.Rule
		}
		switch ev.Type {
		case sim.EvSend, sim.EvDeliver, sim.EvDrop:
			e.Msg = Msg{ID: ev.Msg.ID, Type: ev.Msg.Type, From: ev.Msg.From, To: ev.Msg.To}
		}
		if (e.Node >= len(c.ids) && hasNode(e.Type)) || e.Msg.From >= len(c.ids) || e.Msg.To >= len(c.ids) {
			return // not this run's (a sink shared by mistake): ignore rather than panic
		}
		c.add(&e)
	}
}

// Event is what the collector reads of a trace event. Node ids, not indexes.
type Event struct {
	Seq    int64
	T      int
	Type   sim.EventType
	Node   int    // id; -1 when the event has none
	Msg    Msg    // send, deliver, drop
	Leader int    // leader: the id it names
	Name   string // timer; rule: its label
}

// Msg identifies a message.
type Msg struct {
	ID       int64
	Type     string
	From, To int // ids
}

// Add reads one event; events must come in trace order.
func (c *Collector) Add(e Event) {
	if hasNode(e.Type) {
		if e.Node < 0 {
			return
		}
		e.Node = c.process(e.Node)
	}
	switch e.Type {
	case sim.EvSend, sim.EvDeliver, sim.EvDrop:
		e.Msg.From, e.Msg.To = c.process(e.Msg.From), c.process(e.Msg.To)
	}
	c.add(&e)
}

// add reads one event whose processes are indexes.
func (c *Collector) add(e *Event) {
	c.lastT = e.T
	if !c.stepped {
		c.inferActivation(e)
	}
	c.open(e.T, -1)
	node := -1
	if hasNode(e.Type) {
		if e.Node < 0 {
			return
		}
		node = e.Node
	}
	switch e.Type {
	case sim.EvSend:
		c.send(e)
	case sim.EvDeliver:
		c.exitArrived(e.Msg.ID, e.T)
		to := e.Msg.To
		if v, ok := c.msgVC[e.Msg.ID]; ok {
			merge(c.vc[to], v)
			c.forget(e.Msg.ID, v)
		}
		c.vc[to][to]++
	case sim.EvDrop:
		c.exitArrived(e.Msg.ID, -1)
		if v, ok := c.msgVC[e.Msg.ID]; ok {
			c.forget(e.Msg.ID, v)
		}
	case sim.EvRule:
		if c.spec.DoorwayEnds != "" && e.Name == c.spec.DoorwayEnds {
			c.doorwayEnds(node, e)
		}
	case sim.EvRequest:
		c.request(node, e)
	case sim.EvEnter:
		c.enter(node, e)
	case sim.EvExit:
		c.exit(node, e)
	case sim.EvCrash:
		c.alive[node] = false
		c.inCS[node] = false
		if r := c.pending[node]; r != nil {
			r.done = true
			c.pending[node] = nil
		}
		c.leader[node] = -1
		c.settle(e)
	case sim.EvRecover:
		c.alive[node] = true
		c.vc[node][node]++
		c.act.starter = true
	case sim.EvTimer:
		c.act.starter = c.act.starter || c.bgTimers[e.Name]
	case sim.EvElect:
		c.vc[node][node]++
		c.startElection(e)
	case sim.EvLeader:
		c.leader[node] = e.Leader
		if c.electCur >= 0 {
			c.declared[node] = true
		}
		c.settle(e)
	}
}

func hasNode(t sim.EventType) bool {
	switch t {
	case sim.EvRule, sim.EvRequest, sim.EvEnter, sim.EvExit, sim.EvElect, sim.EvLeader,
		sim.EvCrash, sim.EvRecover, sim.EvTimer:
		return true
	}
	return false
}

// inferActivation starts a new activation where a decoded trace shows one: at an
// input (a delivery, a timer, an action), when time moves, or when another process
// acts. A release has no event of its own, so one that follows a step of the same
// process at the same time is taken as part of it: the only approximation of the
// trace mode, which can count that step's sends as the exit's.
func (c *Collector) inferActivation(e *Event) {
	actor := e.Node
	switch e.Type {
	case sim.EvDeliver, sim.EvTimer, sim.EvRequest, sim.EvElect, sim.EvCrash, sim.EvRecover,
		sim.EvPartition, sim.EvHeal:
		c.closeActivation()
		c.open(e.T, actor)
		return
	case sim.EvSend:
		actor = e.Msg.From
	case sim.EvRule, sim.EvEnter, sim.EvExit, sim.EvLeader:
	default:
		return
	}
	if c.act.open && (c.act.t != e.T || c.act.node != actor) {
		c.closeActivation()
	}
	c.open(e.T, actor)
}

func (c *Collector) open(t, actor int) {
	if !c.act.open {
		c.act.open, c.act.t, c.act.node = true, t, actor
	}
}

func (c *Collector) closeActivation() {
	c.exitMsgs += c.act.exitSends()
	c.openExits()
	c.act.reset()
}

func (c *Collector) send(e *Event) {
	from := e.Msg.From
	c.vc[from][from]++
	var v []int
	if k := len(c.spare); k > 0 && len(c.spare[k-1]) == len(c.ids) {
		v = c.spare[k-1]
		c.spare = c.spare[:k-1]
	} else {
		v = make([]int, len(c.ids))
	}
	copy(v, c.vc[from])
	c.msgVC[e.Msg.ID] = v
	if e.Msg.Type == sim.AppMessage {
		return // an application message carries causality (above), never cost
	}
	if c.bg[e.Msg.Type] {
		c.bgMsgs++
		return
	}
	c.msgs++
	for len(c.act.sends) < len(c.ids) {
		c.act.sends = append(c.act.sends, 0)
	}
	if c.act.sends[from] == 0 {
		c.act.sent = append(c.act.sent, from)
	}
	c.act.sends[from]++
	c.act.msgIDs = append(c.act.msgIDs, sentMsg{from, e.Msg.ID})
	if c.spec.Family == sim.Election {
		// A process that calls an election by itself (on recovering, or when its
		// failure detector suspects the leader) makes no elect event: its first message
		// starts a new election once the last one has settled. Any other message after
		// the settling (an announcement's last hops, a late time-out) is still the
		// last election's.
		if c.electCur < 0 || c.elections[c.electCur].Settled != nil && c.act.starter {
			c.beginElection(Point{Node: c.ids[from], Seq: e.Seq, Step: c.step, T: e.T})
		}
		c.elections[c.electCur].Messages++
	}
}

// forget drops a message's clock once it has landed; its slice serves again.
func (c *Collector) forget(id int64, v []int) {
	delete(c.msgVC, id)
	if len(c.spare) < 1024 {
		c.spare = append(c.spare, v)
	}
}

// merge takes the component-wise maximum; v may be shorter (sent before a process
// was learnt).
func merge(dst, v []int) {
	for k := range min(len(dst), len(v)) {
		dst[k] = max(dst[k], v[k])
	}
}
