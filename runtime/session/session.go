// Package session runs live simulations for the web playground. One goroutine owns one
// run: it paces virtual time to the chosen speed, steps on command, records every
// intervention so that any step can be rebuilt by replay, and fans frames (docs/protocol.md)
// out to its subscribers. Nothing outside that goroutine touches the simulation, so
// there is no lock around it.
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// Rate is how many virtual time units pass per wall-clock second at speed 1. With the
// default delays (1 to 3 units) a message takes half a second to a second and a half:
// slow enough to follow on a projector, fast enough not to bore.
const Rate = 2.0

// Speeds bound the speed multiplier.
const (
	MinSpeed = 0.25
	MaxSpeed = 16.0
)

// Limits of a live run.
const (
	// Recent is how many of the latest trace events a snapshot carries, for the
	// narration log; clients keep the same number so a rebuilt view equals a live one.
	Recent = 100
	// DefaultMaxEvents bounds a live run: replaying it (every seek does) stays quick.
	DefaultMaxEvents = 250_000
	// DefaultHibernateAfter is how long a run stays still before it is put to rest (hibernate.go).
	// Waking costs one replay (about 5 ms for 10 000 steps, docs/benchmarks.md), so
	// the wait can be short: a student reading the pseudocode for a while pays it once.
	DefaultHibernateAfter = 10 * time.Second
	// maxBatchesPerWake keeps a fast run from starving the command channel.
	maxBatchesPerWake = 256
	// slowQuantum is the most a slowed run works in one wake (cpu.go, pace.go).
	slowQuantum = 5 * time.Millisecond
	// lag is how far behind schedule pacing may fall before it re-anchors instead of
	// bursting to catch up (after a slow replay or a stalled machine).
	lag = 250 * time.Millisecond
)

// Errors returned by the session's API.
var (
	ErrClosed = errors.New("session: closed")
	ErrFull   = errors.New("session: the server has reached its limit of live sessions")
)

// Setup is what a run is built from: the kernel configuration and the scenario
// document it came from, which the page shows and edits.
type Setup struct {
	Config   sim.Config
	Scenario json.RawMessage // scenario v1
	Name     string          // curated scenario name, if any
	// Source: the run's algorithm is the scenario's Starlark source, so hello carries
	// its rules (the page shows the Go algorithm's otherwise).
	Source bool
}

// Options tune a session. Zero values take the defaults.
type Options struct {
	Idle           time.Duration // end the session after this long without subscribers (default 10 min)
	MaxEvents      int           // trace events a live run may produce (default DefaultMaxEvents)
	MaxSubscribers int           // subscribers at once (default 64)
	// HibernateAfter puts a run that has been still this long (paused, unwatched, or
	// quiet) to rest: it keeps only its recipe and is rebuilt by replay when next
	// needed, so a tab left open costs little (hibernate.go). Zero (or negative):
	// never, as for the serve flag; servers pass DefaultHibernateAfter.
	HibernateAfter time.Duration
	// OnPanic hears of a panic that ended a session (for the server's log and metrics).
	OnPanic func(algorithm string, value any, stack []byte)
	// OnStart and OnEnd hear of each session's start (Manager) and end, OnEvents of
	// the trace events each publish carries: the server's logs and metrics. They run
	// on the session's goroutine (OnStart on the starter's) and must not block.
	OnStart  func(s *Session)
	OnEnd    func(s *Session, lived time.Duration)
	OnEvents func(n int)
	// OnHibernate hears a run going to rest (true) and waking or ending at rest (false).
	OnHibernate func(s *Session, resting bool)
	// Clock is the session's time source (clock.go); nil is the wall clock.
	Clock Clock
	// SavepointEvery, MaxSavepoints and SavepointBytes bound a seek's replay and the
	// memory that buys it (savepoints.go); defaults DefaultSavepointEvery,
	// DefaultMaxSavepoints and DefaultSavepointBytes.
	SavepointEvery int
	MaxSavepoints  int
	SavepointBytes int
	// Share (Manager only) is how many sessions one client keeps when the manager is
	// full and another client wants a place (share.go); zero: half the cap.
	Share int
	// OnEvict (Manager only) hears of a session ended to make room for another;
	// watched tells whether it still had a subscriber.
	OnEvict func(s *Session, watched bool)
	// CPU accounts the work of each session to its client and slows the runs of a
	// client over its share of the processors (cpu.go); nil: none.
	CPU *CPU
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.Idle, 10*time.Minute)
	defaults.Positive(&o.MaxEvents, DefaultMaxEvents)
	defaults.Positive(&o.MaxSubscribers, 64)
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
	defaults.Positive(&o.SavepointEvery, DefaultSavepointEvery)
	defaults.Positive(&o.MaxSavepoints, DefaultMaxSavepoints)
	defaults.Positive(&o.SavepointBytes, DefaultSavepointBytes)
	return o
}

type internal uint8

const (
	user internal = iota
	attach
	detach
	touch
	recipe
	checkpoint // lecture mode: checkpoint.go
	fired      // an alarm went off: clock.go
)

type envelope struct {
	what internal
	sub  Subscriber
	cmd  Command
	errc chan error // attach: the answer

	recipe chan<- Recipe
	snap   func(hello, snapshot protocol.Encoded) // checkpoint
	alarm  alarmKind                              // fired
}

// Session is one live run. Its exported methods are safe for concurrent use; all
// state below the channels belongs to the run goroutine.
type Session struct {
	id        string
	algorithm string
	opts      Options
	clock     Clock
	started   time.Time
	cmds      chan *envelope // pointers: a small channel, and a small frame for run's select
	done      chan struct{}

	setup   Setup
	cfg     sim.Config
	sim     *sim.Sim
	enc     *sim.Encoder
	ivs     []sim.Intervention
	applied int // ivs[:applied] are applied to the current sim
	horizon int // the furthest step this timeline has reached
	playing bool
	speed   float64
	factor  float64 // of speed, while the client is over its share of the CPU (cpu.go)
	// notBefore: a slowed run's next pacing wake comes no sooner (pace.go).
	notBefore time.Time
	quiet     bool  // nothing is left to happen without an intervention
	failed    error // the run hit a limit; it stays stopped until a seek back or a reset
	subs      []Subscriber
	idle      *alarm
	pace      *alarm
	rest      *alarm
	// resting: the run is put away (hibernate.go); sim, enc and track are empty until wake
	// rebuilds them at restStep.
	resting  bool
	restStep int

	anchorWall time.Time
	anchorVirt int
	pending    []batch // taken from the sim but not yet due
	saves      savepoints
	bound      atomic.Pointer[boundRef] // a lecture's fork: how far it may go now (bound.go)

	track
	shares shareOf // the manager's view of it: owner, viewers, last use (share.go)
	// replay, while a link's run is rebuilt before the session starts, bounds the
	// rebuild (StartAtWithin); nil otherwise.
	replay context.Context
	// ctx is the run goroutine's context: waiting for the client's turn ends with it.
	ctx context.Context
}

// ID is the session's id, an unguessable capability.
func (s *Session) ID() string { return s.id }

// Algorithm is the slug of the session's algorithm; it never changes.
func (s *Session) Algorithm() string { return s.algorithm }

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

func newSession(id string, setup Setup, opts Options) (*Session, error) {
	if setup.Config.Spec == nil {
		return nil, errors.New("session: no algorithm")
	}
	opts = opts.withDefaults()
	s := &Session{
		id:        id,
		algorithm: setup.Config.Spec.Slug,
		opts:      opts,
		clock:     opts.Clock,
		cmds:      make(chan *envelope, 4), // senders wait their turn
		done:      make(chan struct{}),
		speed:     1,
		factor:    1,
		started:   opts.Clock.Now(),
	}
	s.idle, s.pace, s.rest = s.newAlarm(idleAlarm), s.newAlarm(paceAlarm), s.newAlarm(restAlarm)
	if err := s.load(setup); err != nil {
		return nil, err
	}
	return s, nil
}

// load starts a fresh run of setup, without interventions, at step 0.
func (s *Session) load(setup Setup) error {
	cfg := setup.Config
	// A live run has no end time: it goes quiet when nothing is left to happen and
	// wakes up again when the user intervenes.
	cfg.Until = 0
	cfg.MaxEvents = s.opts.MaxEvents
	if cfg.Owner == "" {
		cfg.Owner = s.shares.owner // a reset keeps the run's client
	}
	// Try it first: a setup that cannot run leaves the current run as it is.
	if _, err := sim.New(cfg, nil); err != nil {
		return err
	}
	s.setup, s.cfg = setup, cfg
	s.ivs, s.horizon = nil, 0
	s.saves.init(s.opts.SavepointEvery, s.opts.MaxSavepoints, s.opts.SavepointBytes)
	return s.rebuild(0)
}

// firstVisit is how long a new session waits for its first viewer: a page fetched by
// something that never opens the socket (a crawler, a prefetch) should not hold one
// of the limited places for the whole idle time.
const firstVisit = 2 * time.Minute

// run is the session's goroutine.
func (s *Session) run(ctx context.Context, ended func()) {
	s.ctx = ctx
	s.idle.set(min(s.opts.Idle, firstVisit))
	s.armRest() // a page loaded and never connected rests too
	defer func() {
		s.idle.stop()
		s.pace.stop()
		s.rest.stop()
		s.setResting(false) // an ended session is not counted as resting
		for _, sub := range s.subs {
			sub.Close()
		}
		s.subs = nil
		ended()
		if s.opts.OnEnd != nil {
			s.opts.OnEnd(s, s.clock.Now().Sub(s.started))
		}
		close(s.done)
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-s.cmds:
			e, next := s.coalesce(e)
			if !s.serve(e) || (next != nil && !s.serve(next)) {
				return
			}
		}
	}
}

// serve handles one envelope; false ends the session.
func (s *Session) serve(e *envelope) bool {
	if e.what == fired && !s.alarmOf(e.alarm).fired() {
		return true // stale: the alarm was stopped or moved after it went off
	}
	if e.what == fired && e.alarm == idleAlarm && len(s.subs) == 0 {
		return false // nobody came, or nobody came back
	}
	factor := s.opts.CPU.Factor(s.shares.owner)
	var release func(time.Duration)
	if factor < 1 {
		// A client over its share works one session at a time, and rests (cpu.go).
		// The wait is charged too: it is work the client asks for and does not get,
		// so that it stays slowed while it asks for more than its share.
		wait := time.Now()
		var ok bool
		release, ok = s.opts.CPU.Turn(s.ctx, s.shares.owner)
		s.opts.CPU.Charge(s.shares.owner, time.Since(wait))
		if !ok {
			return false
		}
	}
	if s.opts.CPU != nil {
		// The work is measured on its thread's CPU clock (cpu.go).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	work, began := s.opts.CPU.Start(), time.Now()
	ok := s.contained(func() { s.handle(e) })
	if release != nil {
		// The rest follows the time the work held the turn, waits for a processor
		// included: on a machine shared with other jobs that is what others waited.
		release(s.opts.CPU.Rest(time.Since(began)))
	}
	// Steps, replays, seeks, wakes: the client's CPU, counted as its demand (cpu.go).
	s.opts.CPU.DoneSlowed(s.shares.owner, work, factor)
	if !ok {
		return false
	}
	if e.what != fired && e.what != recipe {
		s.shares.used.Store(s.clock.Now().UnixNano()) // least recently used, for eviction (share.go)
	}
	if e.what == recipe {
		// Reading the recipe (an export, a panel) changes nothing, so it neither
		// restarts the countdown to rest nor keeps a run awake.
		return true
	}
	s.arm()
	s.armRest()
	return true
}

// coalesce skips a seek that the same viewer has already replaced by another one
// waiting behind it: dragging the slider sends seeks faster than a long run can
// replay them, and only where it stops matters. It returns the envelope to serve and
// the one it took from the queue that ended the run of seeks (nil if none).
func (s *Session) coalesce(e *envelope) (*envelope, *envelope) {
	for isSeek(e) {
		select {
		case next := <-s.cmds:
			if !isSeek(next) || next.sub != e.sub {
				return e, next
			}
			s.saves.coalesced.Add(1)
			e = next
		default:
			return e, nil
		}
	}
	return e, nil
}

func isSeek(e *envelope) bool { return e.what == user && e.cmd.Kind == Seek }

// contained runs f and reports whether it returned normally. A panic inside one run (a
// bug in an algorithm, say) ends that session only: its viewers are told why and the
// server and every other session carry on. The run's state may be half-updated, so it
// is not resumed; a reload starts a fresh one.
func (s *Session) contained(f func()) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			if s.opts.OnPanic != nil {
				s.opts.OnPanic(s.algorithm, v, debug.Stack())
			}
			s.broadcast(errorFrame(0, protocol.CodeInternal, fmt.Sprintf("this run stopped on an internal error (%v); reload the page for a fresh run, or use a shared link to rebuild it", v), 0))
		}
	}()
	f()
	return true
}

func (s *Session) handle(e *envelope) {
	if e.what == fired {
		s.alarmed(e.alarm)
		return
	}
	if s.resting && e.what != touch && e.what != detach && e.what != recipe {
		s.wake()
	}
	switch e.what {
	case attach:
		e.errc <- s.attach(e.sub)
		return
	case detach:
		s.detach(e.sub)
		return
	case touch:
		if len(s.subs) == 0 {
			s.idle.set(min(s.opts.Idle, firstVisit))
		}
		return
	case recipe:
		e.recipe <- s.recipe()
		return
	case checkpoint:
		s.checkpoint(e.snap)
		return
	}
	if err := s.command(e.cmd); err != nil {
		var ce *cmdError
		if !errors.As(err, &ce) {
			ce = &cmdError{code: protocol.CodeRefused, msg: err.Error()}
		}
		s.sendTo(e.sub, errorFrame(e.cmd.Ref, ce.code, ce.msg, ce.line))
	}
}
