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
	"math"
	"runtime/debug"
	"time"

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
	// lag is how far behind schedule pacing may fall before it re-anchors instead of
	// bursting to catch up (after a slow replay or a stalled machine).
	lag = 250 * time.Millisecond
)

// Errors returned by the session's API.
var (
	ErrClosed = errors.New("session: closed")
	ErrFull   = errors.New("session: the server has reached its limit of live sessions")
)

// Subscriber receives a session's frames: a browser tab, later a lecture hall. It is
// defined here, where it is used; the web package implements it over a WebSocket.
type Subscriber interface {
	// Send queues one frame and must not block. It returns false when the subscriber
	// cannot take it (too slow, or gone); the session then drops the subscriber.
	Send(frame []byte) bool
	// Close tells the subscriber that the session dropped it or ended. It must not
	// block and may be called more than once.
	Close()
}

// Setup is what a run is built from: the kernel configuration and the scenario
// document it came from, which the page shows and edits.
type Setup struct {
	Config   sim.Config
	Scenario json.RawMessage // scenario v1
	Name     string          // curated scenario name, if any
}

// Kind is what a command asks for.
type Kind uint8

const (
	Play Kind = iota + 1
	Pause
	Step
	Back
	Seek
	Speed
	Reset
	Act
)

// Command is one request from a subscriber. Node ids are the scenario's ids.
type Command struct {
	Kind  Kind
	Ref   int64   // echoed in an error frame so the client can match it
	Step  int     // Seek
	Speed float64 // Speed
	Setup *Setup  // Reset: a new run; nil restarts the current one without interventions
	// Act: the intervention, with a node id (request, release, crash, recover, elect),
	// a message id (drop, deliver), groups of node ids (partition) or the network
	// change (network).
	Do     sim.ActionKind
	Node   int
	To     int // tell: the id of the process told (Node is the teller)
	Msg    int64
	Groups [][]int
	Net    sim.NetChange
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
}

func (o Options) withDefaults() Options {
	if o.Idle <= 0 {
		o.Idle = 10 * time.Minute
	}
	if o.MaxEvents <= 0 {
		o.MaxEvents = DefaultMaxEvents
	}
	if o.MaxSubscribers <= 0 {
		o.MaxSubscribers = 64
	}
	if o.Clock == nil {
		o.Clock = wallClock{}
	}
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
	snap   func(hello, snapshot []byte) // checkpoint
	alarm  alarmKind                    // fired
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
	quiet   bool  // nothing is left to happen without an intervention
	failed  error // the run hit a limit; it stays stopped until a seek back or a reset
	subs    []Subscriber
	idle    *alarm
	pace    *alarm
	rest    *alarm
	// resting: the run is put away (hibernate.go); sim, enc and track are empty until wake
	// rebuilds them at restStep.
	resting  bool
	restStep int

	anchorWall time.Time
	anchorVirt int
	pending    []batch // taken from the sim but not yet due

	track
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
	// Try it first: a setup that cannot run leaves the current run as it is.
	if _, err := sim.New(cfg, nil); err != nil {
		return err
	}
	s.setup, s.cfg = setup, cfg
	s.ivs, s.horizon = nil, 0
	return s.rebuild(0)
}

// firstVisit is how long a new session waits for its first viewer: a page fetched by
// something that never opens the socket (a crawler, a prefetch) should not hold one
// of the limited places for the whole idle time.
const firstVisit = 2 * time.Minute

// run is the session's goroutine.
func (s *Session) run(ctx context.Context, ended func()) {
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
			if e.what == fired && !s.alarmOf(e.alarm).fired() {
				continue // stale: the alarm was stopped or moved after it went off
			}
			if e.what == fired && e.alarm == idleAlarm && len(s.subs) == 0 {
				return // nobody came, or nobody came back
			}
			if !s.contained(func() { s.handle(e) }) {
				return
			}
			if e.what == recipe {
				// Reading the recipe (an export, a panel) changes nothing, so it
				// neither restarts the countdown to rest nor keeps a run awake.
				continue
			}
		}
		s.arm()
		s.armRest()
	}
}

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
			s.broadcast(errorFrame(0, CodeInternal, fmt.Sprintf("this run stopped on an internal error (%v); reload the page for a fresh run, or use a shared link to rebuild it", v)))
		}
	}()
	f()
	return true
}

// send hands env to the goroutine, or fails if the session has ended.
func (s *Session) send(e *envelope) error {
	select {
	case <-s.done: // checked first: a buffered channel would otherwise accept it
		return ErrClosed
	default:
	}
	select {
	case s.cmds <- e:
		return nil
	case <-s.done:
		return ErrClosed
	}
}

// Do queues a command from sub; errors about it come back to sub as error frames.
func (s *Session) Do(sub Subscriber, c Command) error {
	return s.send(&envelope{what: user, sub: sub, cmd: c})
}

// Attach adds a subscriber, which first receives hello and snapshot frames.
func (s *Session) Attach(sub Subscriber) error {
	errc := make(chan error, 1)
	if err := s.send(&envelope{what: attach, sub: sub, errc: errc}); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-s.done:
		return ErrClosed
	}
}

// Detach removes a subscriber; the last one leaving pauses the run.
func (s *Session) Detach(sub Subscriber) {
	_ = s.send(&envelope{what: detach, sub: sub})
}

// Touch postpones idle eviction: a page was just served for this session.
func (s *Session) Touch() {
	select {
	case s.cmds <- &envelope{what: touch}:
	default: // a busy session is not idle anyway
	}
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
			ce = &cmdError{code: CodeRefused, msg: err.Error()}
		}
		s.sendTo(e.sub, errorFrame(e.cmd.Ref, ce.code, ce.msg))
	}
}

func (s *Session) attach(sub Subscriber) error {
	if len(s.subs) >= s.opts.MaxSubscribers {
		return fmt.Errorf("session: %d viewers already follow this run", len(s.subs))
	}
	// What was due for the others must go out first, so the snapshot and the stream agree.
	s.flush()
	s.subs = append(s.subs, sub)
	s.idle.stop()
	s.sendTo(sub, s.helloFrame())
	s.sendTo(sub, s.snapshotFrame())
	return nil
}

func (s *Session) detach(sub Subscriber) {
	for i, x := range s.subs {
		if x == sub {
			s.subs = append(s.subs[:i], s.subs[i+1:]...)
			break
		}
	}
	if len(s.subs) == 0 {
		// Nobody watches: stop spending time on the run, and keep its step for a reload.
		s.flush()
		s.playing = false
		s.idle.set(s.opts.Idle)
	}
}

// sendTo delivers to one subscriber; one that cannot keep up is dropped.
func (s *Session) sendTo(sub Subscriber, frame []byte) {
	if sub == nil {
		return
	}
	if !sub.Send(frame) {
		s.drop(sub)
	}
}

// broadcast delivers to every subscriber; slow ones are dropped, not waited for.
func (s *Session) broadcast(frame []byte) {
	kept := s.subs[:0]
	var slow []Subscriber
	for _, sub := range s.subs {
		if sub.Send(frame) {
			kept = append(kept, sub)
		} else {
			slow = append(slow, sub)
		}
	}
	clear(s.subs[len(kept):])
	s.subs = kept
	for _, sub := range slow {
		sub.Close()
	}
	if len(s.subs) == 0 && len(slow) > 0 {
		s.playing = false
		s.idle.set(s.opts.Idle)
	}
}

func (s *Session) drop(sub Subscriber) {
	s.detach(sub)
	sub.Close()
}

// Error codes of error frames (docs/protocol.md).
const (
	CodeBadFrame    = "bad-frame"
	CodeUnknownType = "unknown-type"
	CodeBadField    = "bad-field"
	CodeBadScenario = "bad-scenario"
	CodeRefused     = "refused"
	CodeStopped     = "run-stopped"
	CodeGone        = "gone"
	CodeBusy        = "busy"
	CodeInternal    = "internal"
)

type cmdError struct {
	code, msg string
}

func (e *cmdError) Error() string { return e.code + ": " + e.msg }

func badField(format string, args ...any) error {
	return &cmdError{code: CodeBadField, msg: fmt.Sprintf(format, args...)}
}

func (s *Session) command(c Command) error {
	// Anything the user does applies to what the user has seen: publish the step that
	// was waiting for its time first.
	s.flush()
	switch c.Kind {
	case Play:
		if s.failed != nil {
			return &cmdError{code: CodeStopped, msg: s.failed.Error()}
		}
		s.playing = true
		s.reanchor(s.clock.Now())
		s.broadcast(s.stateFrame())
	case Pause:
		s.playing = false
		s.broadcast(s.stateFrame())
	case Speed:
		if math.IsNaN(c.Speed) || c.Speed < MinSpeed || c.Speed > MaxSpeed {
			return badField("speed: %v is out of range (%v to %v)", c.Speed, MinSpeed, MaxSpeed)
		}
		s.speed = c.Speed
		s.reanchor(s.clock.Now())
		s.broadcast(s.stateFrame())
	case Step:
		if s.failed != nil {
			return &cmdError{code: CodeStopped, msg: s.failed.Error()}
		}
		s.playing = false
		batches, ok, err := s.forward()
		if err != nil {
			return s.fail(err)
		}
		if !ok {
			s.quiet = true
			s.broadcast(s.stateFrame())
			return nil
		}
		s.publish(batches)
	case Back:
		s.playing = false
		return s.seek(s.sim.Steps() - 1)
	case Seek:
		s.playing = false
		return s.seek(c.Step)
	case Reset:
		setup := s.setup
		if c.Setup != nil {
			setup = *c.Setup
			if setup.Config.Spec == nil || setup.Config.Spec.Slug != s.algorithm {
				return &cmdError{code: CodeBadScenario, msg: fmt.Sprintf("algorithm: this session runs %s", s.algorithm)}
			}
		}
		s.playing = false
		if err := s.load(setup); err != nil {
			return &cmdError{code: CodeBadScenario, msg: err.Error()}
		}
		s.broadcast(s.helloFrame())
		s.broadcast(s.snapshotFrame())
	case Act:
		return s.act(c)
	default:
		return &cmdError{code: CodeUnknownType, msg: fmt.Sprintf("command %d is unknown", c.Kind)}
	}
	return nil
}

func (s *Session) seek(step int) error {
	step = max(0, min(step, s.horizon))
	if err := s.rebuild(step); err != nil {
		return s.fail(err)
	}
	s.broadcast(s.snapshotFrame())
	return nil
}

// fail stops the run after a kernel error (its event limit): the user can seek back
// or reset.
func (s *Session) fail(err error) error {
	s.failed = err
	s.playing = false
	s.broadcast(s.stateFrame())
	return &cmdError{code: CodeStopped, msg: err.Error() + "; seek back or reset"}
}

// act applies an intervention now and records it, which rewrites the future: recorded
// interventions after this step are forgotten and the horizon comes back here.
func (s *Session) act(c Command) error {
	if s.failed != nil {
		return &cmdError{code: CodeStopped, msg: s.failed.Error()}
	}
	a := sim.Action{Do: c.Do, From: -1, To: -1}
	switch c.Do {
	case sim.ActRequest, sim.ActRelease, sim.ActCrash, sim.ActRecover, sim.ActElect:
		i, ok := s.index(c.Node)
		if !ok {
			return badField("node: %d is not a node id", c.Node)
		}
		a.Node = i
	case sim.ActDrop, sim.ActDeliver:
		if c.Msg <= 0 {
			return badField("msg: %s needs the id of a message in flight", c.Do)
		}
		a.Msg = c.Msg
	case sim.ActPartition:
		groups, err := s.groupIndexes(c.Groups)
		if err != nil {
			return err
		}
		a.Groups = groups
	case sim.ActTell:
		i, ok := s.index(c.Node)
		if !ok {
			return badField("node: %d is not a node id", c.Node)
		}
		j, ok := s.index(c.To)
		if !ok {
			return badField("to: %d is not a node id", c.To)
		}
		if i == j {
			return badField("to: P%d would tell itself: pick another process", c.To)
		}
		a.Node, a.To = i, j
	case sim.ActHeal:
	case sim.ActNetwork:
		if err := c.Net.Check(); err != nil {
			return badField("%v", err)
		}
		a.Net = c.Net
	default:
		return badField("do: %q cannot be done from the playground", c.Do)
	}
	step := s.sim.Steps()
	s.begin()
	if err := s.sim.Apply(a); err != nil {
		s.discard()
		var ae *sim.ActionError
		if errors.As(err, &ae) {
			return &cmdError{code: CodeRefused, msg: ae.Error()}
		}
		return s.fail(err)
	}
	b := s.end()
	// Forget the old future: its interventions were made on a timeline that no longer
	// is. Those not applied yet are that future (a delivery recorded for this very step
	// is one: it was the step after it).
	s.ivs = append(s.ivs[:s.applied], sim.Intervention{Step: step, Action: a})
	s.applied = len(s.ivs)
	s.horizon = s.sim.Steps() // one further when the action took a step
	s.quiet = false
	if s.playing {
		s.reanchor(s.clock.Now())
	}
	s.publish([]batch{b})
	return nil
}

// groupIndexes turns a partition's groups of ids into node indexes.
func (s *Session) groupIndexes(groups [][]int) ([][]int, error) {
	if len(groups) == 0 {
		return nil, badField("groups: a partition needs at least one group of process ids")
	}
	seen := make(map[int]bool)
	out := make([][]int, len(groups))
	for g, ids := range groups {
		out[g] = make([]int, len(ids))
		for k, id := range ids {
			i, ok := s.index(id)
			if !ok {
				return nil, badField("groups[%d][%d]: %d is not a process id", g, k, id)
			}
			if seen[id] {
				return nil, badField("groups[%d][%d]: %d is in two groups", g, k, id)
			}
			seen[id] = true
			out[g][k] = i
		}
	}
	return out, nil
}

func (s *Session) index(id int) (int, bool) {
	for i, x := range s.cfg.IDs {
		if x == id {
			return i, true
		}
	}
	return 0, false
}

// forward takes the run one step further, then applies the interventions recorded for
// the step it reaches, each as a batch of its own. It mirrors sim.Replay exactly, so a
// rebuilt run and a live one agree step for step: a recorded intervention that takes a
// step (a held message the user delivered) is the step, and it is never applied with
// the interventions of the step before it.
func (s *Session) forward() ([]batch, bool, error) {
	var out []batch
	if s.stepDue() {
		b, err := s.applyRecorded()
		if err != nil {
			return nil, false, err
		}
		out = append(out, b)
	} else {
		s.begin()
		ok, err := s.sim.Step()
		if err != nil {
			s.discard()
			return nil, false, err
		}
		if ok {
			out = append(out, s.end())
		} else {
			s.discard()
			if s.applied == len(s.ivs) {
				return nil, false, nil
			}
			// Replay applies an intervention the run was stuck at; so do we.
			b, err := s.applyRecorded()
			if err != nil {
				return nil, false, err
			}
			out = append(out, b)
		}
	}
	for s.applied < len(s.ivs) && s.ivs[s.applied].Step <= s.sim.Steps() && !s.stepDue() {
		b, err := s.applyRecorded()
		if err != nil {
			return nil, false, err
		}
		out = append(out, b)
	}
	s.quiet = !s.sim.HasNext() && s.applied == len(s.ivs)
	return out, true, nil
}

// stepDue reports whether the next recorded intervention is due now and takes a step.
func (s *Session) stepDue() bool {
	return s.applied < len(s.ivs) && s.ivs[s.applied].Step <= s.sim.Steps() && s.ivs[s.applied].Action.TakesStep()
}

func (s *Session) applyRecorded() (batch, error) {
	s.begin()
	err := s.sim.Apply(s.ivs[s.applied].Action)
	s.applied++
	var ae *sim.ActionError
	if err != nil && !errors.As(err, &ae) {
		s.discard()
		return batch{}, err
	}
	// A refusal cannot happen on a faithful replay; if it does, the run goes on
	// without that intervention, as sim.Replay's scheduled actions do.
	return s.end(), nil
}

// rebuild replays the run from the start to step (or as far as it goes), with the
// recorded interventions, and makes it the current run. It reports no batches: the
// caller sends a snapshot.
func (s *Session) rebuild(step int) error {
	s.pending = nil
	s.reset()
	s.capture = false
	defer func() { s.capture = true }()
	s.enc = sim.NewEncoder(s.cfg.Spec, s.cfg.IDs)
	s.begin()
	sm, err := sim.New(s.cfg, s.onEvent)
	if err != nil {
		return err
	}
	s.sim = sm
	s.applied = 0
	s.end()
	for s.applied < len(s.ivs) && s.ivs[s.applied].Step <= 0 && !s.stepDue() {
		if _, err := s.applyRecorded(); err != nil {
			return err
		}
	}
	for s.sim.Steps() < step {
		_, ok, err := s.forward()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	s.failed = nil
	s.quiet = !s.sim.HasNext() && s.applied == len(s.ivs)
	s.horizon = max(s.horizon, s.sim.Steps())
	s.syncNodes()
	return nil
}

// advance publishes every step that is due by now, stepping the run as needed; the
// first step not yet due waits in pending.
func (s *Session) advance(now time.Time) {
	if !s.playing || s.failed != nil {
		return
	}
	var out []batch
	for range maxBatchesPerWake {
		if s.pending == nil {
			bs, ok, err := s.forward()
			if err != nil {
				s.publish(out)
				_ = s.fail(err)
				s.broadcast(errorFrame(0, CodeStopped, err.Error()+"; seek back or reset"))
				return
			}
			if !ok {
				s.quiet = true
				break
			}
			s.pending = bs
		}
		due := s.due(s.pending[0].t)
		if due.After(now) {
			break
		}
		if now.Sub(due) > lag {
			s.anchorWall, s.anchorVirt = now, s.pending[0].t
		}
		out = append(out, s.pending...)
		s.pending = nil
	}
	s.publish(out)
}

// flush publishes the pending step at once.
func (s *Session) flush() {
	if s.pending != nil {
		bs := s.pending
		s.pending = nil
		s.publish(bs)
	}
}

func (s *Session) reanchor(now time.Time) {
	s.anchorWall, s.anchorVirt = now, s.sim.Now()
}

// due is when virtual time t should be shown.
func (s *Session) due(t int) time.Time {
	secs := float64(t-s.anchorVirt) / (Rate * s.speed)
	return s.anchorWall.Add(time.Duration(secs * float64(time.Second)))
}

// arm sets the pacing timer for the next thing to publish while playing.
func (s *Session) arm() {
	s.pace.stop()
	if s.resting || !s.playing || s.failed != nil || len(s.subs) == 0 {
		return
	}
	switch {
	case s.pending != nil:
		s.pace.set(s.due(s.pending[0].t).Sub(s.clock.Now()))
	case s.sim.HasNext() || s.applied < len(s.ivs):
		s.pace.set(0)
	}
	// Otherwise quiet: an intervention will wake the run.
}

func (s *Session) publish(bs []batch) {
	if len(bs) == 0 {
		return
	}
	s.horizon = max(s.horizon, bs[len(bs)-1].step)
	if s.opts.OnEvents != nil {
		n := 0
		for i := range bs {
			n += bs[i].events
		}
		s.opts.OnEvents(n)
	}
	s.broadcast(s.eventsFrame(bs))
}
