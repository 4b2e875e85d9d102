// Package sim is the deterministic discrete-event kernel: virtual time, a seeded PRNG,
// the network model, crashes, timers, the workload and the monitors. It imports nothing
// of the project's own, owns no goroutine and reads no clock.
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Limits bound every run.
const (
	MinNodes         = 2
	MaxNodes         = 128
	MaxTime          = 1_000_000_000
	DefaultMaxEvents = 2_000_000
	MaxDelay         = 1_000_000
)

// Network is the network model of a run.
type Network struct {
	DelayMin, DelayMax int     // uniform in [min, max]; min == max is a fixed delay
	FIFO               bool    // channels deliver in send order
	Loss               float64 // probability that a message is lost
	Hold               bool    // messages wait until an ActDeliver picks them
}

// Config is everything a run is built from. Same Config and same interventions: the
// same trace, byte for byte.
type Config struct {
	Spec    *Spec
	IDs     []int
	Params  any
	Seed    uint64
	Network Network
	CS      int // time a node stays in the CS; 0 keeps it there until a release
	Until   int // the run stops after this virtual time
	Actions []Action
	// Pending is how long a request may wait before the liveness monitor reports it
	// (0: a default derived from N, the delays and CS).
	Pending   int
	MaxEvents int // 0: DefaultMaxEvents
}

// Sink receives each trace event. The event is only valid during the call.
type Sink func(ev *Event)

// ErrEventLimit is returned when a run emits more events than its limit.
var ErrEventLimit = errors.New("event limit reached")

type slotState uint8

const (
	slotFree slotState = iota
	slotLive
	slotDead // removed from the run; its queue item is skipped when popped
)

type msgSlot struct {
	msg   Message
	at    int // arrival time
	state slotState
	held  bool
	bg    bool // a background message (heartbeat): it never keeps a run from being quiet
}

type timerSlot struct {
	node  int
	name  string
	state slotState
	bg    bool
}

// Sim is one run.
type Sim struct {
	cfg   Config
	spec  *Spec
	n     int
	setup Setup
	sink  Sink
	enc   *Encoder

	nodes []Node
	alive []bool
	rng   *rand.Rand
	pcg   *rand.PCG

	now     int
	seq     int64
	steps   int
	events  int64
	q       queue
	ctx     Context
	ev      Event
	in      Input
	ended   bool
	lastArr []int   // FIFO: last arrival time per channel (from*n+to)
	net     Network // the network model in force: cfg.Network, then as ActNetwork changed it
	group   []int   // partition group per node; all equal when connected

	msgs      []msgSlot
	freeMsgs  []int32
	held      []int32 // hold mode: slots in send order
	nextMsgID int64
	inflight  int

	timers       []timerSlot
	freeTimers   []int32
	nodeTimers   []map[string]int32
	activeTimers int // armed timers that are not background timers

	armedDrops     []Action
	pendingActions int
	pendingRelease int
	releaseDue     []bool // node's scheduled end of CS still counts in pendingRelease

	inCS         []bool
	csCount      int
	csGen        []uint32
	pendingSince []int // -1: no request pending
	pendingSeen  []bool
	pendingLimit int
	nextDeadline int
	leaderOf     []int    // id, -1: none
	quietSeen    bool     // the current quiescent period has been checked
	quietFound   []string // findings reported in the current quiescent period
	totals       Totals
}

// New builds a run and initialises every node (the Init rules fire at time 0).
func New(cfg Config, sink Sink) (*Sim, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	n := len(cfg.IDs)
	s := &Sim{
		cfg:          cfg,
		spec:         cfg.Spec,
		n:            n,
		setup:        Setup{IDs: cfg.IDs, Params: cfg.Params, MaxDelay: cfg.Network.DelayMax},
		sink:         sink,
		nodes:        make([]Node, n),
		alive:        make([]bool, n),
		lastArr:      make([]int, n*n),
		group:        make([]int, n),
		nodeTimers:   make([]map[string]int32, n),
		inCS:         make([]bool, n),
		csGen:        make([]uint32, n),
		releaseDue:   make([]bool, n),
		pendingSince: make([]int, n),
		pendingSeen:  make([]bool, n),
		leaderOf:     make([]int, n),
		nextMsgID:    1,
		nextDeadline: MaxTime + 1,
	}
	if s.cfg.MaxEvents <= 0 {
		s.cfg.MaxEvents = DefaultMaxEvents
	}
	s.enc = NewEncoder(cfg.Spec, cfg.IDs)
	s.net = cfg.Network
	s.pcg = rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)
	s.rng = rand.New(s.pcg)
	s.pendingLimit = cfg.Pending
	if s.pendingLimit <= 0 {
		s.pendingLimit = defaultPending(&cfg)
	}
	s.ctx.ids = cfg.IDs
	for i := range s.pendingSince {
		s.pendingSince[i] = -1
		s.leaderOf[i] = -1
		s.alive[i] = true
	}
	for i := range cfg.Actions {
		s.schedule(item{t: cfg.Actions[i].At, kind: itemAction, slot: int32(i)})
		s.pendingActions++
	}
	for i := range s.nodes {
		s.nodes[i] = s.spec.New(i, &s.setup)
	}
	for i := range s.nodes {
		if err := s.stepNode(i, s.input(Init)); err != nil {
			return nil, err
		}
	}
	return s, s.monitorStep()
}

func defaultPending(cfg *Config) int {
	// Generous: every other node may go first, each needing a few message delays.
	return len(cfg.IDs) * (cfg.CS + 4*cfg.Network.DelayMax + 4)
}

func validate(cfg *Config) error {
	if cfg.Spec == nil {
		return errors.New("no algorithm")
	}
	n := len(cfg.IDs)
	if n < MinNodes || n > MaxNodes {
		return fmt.Errorf("nodes: %d is out of range (%d to %d)", n, MinNodes, MaxNodes)
	}
	nw := cfg.Network
	if nw.DelayMin < 0 || nw.DelayMax < nw.DelayMin || nw.DelayMax > MaxDelay {
		return fmt.Errorf("network.delay: [%d, %d] must satisfy 0 <= min <= max <= %d", nw.DelayMin, nw.DelayMax, MaxDelay)
	}
	if nw.Loss < 0 || nw.Loss > 1 || nw.Loss != nw.Loss {
		return fmt.Errorf("network.loss: %v must be between 0 and 1", nw.Loss)
	}
	if cfg.Until < 0 || cfg.Until > MaxTime {
		return fmt.Errorf("until: %d is out of range (0 to %d)", cfg.Until, MaxTime)
	}
	if cfg.CS < 0 || cfg.CS > MaxTime {
		return fmt.Errorf("cs: %d is out of range (0 to %d)", cfg.CS, MaxTime)
	}
	for i := range cfg.Actions {
		a := &cfg.Actions[i]
		if a.At < 0 || a.At > MaxTime {
			return fmt.Errorf("events[%d].at: %d is out of range (0 to %d)", i, a.At, MaxTime)
		}
		if err := checkAction(cfg, a); err != nil {
			return fmt.Errorf("events[%d]: %w", i, err)
		}
	}
	return nil
}

func checkAction(cfg *Config, a *Action) error {
	n := len(cfg.IDs)
	inRange := func(i int) bool { return i >= 0 && i < n }
	switch a.Do {
	case ActRequest, ActRelease:
		if cfg.Spec.Family != Mutex {
			return fmt.Errorf("do: %q needs a mutual exclusion algorithm; %s elects a leader", a.Do, cfg.Spec.Slug)
		}
	case ActElect:
		if cfg.Spec.Family != Election {
			return fmt.Errorf("do: %q needs an election algorithm; %s is mutual exclusion", a.Do, cfg.Spec.Slug)
		}
	case ActCrash, ActRecover, ActHeal:
	case ActNetwork:
		return a.Net.Check()
	case ActFire:
		if a.Timer == "" {
			return errors.New("name: fire needs the name of a timer")
		}
	case ActTell:
		if !inRange(a.Node) {
			return fmt.Errorf("node: index %d does not exist", a.Node)
		}
		if !inRange(a.To) {
			return errors.New("to: tell needs the process to tell (no such node)")
		}
		if a.To == a.Node {
			return errors.New("to: a process tells another process, not itself")
		}
		return nil
	case ActDrop, ActDeliver:
		if a.Do == ActDeliver && a.Msg <= 0 {
			return errors.New("msg: deliver needs the id of a held message")
		}
		if (a.From >= 0 && !inRange(a.From)) || (a.To >= 0 && !inRange(a.To)) {
			return errors.New("from/to: no such node")
		}
		return nil
	case ActPartition:
		seen := make([]bool, n)
		if len(a.Groups) == 0 {
			return errors.New("groups: a partition needs at least one group")
		}
		for _, g := range a.Groups {
			for _, i := range g {
				if !inRange(i) {
					return fmt.Errorf("groups: node index %d does not exist", i)
				}
				if seen[i] {
					return fmt.Errorf("groups: node %d is in two groups", cfg.IDs[i])
				}
				seen[i] = true
			}
		}
		return nil
	default:
		return fmt.Errorf("do: unknown action %d", a.Do)
	}
	if a.Do != ActHeal && !inRange(a.Node) {
		return fmt.Errorf("node: index %d does not exist", a.Node)
	}
	return nil
}

// Spec returns the run's algorithm.
func (s *Sim) Spec() *Spec { return s.spec }

// IDs returns node index -> id.
func (s *Sim) IDs() []int { return s.cfg.IDs }

// Config returns the run's configuration.
func (s *Sim) Config() *Config { return &s.cfg }

// Now is the virtual time; Steps the number of steps taken; Ended whether End ran.
func (s *Sim) Now() int       { return s.now }
func (s *Sim) Steps() int     { return s.steps }
func (s *Sim) Ended() bool    { return s.ended }
func (s *Sim) Totals() Totals { return s.totals }

// Network returns the network model in force now (Config().Network is the one the run
// started with).
func (s *Sim) Network() Network { return s.net }

// Encoder returns the trace encoder for this run.
func (s *Sim) Encoder() *Encoder { return s.enc }

func (s *Sim) schedule(it item) {
	it.seq = s.seq
	s.seq++
	s.q.push(it)
}

func (s *Sim) emit(ev *Event) error {
	if s.events >= int64(s.cfg.MaxEvents) {
		return fmt.Errorf("%w: more than %d trace events (shorten until or lighten the workload)", ErrEventLimit, s.cfg.MaxEvents)
	}
	ev.Seq = s.events
	ev.T = s.now
	s.events++
	if s.sink != nil {
		s.sink(ev)
	}
	return nil
}

// event resets the scratch event for a new emission.
func (s *Sim) event(t EventType, node int) *Event {
	s.ev = Event{Type: t, Node: node}
	return &s.ev
}

// HasNext reports whether a step remains before the end of the run.
func (s *Sim) HasNext() bool {
	s.skipDead()
	return s.q.Len() > 0 && s.q.peek().t <= s.until()
}

func (s *Sim) until() int {
	if s.cfg.Until > 0 {
		return s.cfg.Until
	}
	return MaxTime
}

// skipDead pops items whose message or timer was removed from the run.
func (s *Sim) skipDead() {
	for s.q.Len() > 0 {
		it := s.q.peek()
		switch it.kind {
		case itemMessage:
			if s.msgs[it.slot].state != slotDead {
				return
			}
			s.freeMsg(it.slot)
		case itemTimer:
			if s.timers[it.slot].state != slotDead {
				return
			}
			s.timers[it.slot] = timerSlot{}
			s.freeTimers = append(s.freeTimers, it.slot)
		case itemRelease:
			node := int(it.slot)
			if s.inCS[node] && s.csGen[node] == it.gen {
				return
			}
			// Stale: releaseDone already stopped counting it when the node left the CS.
		default:
			return
		}
		s.q.pop()
	}
}

// Step takes the next step: one delivery, timer, scheduled action or end of a CS.
// It returns false when the run has nothing left to do before Until.
func (s *Sim) Step() (bool, error) {
	if !s.HasNext() {
		return false, nil
	}
	it := s.q.pop()
	if it.t > s.now {
		s.now = it.t
	}
	s.steps++
	var err error
	switch it.kind {
	case itemMessage:
		err = s.deliverSlot(it.slot)
	case itemTimer:
		err = s.fireTimer(it.slot)
	case itemAction:
		s.pendingActions--
		a := s.cfg.Actions[it.slot]
		err = s.apply(&a, false)
	case itemRelease:
		s.releaseDone(int(it.slot))
		err = s.release(int(it.slot))
	}
	if err != nil {
		return false, err
	}
	return true, s.monitorStep()
}

// Run steps until the end and emits the end event.
func (s *Sim) Run() error {
	for {
		ok, err := s.Step()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	// The run is observed until Until even when nothing happens any more, so a request
	// that waits forever is reported by the pending monitor too.
	if s.cfg.Until > s.now {
		s.now = s.cfg.Until
		if err := s.monitorStep(); err != nil {
			return err
		}
	}
	return s.End()
}

// End emits the closing totals once; later calls do nothing.
func (s *Sim) End() error {
	if s.ended {
		return nil
	}
	s.ended = true
	s.totals.Steps = s.steps
	ev := s.event(EvEnd, -1)
	t := s.totals
	ev.Totals = &t
	return s.emit(ev)
}

// Apply performs a live intervention now, between steps. It returns an *ActionError
// when the action makes no sense in the current state (crashing a crashed node, ...).
func (s *Sim) Apply(a Action) error {
	if err := checkAction(&s.cfg, &a); err != nil {
		return &ActionError{Action: a.Do, Reason: err.Error()}
	}
	if err := s.apply(&a, true); err != nil {
		return err
	}
	// A live crash, partition or request can change what the quiescent checks see
	// without ending the quiet (a leader crashed after the election settled): check
	// again; findings already reported in this quiet period are not repeated.
	s.quietSeen = false
	return s.monitorStep()
}

func (s *Sim) refuse(live bool, a *Action, format string, args ...any) error {
	if !live {
		return nil // a scheduled action that no longer applies is skipped
	}
	return &ActionError{Action: a.Do, Reason: fmt.Sprintf(format, args...)}
}

func (s *Sim) name(i int) string { return fmt.Sprintf("P%d", s.cfg.IDs[i]) }

func (s *Sim) apply(a *Action, live bool) error {
	i := a.Node
	switch a.Do {
	case ActRequest:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		if s.pendingSince[i] >= 0 || s.inCS[i] {
			return s.refuse(live, a, "%s already wants or holds the CS", s.name(i))
		}
		if err := s.emit(s.event(EvRequest, i)); err != nil {
			return err
		}
		s.pendingSince[i] = s.now
		s.pendingSeen[i] = false
		s.nextDeadline = min(s.nextDeadline, s.now+s.pendingLimit)
		return s.stepNode(i, s.input(Request))
	case ActRelease:
		if !s.alive[i] || !s.inCS[i] {
			return s.refuse(live, a, "%s is not in the CS", s.name(i))
		}
		return s.release(i)
	case ActElect:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		if err := s.emit(s.event(EvElect, i)); err != nil {
			return err
		}
		s.totals.Elections++
		return s.stepNode(i, s.input(Elect))
	case ActCrash:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is already crashed", s.name(i))
		}
		return s.crash(i)
	case ActRecover:
		if s.alive[i] {
			return s.refuse(live, a, "%s is not crashed", s.name(i))
		}
		return s.recover(i)
	case ActDrop:
		return s.drop(a, live)
	case ActDeliver:
		return s.deliverHeld(a, live)
	case ActPartition:
		return s.partition(a.Groups)
	case ActHeal:
		clear(s.group)
		return s.emit(s.event(EvHeal, -1))
	case ActNetwork:
		s.setNetwork(&a.Net)
	case ActFire:
		return s.fireNow(a, live)
	case ActTell:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		return s.send(Message{Type: AppMessage, From: i, To: a.To})
	}
	return nil
}

func (s *Sim) release(i int) error {
	if !s.alive[i] || !s.inCS[i] {
		return nil
	}
	return s.stepNode(i, s.input(Release))
}

// input returns the run's scratch input, reset to kind: reusing it keeps a step free
// of allocation (nodes must not keep the pointer).
func (s *Sim) input(kind InputKind) *Input {
	s.in = Input{Kind: kind}
	return &s.in
}

// stepNode gives one input to node i and carries out what it did, in order.
func (s *Sim) stepNode(i int, in *Input) error {
	s.ctx.Reset(i)
	s.nodes[i].Step(&s.ctx, in)
	for k := range s.ctx.effects {
		if err := s.effect(i, &s.ctx.effects[k]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) effect(i int, e *Effect) error {
	switch e.Kind {
	case FireRule:
		ev := s.event(EvRule, i)
		ev.Rule = e.Rule
		ev.Why = e.Why
		return s.emit(ev)
	case Send:
		if e.Msg.To < 0 || e.Msg.To >= s.n {
			return fmt.Errorf("%s: %s sent %s to node index %d, which does not exist", s.spec.Slug, s.name(i), e.Msg.Type, e.Msg.To)
		}
		if e.Msg.Type == AppMessage {
			// The kernel would take it for a tell and never deliver it to the algorithm.
			return fmt.Errorf("%s: %s sent a message of type %s, which is reserved for application messages", s.spec.Slug, s.name(i), AppMessage)
		}
		// The message leaves the node: it must not share slices with the node's state.
		return s.send(e.Msg.Clone())
	case SetTimer:
		s.setTimer(i, e.Timer, e.After)
	case CancelTimer:
		s.cancelTimer(i, e.Timer)
	case EnterCS:
		return s.enter(i)
	case ExitCS:
		if !s.inCS[i] {
			return nil
		}
		s.inCS[i] = false
		s.csCount--
		s.csGen[i]++
		s.releaseDone(i)
		return s.emit(s.event(EvExit, i))
	case DeclareLeader:
		s.leaderOf[i] = e.Leader
		ev := s.event(EvLeader, i)
		ev.Leader = e.Leader
		return s.emit(ev)
	}
	return nil
}

func (s *Sim) enter(i int) error {
	if s.inCS[i] {
		return nil
	}
	s.inCS[i] = true
	s.csCount++
	s.pendingSince[i] = -1
	s.totals.Entries++
	if err := s.emit(s.event(EvEnter, i)); err != nil {
		return err
	}
	if s.csCount > 1 {
		others := ""
		for j := range s.inCS {
			if s.inCS[j] && j != i {
				if others != "" {
					others += ", "
				}
				others += s.name(j)
			}
		}
		if err := s.violation("mutual-exclusion", fmt.Sprintf("%s entered the CS while %s is in it", s.name(i), others)); err != nil {
			return err
		}
	}
	if s.cfg.CS > 0 {
		s.schedule(item{t: s.now + s.cfg.CS, kind: itemRelease, slot: int32(i), gen: s.csGen[i]})
		s.pendingRelease++
		s.releaseDue[i] = true
	}
	return nil
}

// releaseDone stops counting node i's scheduled end of CS as work to come: it is being
// carried out, or the node left the CS first (exit or crash) and the queued item is now
// stale. Counting a stale item until it was popped made the run look busy, so the
// quiescence checks (deadlock, leader) came late or never.
func (s *Sim) releaseDone(i int) {
	if s.releaseDue[i] {
		s.releaseDue[i] = false
		s.pendingRelease--
	}
}

func (s *Sim) violation(property, detail string) error {
	s.totals.Violations++
	ev := s.event(EvViolation, -1)
	ev.Property = property
	ev.Detail = detail
	return s.emit(ev)
}

// Drop reasons, as written in the trace.
const (
	ReasonLost      = "lost"
	ReasonPartition = "partition"
	ReasonCrashed   = "receiver crashed"
	ReasonUser      = "dropped by the user"
)

func (s *Sim) send(m Message) error {
	m.ID = s.nextMsgID
	s.nextMsgID++
	if m.Type == AppMessage {
		s.totals.App++ // not the algorithm's: its costs leave it out
	} else {
		s.totals.Messages++
	}
	ev := s.event(EvSend, m.From)
	ev.Msg = m
	if err := s.emit(ev); err != nil {
		return err
	}
	for k := range s.armedDrops {
		if s.armedDrops[k].matches(&m) {
			s.armedDrops = slices.Delete(s.armedDrops, k, k+1)
			return s.dropped(&m, m.From, ReasonUser)
		}
	}
	if s.group[m.From] != s.group[m.To] {
		return s.dropped(&m, m.From, ReasonPartition)
	}
	nw := &s.net
	if nw.Loss > 0 && s.rng.Float64() < nw.Loss {
		return s.dropped(&m, m.From, ReasonLost)
	}
	at := s.arrival(&m)
	slot := s.allocMsg()
	bg := len(s.spec.BackgroundMessages) > 0 && slices.Contains(s.spec.BackgroundMessages, m.Type)
	s.msgs[slot] = msgSlot{msg: m, at: at, state: slotLive, held: nw.Hold, bg: bg}
	if !bg {
		s.inflight++
	}
	if nw.Hold {
		s.held = append(s.held, slot)
		return nil
	}
	s.schedule(item{t: at, kind: itemMessage, slot: slot})
	return nil
}

// arrival draws a message's arrival time from the delay in force, after every message
// in flight on its channel when channels are FIFO.
func (s *Sim) arrival(m *Message) int {
	nw := &s.net
	delay := nw.DelayMin
	if nw.DelayMax > nw.DelayMin {
		delay += s.rng.IntN(nw.DelayMax - nw.DelayMin + 1)
	}
	at := s.now + delay
	if nw.FIFO {
		ch := m.From*s.n + m.To
		at = max(at, s.lastArr[ch])
		s.lastArr[ch] = at
	}
	return at
}

func (s *Sim) dropped(m *Message, node int, reason string) error {
	if m.Type != AppMessage {
		s.totals.Dropped++
	}
	ev := s.event(EvDrop, node)
	ev.Msg = *m
	ev.Reason = reason
	return s.emit(ev)
}

func (s *Sim) allocMsg() int32 {
	if k := len(s.freeMsgs); k > 0 {
		slot := s.freeMsgs[k-1]
		s.freeMsgs = s.freeMsgs[:k-1]
		return slot
	}
	s.msgs = append(s.msgs, msgSlot{})
	return int32(len(s.msgs) - 1)
}

func (s *Sim) freeMsg(slot int32) {
	s.msgs[slot] = msgSlot{}
	s.freeMsgs = append(s.freeMsgs, slot)
}

func (s *Sim) deliverSlot(slot int32) error {
	m := s.msgs[slot].msg
	if !s.msgs[slot].bg {
		s.inflight--
	}
	s.freeMsg(slot)
	return s.deliver(&m)
}

func (s *Sim) deliver(m *Message) error {
	if !s.alive[m.To] {
		return s.dropped(m, m.To, ReasonCrashed)
	}
	if s.group[m.From] != s.group[m.To] {
		return s.dropped(m, m.To, ReasonPartition)
	}
	ev := s.event(EvDeliver, m.To)
	ev.Msg = *m
	if m.Type == AppMessage {
		// An application message only carries causality: the algorithm never sees it.
		return s.emit(ev)
	}
	s.totals.Delivered++
	if err := s.emit(ev); err != nil {
		return err
	}
	in := s.input(Deliver)
	in.Msg = *m
	return s.stepNode(m.To, in)
}

func (s *Sim) deliverHeld(a *Action, live bool) error {
	for k, slot := range s.held {
		m := &s.msgs[slot].msg
		if m.ID != a.Msg {
			continue
		}
		if s.net.FIFO {
			// FIFO channels: only the oldest held message of a channel may go (the held
			// list is in send order).
			for _, o := range s.held[:k] {
				if om := &s.msgs[o].msg; om.From == m.From && om.To == m.To {
					return s.refuse(live, a, "FIFO: message %d waits behind message %d on the channel %s -> %s",
						m.ID, om.ID, s.name(m.From), s.name(m.To))
				}
			}
		}
		s.held = slices.Delete(s.held, k, k+1)
		if live {
			s.steps++ // the user's pick is the network's step (Action.TakesStep)
		}
		return s.deliverSlot(slot)
	}
	return s.refuse(live, a, "message %d is not held in flight", a.Msg)
}

// setNetwork changes the network model from now on (see NetChange for the rules about
// messages in flight). Everything it touches goes in send order, so the same change
// at the same step always gives the same run.
func (s *Sim) setNetwork(c *NetChange) {
	old := s.net
	s.net = c.Apply(s.net)
	if s.cfg.Pending <= 0 {
		// The liveness bound follows the slowest network the run has had, so a request
		// made while messages crawled is not reported for the network's slowness.
		cfg := s.cfg
		cfg.Network = s.net
		if p := defaultPending(&cfg); p > s.pendingLimit {
			s.pendingLimit = p
		}
	}
	if s.net.FIFO && !old.FIFO {
		s.fifoFromInFlight()
	}
	switch {
	case s.net.Hold && !old.Hold:
		s.holdInFlight()
	case !s.net.Hold && old.Hold:
		s.releaseHeld()
	}
}

// fifoFromInFlight sets each channel's last arrival to the latest message in flight on
// it, so messages sent from now on arrive after them.
func (s *Sim) fifoFromInFlight() {
	clear(s.lastArr)
	for k := range s.msgs {
		if ms := &s.msgs[k]; ms.state == slotLive && !ms.held {
			ch := ms.msg.From*s.n + ms.msg.To
			s.lastArr[ch] = max(s.lastArr[ch], ms.at)
		}
	}
}

// holdInFlight parks every scheduled message, in send order. Its queued item cannot be
// taken out of the heap: the old slot is marked dead (skipped when popped) and the
// message moves to a new, held slot.
func (s *Sim) holdInFlight() {
	var moving []int32
	for k := range s.msgs {
		if ms := &s.msgs[k]; ms.state == slotLive && !ms.held {
			moving = append(moving, int32(k))
		}
	}
	slices.SortFunc(moving, func(a, b int32) int { return int(s.msgs[a].msg.ID - s.msgs[b].msg.ID) })
	for _, old := range moving {
		ms := s.msgs[old]
		s.msgs[old].state = slotDead
		slot := s.allocMsg()
		ms.held = true
		s.msgs[slot] = ms
		s.held = append(s.held, slot)
	}
}

// releaseHeld gives every held message, in send order, an arrival time drawn now.
func (s *Sim) releaseHeld() {
	if s.net.FIFO {
		s.fifoFromInFlight()
	}
	for _, slot := range s.held {
		ms := &s.msgs[slot]
		ms.held = false
		ms.at = s.arrival(&ms.msg)
		s.schedule(item{t: ms.at, kind: itemMessage, slot: slot})
	}
	s.held = s.held[:0]
}

// drop removes a message in flight chosen by id or filter; a filter that matches
// nothing in flight is armed for the next matching send.
func (s *Sim) drop(a *Action, live bool) error {
	best := int32(-1)
	for slot := range s.msgs {
		ms := &s.msgs[slot]
		if ms.state == slotLive && a.matches(&ms.msg) && (best < 0 || ms.msg.ID < s.msgs[best].msg.ID) {
			best = int32(slot)
		}
	}
	if best < 0 {
		if a.Msg != 0 {
			return s.refuse(live, a, "message %d is not in flight", a.Msg)
		}
		s.armedDrops = append(s.armedDrops, *a)
		return nil
	}
	return s.removeInFlight(best, ReasonUser)
}

// removeInFlight takes a message out of the network with a drop event.
func (s *Sim) removeInFlight(slot int32, reason string) error {
	ms := &s.msgs[slot]
	m := ms.msg
	if !ms.bg {
		s.inflight--
	}
	if ms.held {
		s.held = slices.DeleteFunc(s.held, func(x int32) bool { return x == slot })
		s.freeMsg(slot)
	} else {
		ms.state = slotDead
	}
	return s.dropped(&m, m.To, reason)
}

func (s *Sim) crash(i int) error {
	s.alive[i] = false
	if err := s.emit(s.event(EvCrash, i)); err != nil {
		return err
	}
	if s.inCS[i] {
		s.inCS[i] = false
		s.csCount--
		s.csGen[i]++
		s.releaseDone(i)
	}
	s.pendingSince[i] = -1
	s.leaderOf[i] = -1
	for _, slot := range s.nodeTimers[i] {
		s.killTimer(slot)
	}
	clear(s.nodeTimers[i])
	// Messages on their way to a crashed node are lost, oldest first.
	var doomed []int32
	for slot := range s.msgs {
		if ms := &s.msgs[slot]; ms.state == slotLive && ms.msg.To == i {
			doomed = append(doomed, int32(slot))
		}
	}
	slices.SortFunc(doomed, func(a, b int32) int { return int(s.msgs[a].msg.ID - s.msgs[b].msg.ID) })
	for _, slot := range doomed {
		if err := s.removeInFlight(slot, ReasonCrashed); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) recover(i int) error {
	s.alive[i] = true
	s.nodes[i] = s.spec.New(i, &s.setup)
	if err := s.emit(s.event(EvRecover, i)); err != nil {
		return err
	}
	return s.stepNode(i, s.input(Recover))
}

func (s *Sim) partition(groups [][]int) error {
	for i := range s.group {
		s.group[i] = 0
	}
	ev := s.event(EvPartition, -1)
	ev.Groups = make([][]int, len(groups))
	for g, members := range groups {
		ids := make([]int, len(members))
		for k, i := range members {
			s.group[i] = g + 1
			ids[k] = s.cfg.IDs[i]
		}
		ev.Groups[g] = ids
	}
	return s.emit(ev)
}

func (s *Sim) isBackground(name string) bool {
	return slices.Contains(s.spec.BackgroundTimers, name)
}

func (s *Sim) setTimer(i int, name string, after int) {
	if old, ok := s.nodeTimers[i][name]; ok {
		s.killTimer(old)
	}
	var slot int32
	if k := len(s.freeTimers); k > 0 {
		slot = s.freeTimers[k-1]
		s.freeTimers = s.freeTimers[:k-1]
	} else {
		s.timers = append(s.timers, timerSlot{})
		slot = int32(len(s.timers) - 1)
	}
	bg := s.isBackground(name)
	s.timers[slot] = timerSlot{node: i, name: name, state: slotLive, bg: bg}
	if !bg {
		s.activeTimers++
	}
	if s.nodeTimers[i] == nil {
		s.nodeTimers[i] = make(map[string]int32)
	}
	s.nodeTimers[i][name] = slot
	s.schedule(item{t: s.now + max(after, 0), kind: itemTimer, slot: slot})
}

func (s *Sim) cancelTimer(i int, name string) {
	if slot, ok := s.nodeTimers[i][name]; ok {
		s.killTimer(slot)
		delete(s.nodeTimers[i], name)
	}
}

func (s *Sim) killTimer(slot int32) {
	t := &s.timers[slot]
	if t.state == slotLive {
		t.state = slotDead
		if !t.bg {
			s.activeTimers--
		}
	}
}

func (s *Sim) fireTimer(slot int32) error {
	t := s.timers[slot]
	s.timers[slot] = timerSlot{}
	s.freeTimers = append(s.freeTimers, slot)
	delete(s.nodeTimers[t.node], t.name)
	if !t.bg {
		s.activeTimers--
	}
	ev := s.event(EvTimer, t.node)
	ev.Name = t.name
	if err := s.emit(ev); err != nil {
		return err
	}
	in := s.input(Timer)
	in.Timer = t.name
	return s.stepNode(t.node, in)
}
