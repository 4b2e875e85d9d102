// Package sim is the deterministic discrete-event kernel: virtual time, a seeded PRNG,
// the network model, crashes, timers, the workload and the monitors. It imports nothing
// of the project's own, owns no goroutine and reads no clock.
//
// Every step is carried out by one transition function, Take (transition.go), on a
// World: the kernel's own record (kernel.go) or the explorer's (runtime/explore), so
// both step alike by construction. A run (Sim) is composed of one part per concern,
// each in its own file with the invariants it keeps: the event queue (queue.go), the
// network and hold mode (network.go), the timers (timer.go), the critical section
// (cs.go) and the monitors (monitor.go); message and timer slots come from a free-list
// pool (pool.go). Interventions are applied in apply.go and validated in check.go,
// whatever their source: actions as people write them decode in actionjson.go. A
// broken invariant is a bug in the kernel: it panics, naming the invariant
// (invariant.go).
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Limits bound every run.
const (
	MinNodes         = 2
	MaxNodes         = 128
	MaxTime          = 1_000_000_000
	DefaultMaxEvents = 2_000_000
	MaxDelay         = 1_000_000
)

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
	// Owner is who the run is done for (a client key), passed to the nodes' Setup: an
	// algorithm that runs elsewhere (a student's source in a sandbox worker) shares its
	// workers fairly by it. It changes nothing in the run.
	Owner string
}

// Sink receives each trace event. The event is only valid during the call.
type Sink func(ev *Event)

// ErrEventLimit is returned when a run emits more events than its limit.
var ErrEventLimit = errors.New("event limit reached")

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

	now    int
	steps  int
	events int64
	ended  bool
	ctx    Context // scratch, reused by every step
	ev     Event
	in     Input
	// The message or timer the transition in progress is about (Take's Ref stands for
	// them): the kernel keeps one at a time.
	cur      Message
	curTimer string

	q              eventQueue
	nw             network
	tm             timers
	cs             critical
	mon            monitors
	pendingActions int // scheduled workload actions not yet done
}

// New builds a run and initialises every node (the Init rules fire at time 0).
func New(cfg Config, sink Sink) (*Sim, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	n := len(cfg.IDs)
	s := &Sim{
		cfg:   cfg,
		spec:  cfg.Spec,
		n:     n,
		setup: Setup{IDs: cfg.IDs, Params: cfg.Params, MaxDelay: cfg.Network.DelayMax, Owner: cfg.Owner},
		sink:  sink,
		nodes: make([]Node, n),
		alive: make([]bool, n),
		nw:    newNetwork(cfg.Network, n),
		tm:    timers{byNode: make([]map[string]int32, n)},
		cs:    newCritical(n),
	}
	if s.cfg.MaxEvents <= 0 {
		s.cfg.MaxEvents = DefaultMaxEvents
	}
	s.enc = NewEncoder(cfg.Spec, cfg.IDs)
	s.pcg = rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)
	s.rng = rand.New(s.pcg)
	pendingLimit := cfg.Pending
	if pendingLimit <= 0 {
		pendingLimit = defaultPending(&cfg)
	}
	s.mon = newMonitors(n, pendingLimit)
	s.ctx.ids = cfg.IDs
	s.ctx.up = s.alive
	for i := range s.alive {
		s.alive[i] = true
	}
	for i := range cfg.Actions {
		s.q.schedule(item{t: cfg.Actions[i].At, kind: itemAction, slot: int32(i)})
		s.pendingActions++
	}
	for i := range s.nodes {
		s.nodes[i] = s.spec.New(i, &s.setup)
	}
	for i := range s.nodes {
		if err := Take(kernel{s}, &Transition{Kind: TInit, Node: i}); err != nil {
			return nil, err
		}
	}
	return s, s.monitorStep()
}

func defaultPending(cfg *Config) int {
	// Generous: every other node may go first, each needing a few message delays.
	return len(cfg.IDs) * (cfg.CS + 4*cfg.Network.DelayMax + 4)
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
func (s *Sim) Totals() Totals { return s.mon.totals }

// Network returns the network model in force now (Config().Network is the one the run
// started with).
func (s *Sim) Network() Network { return s.nw.model }

// Encoder returns the trace encoder for this run.
func (s *Sim) Encoder() *Encoder { return s.enc }

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
	if s.q.Len() == 0 {
		s.checkDry()
		return false
	}
	return s.q.peek().t <= s.until()
}

// checkDry asserts what an empty queue implies: every message still in flight is held,
// no timer is armed, and no workload action or end of CS is still to come.
func (s *Sim) checkDry() {
	if len(s.nw.held) == 0 && s.nw.inflight != 0 {
		broken("in-flight count is %d with no message queued or held", s.nw.inflight)
	}
	if s.tm.active != 0 || s.pendingActions != 0 || s.cs.pendingRelease != 0 {
		broken("the queue is empty, yet %d timers, %d workload actions and %d ends of CS are counted as to come",
			s.tm.active, s.pendingActions, s.cs.pendingRelease)
	}
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
			if s.nw.msgs.slots[it.slot].state != slotDead {
				return
			}
			s.nw.release(it.slot)
		case itemTimer:
			if s.tm.slots[it.slot].state != slotDead {
				return
			}
			s.tm.release(it.slot)
		case itemRelease:
			node := int(it.slot)
			if s.cs.in[node] && s.cs.gen[node] == it.gen {
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
	if it.before(&s.q.last) {
		s.q.outOfOrder(it)
	}
	s.q.last = it
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
		err = s.apply(&s.cfg.Actions[it.slot], false) // read only: a copy would escape through Take
	case itemRelease:
		s.cs.releaseDone(int(it.slot))
		err = Take(kernel{s}, &Transition{Kind: TEndCS, Node: int(it.slot)})
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
	s.mon.totals.Steps = s.steps
	ev := s.event(EvEnd, -1)
	t := s.mon.totals
	ev.Totals = &t
	return s.emit(ev)
}

func (s *Sim) name(i int) string { return fmt.Sprintf("P%d", s.cfg.IDs[i]) }

// input returns the run's scratch input, reset to kind: reusing it keeps a step free
// of allocation (nodes must not keep the pointer).
func (s *Sim) input(kind InputKind) *Input {
	s.in = Input{Kind: kind}
	return &s.in
}
