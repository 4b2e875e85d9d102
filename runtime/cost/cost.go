// Package cost measures a run against the course notes' theory: messages per entry
// to and exit from the critical section, client and synchronisation delays, election
// messages and time, and the notes' ordering property (a request that happened before
// another is granted first). It reads trace events, from the kernel through a sim.Sink
// or decoded from trace v1, and evaluates each algorithm's Spec.Costs for the run's N.
// It is pure: no clock, no goroutine, no I/O beyond the reader it is given.
package cost

import (
	"math"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// Metric keys (stable: the web page and the compare page use them).
const (
	PerEntry         = "messages-per-entry"
	ToEnter          = "messages-to-enter"
	OnExit           = "messages-on-exit"
	ClientDelay      = "client-delay"
	SyncDelay        = "sync-delay"
	ElectionMessages = "election-messages"
	ElectionTime     = "election-time"
)

// Units of a metric.
const (
	UnitMessages = "messages"
	UnitTime     = "time" // virtual time; MeanT/MaxT give it in message times (T)
)

// Ordering verdicts.
const (
	OrderKept    = "kept"    // every grant came after the requests that happened before it
	OrderBroken  = "broken"  // some grant overtook a request that happened before it
	OrderNothing = "nothing" // no request happened before another one that was granted
)

// Result is what a run measured, beside the theory.
type Result struct {
	Algorithm string  `json:"algorithm"`
	Family    string  `json:"family"`
	N         int     `json:"n"`
	Step      int     `json:"step"` // the run was measured up to this step (-1: unknown)
	T         int     `json:"t"`    // virtual time of the last event
	MeanDelay float64 `json:"meanDelay"`

	Messages   int `json:"messages"`   // algorithm messages sent
	Background int `json:"background"` // background messages (heartbeats), not counted
	Requests   int `json:"requests"`
	Entries    int `json:"entries"`
	Exits      int `json:"exits"`
	Unserved   int `json:"unserved"` // requests still waiting at the end (live processes)

	Metrics   []Metric   `json:"metrics"`
	Ordering  *Ordering  `json:"ordering,omitempty"`  // mutex only
	Elections []Election `json:"elections,omitempty"` // election only, at most MaxElections
}

// MaxElections bounds the election list of a Result; the metrics count them all.
const MaxElections = 50

// Metric is one measured figure and the notes' figures for it.
type Metric struct {
	Key     string   `json:"key"`
	Name    string   `json:"name"`
	Unit    string   `json:"unit"`
	Samples int      `json:"samples"`
	Mean    *float64 `json:"mean"` // nil: nothing measured yet
	Max     *float64 `json:"max,omitempty"`
	MeanT   *float64 `json:"meanT,omitempty"` // time metrics: mean in message times
	MaxT    *float64 `json:"maxT,omitempty"`
	Theory  []Theory `json:"theory"`
	Note    string   `json:"note,omitempty"`
}

// Theory is one of the algorithm's costs, evaluated for the run's N.
type Theory struct {
	Name    string   `json:"name"`
	Formula string   `json:"formula"`
	Value   *float64 `json:"value"` // nil where the notes give no single number
}

// Ordering is the verdict on the notes' ordering property.
type Ordering struct {
	Verdict    string     `json:"verdict"`
	Checked    int        `json:"checked"`    // grants that had a causally earlier request of another process
	Violations int        `json:"violations"` // grants that overtook such a request
	First      *Violation `json:"first,omitempty"`
}

// Violation is a grant that overtook a request which happened before it.
type Violation struct {
	Earlier Point `json:"earlier"` // the request that happened before, still waiting
	Later   Point `json:"later"`   // the request granted first
	Grant   Point `json:"grant"`   // the later request's entry to the CS
}

// Point is one trace event: its process id, seq, step (-1 if unknown) and time.
type Point struct {
	Node int   `json:"node"`
	Seq  int64 `json:"seq"`
	Step int   `json:"step"`
	T    int   `json:"t"`
}

// Election is one election: from the first call (or the first message of a process
// that started one by itself) until every live process names the same live leader.
type Election struct {
	Start    Point  `json:"start"`
	Settled  *Point `json:"settled,omitempty"`
	Leader   int    `json:"leader"` // -1 until settled
	Messages int    `json:"messages"`
	Time     int    `json:"time"` // settled.t - start.t, 0 until settled
}

// Options tune a Collector.
type Options struct {
	// MeanDelay is the message time T that delays are expressed in; 0 leaves them in
	// virtual time only.
	MeanDelay float64
}

// MeanDelay is the network's mean delay, the notes' T for this run.
func MeanDelay(nw sim.Network) float64 { return float64(nw.DelayMin+nw.DelayMax) / 2 }

type request struct {
	node      int
	seq       int64
	step      int
	t         int
	vc        []int // the request event's vector clock
	msgsAt    int   // algorithm messages sent before it
	contended bool  // another process wanted or held the CS while it waited
	done      bool  // granted, or cancelled by a crash
}

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
	exited []int // processes that left the CS in it
	sends  []int // per process: algorithm messages sent in it (only touched ones are non-zero)
	sent   []int // processes that sent in it
	node   int   // trace mode: the process acting
	t      int
	// starter: it began with a recovery or a background (failure detector) timer, the
	// inputs on which a process calls an election by itself
	starter bool
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
	*a = activation{exited: a.exited[:0], sends: a.sends, sent: a.sent[:0]}
}

// Collector measures a run from its events, in order.
type Collector struct {
	spec      *sim.Spec
	ids       []int
	index     map[int]int // id -> index
	meanDelay float64
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

	toEnter, client, sync stat
	syncOpen              bool
	syncT                 int
	syncWaiting           []int // processes waiting when the CS was left

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
	Name   string // timer
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
		to := e.Msg.To
		if v, ok := c.msgVC[e.Msg.ID]; ok {
			merge(c.vc[to], v)
			c.forget(e.Msg.ID, v)
		}
		c.vc[to][to]++
	case sim.EvDrop:
		if v, ok := c.msgVC[e.Msg.ID]; ok {
			c.forget(e.Msg.ID, v)
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

func (c *Collector) request(i int, e *Event) {
	c.vc[i][i]++
	c.requests++
	r := &request{node: i, seq: e.Seq, step: c.step, t: e.T, vc: slices.Clone(c.vc[i]), msgsAt: c.msgs}
	for j, p := range c.pending {
		if p != nil && j != i {
			p.contended = true
			r.contended = true
		}
		if c.inCS[j] && j != i {
			r.contended = true
		}
	}
	c.pending[i] = r
	c.last[i] = r
}

// happenedBefore: request a happened before request b (at another process) when b's
// clock has seen a's own event.
func happenedBefore(a, b *request) bool {
	return a.node < len(b.vc) && a.vc[a.node] <= b.vc[a.node]
}

func (c *Collector) enter(i int, e *Event) {
	c.entries++
	c.inCS[i] = true
	grant := Point{Node: c.ids[i], Seq: e.Seq, Step: c.step, T: e.T}
	r := c.pending[i]
	if r != nil {
		c.pending[i] = nil
		r.done = true
		c.client.add(float64(e.T - r.t))
		if !r.contended {
			c.toEnter.add(float64(c.msgs - r.msgsAt))
		}
		// The ordering property: every request that happened before this one must
		// have been granted already.
		ordered, broken := false, false
		for j, a := range c.last {
			if j == i || a == nil || !happenedBefore(a, r) {
				continue
			}
			ordered = true
			if !a.done && c.pending[j] == a {
				broken = true
				if c.first == nil {
					c.first = &Violation{
						Earlier: Point{Node: c.ids[j], Seq: a.seq, Step: a.step, T: a.t},
						Later:   Point{Node: c.ids[i], Seq: r.seq, Step: r.step, T: r.t},
						Grant:   grant,
					}
				}
			}
		}
		if ordered {
			c.checked++
		}
		if broken {
			c.violations++
		}
	}
	if c.syncOpen {
		c.syncOpen = false
		if slices.Contains(c.syncWaiting, i) {
			c.sync.add(float64(e.T - c.syncT))
		}
	}
	c.vc[i][i]++
}

func (c *Collector) exit(i int, e *Event) {
	c.exits++
	c.inCS[i] = false
	c.act.exited = append(c.act.exited, i)
	c.syncWaiting = c.syncWaiting[:0]
	for j, p := range c.pending {
		if p != nil && j != i && c.alive[j] {
			c.syncWaiting = append(c.syncWaiting, j)
		}
	}
	c.syncOpen = len(c.syncWaiting) > 0
	c.syncT = e.T
	c.vc[i][i]++
}

func (c *Collector) startElection(e *Event) {
	if c.spec.Family != sim.Election {
		return
	}
	if c.electCur >= 0 && c.elections[c.electCur].Settled == nil {
		return // another caller joins the election under way
	}
	c.beginElection(Point{Node: c.ids[e.Node], Seq: e.Seq, Step: c.step, T: e.T})
}

func (c *Collector) beginElection(p Point) {
	c.elections = append(c.elections, Election{Start: p, Leader: -1})
	c.electCur = len(c.elections) - 1
	clear(c.declared)
}

// settle ends the current election once every live process has named a leader in it
// and they all name the same live process.
func (c *Collector) settle(e *Event) {
	if c.electCur < 0 {
		return
	}
	el := &c.elections[c.electCur]
	if el.Settled != nil {
		return
	}
	leader, live := -1, 0
	for i := range c.ids {
		if !c.alive[i] {
			continue
		}
		live++
		if !c.declared[i] || c.leader[i] < 0 {
			return
		}
		if leader >= 0 && c.leader[i] != leader {
			return
		}
		leader = c.leader[i]
	}
	if k, ok := c.index[leader]; live == 0 || !ok || !c.alive[k] {
		return
	}
	p := Point{Node: c.ids[e.Node], Seq: e.Seq, Step: c.step, T: e.T}
	el.Settled = &p
	el.Leader = leader
	el.Time = e.T - el.Start.T
}

// Result returns the metrics so far; the collector can go on reading events.
func (c *Collector) Result() Result {
	n := len(c.ids)
	exitMsgs := c.exitMsgs + c.act.exitSends()
	res := Result{
		Algorithm: c.spec.Slug, Family: string(c.spec.Family), N: n, Step: c.step, T: c.lastT,
		MeanDelay: c.meanDelay, Messages: c.msgs, Background: c.bgMsgs,
		Requests: c.requests, Entries: c.entries, Exits: c.exits,
	}
	for i, p := range c.pending {
		if p != nil && c.alive[i] {
			res.Unserved++
		}
	}
	if c.spec.Family == sim.Mutex {
		perEntry := Metric{Key: PerEntry, Name: "messages per CS entry (all messages / entries)", Unit: UnitMessages, Samples: c.entries}
		if c.entries > 0 {
			perEntry.Mean = ptr(float64(c.msgs) / float64(c.entries))
		}
		toEnter := c.statMetric(ToEnter, "messages to enter (sent while a lone request waited)", UnitMessages, c.toEnter)
		if c.toEnter.n == 0 && c.entries > 0 {
			toEnter.Note = "every entry so far had competition: measured only for a request that waited alone"
		}
		onExit := Metric{Key: OnExit, Name: "messages sent on leaving the CS, per exit", Unit: UnitMessages, Samples: c.exits}
		if c.exits > 0 {
			onExit.Mean = ptr(float64(exitMsgs) / float64(c.exits))
		}
		client := c.statMetric(ClientDelay, "client delay (request to entry)", UnitTime, c.client)
		sync := c.statMetric(SyncDelay, "synchronisation delay (exit to the next entry of a waiting process)", UnitTime, c.sync)
		if c.sync.n == 0 && c.entries > 0 {
			sync.Note = "needs a process waiting when another leaves the CS"
		}
		res.Metrics = []Metric{perEntry, toEnter, onExit, client, sync}
		o := &Ordering{Checked: c.checked, Violations: c.violations, First: c.first}
		switch {
		case c.violations > 0:
			o.Verdict = OrderBroken
		case c.checked > 0:
			o.Verdict = OrderKept
		default:
			o.Verdict = OrderNothing
		}
		res.Ordering = o
	} else {
		var msgs, time stat
		for _, el := range c.elections {
			if el.Settled != nil {
				msgs.add(float64(el.Messages))
				time.add(float64(el.Time))
			}
		}
		em := c.statMetric(ElectionMessages, "messages per election (until the next one starts)", UnitMessages, msgs)
		et := c.statMetric(ElectionTime, "election time (call to every live process knowing the leader)", UnitTime, time)
		res.Metrics = []Metric{em, et}
		res.Elections = c.elections[:min(len(c.elections), MaxElections)]
		res.Elections = slices.Clone(res.Elections)
	}
	for k := range res.Metrics {
		res.Metrics[k].Theory = TheoryFor(c.spec, res.Metrics[k].Key, n)
	}
	return res
}

func (c *Collector) statMetric(key, name, unit string, s stat) Metric {
	m := Metric{Key: key, Name: name, Unit: unit, Samples: s.n}
	if s.n == 0 {
		return m
	}
	m.Mean = ptr(s.sum / float64(s.n))
	m.Max = ptr(s.max)
	if unit == UnitTime && c.meanDelay > 0 {
		m.MeanT = ptr(*m.Mean / c.meanDelay)
		m.MaxT = ptr(s.max / c.meanDelay)
	}
	return m
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Get returns the metric with this key, or nil.
func (r *Result) Get(key string) *Metric {
	for k := range r.Metrics {
		if r.Metrics[k].Key == key {
			return &r.Metrics[k]
		}
	}
	return nil
}
