package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sub is a subscriber that keeps every frame; it can be told to stop keeping up.
type sub struct {
	frames chan []byte
	slow   atomic.Bool
	once   sync.Once
	closed chan struct{}
}

func newSub() *sub { return &sub{frames: make(chan []byte, 100_000), closed: make(chan struct{})} }

func (s *sub) Deliver(f protocol.Encoded) bool {
	if s.slow.Load() {
		return false
	}
	select {
	case s.frames <- f.JSON:
		return true
	default:
		return false
	}
}

func (s *sub) Close() { s.once.Do(func() { close(s.closed) }) }

type frame struct {
	Type          string
	Step, T       int
	Horizon       int
	Playing       bool
	Quiet         bool
	Speed         float64
	Slowed        float64
	Interventions int
	Code, Error   string
	Ref           int64
	IDs           []int
	Batches       []struct {
		Step, T int
		Events  []json.RawMessage
		Nodes   []json.RawMessage
		Arrive  map[string]int
	}
	Nodes []struct {
		ID    int
		Alive bool
		CS    bool
		State json.RawMessage
		Rules []string
	}
	Inflight []struct {
		Msg      json.RawMessage
		Sent, At int
	}
	Lit []struct {
		Node int
		Rule string
	}
	Recent []json.RawMessage
	raw    []byte
}

// next returns the next frame of one of the given types, skipping others. The time
// limit only turns a hang into a failure; nothing here depends on timing.
func (s *sub) next(t *testing.T, types ...string) frame {
	t.Helper()
	for {
		b := testwait.Recv(t, fmt.Sprintf("a %v frame", types), s.frames)
		var f frame
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("frame is not JSON: %v\n%s", err, b)
		}
		f.raw = b
		for _, ty := range types {
			if f.Type == ty {
				return f
			}
		}
	}
}

func setupOf(t testing.TB, doc string) Setup {
	t.Helper()
	sc, err := scenarios.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	return Setup{Config: cfg, Scenario: json.RawMessage(doc)}
}

const ra3 = `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":5}`

func start(t *testing.T, m *Manager, doc string) (*Session, *sub) {
	t.Helper()
	s, err := m.Start(setupOf(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	if f := c.next(t, "hello"); f.Type != "hello" {
		t.Fatal(f.Type)
	}
	c.next(t, "snapshot")
	return s, c
}

func do(t *testing.T, s *Session, c *sub, cmd Command) {
	t.Helper()
	if err := s.Do(c, cmd); err != nil {
		t.Fatal(err)
	}
}

// stepAll steps until the run is quiet and returns every event streamed.
func stepAll(t *testing.T, s *Session, c *sub) []json.RawMessage {
	t.Helper()
	var evs []json.RawMessage
	for range 10_000 {
		do(t, s, c, Command{Kind: Step})
		f := c.next(t, "events", "state")
		for _, b := range f.Batches {
			evs = append(evs, b.Events...)
		}
		if f.Type == "state" && f.Quiet {
			return evs
		}
	}
	t.Fatal("the run never went quiet")
	return nil
}

// requestAndStep asks node into the CS, then takes steps steps.
func requestAndStep(t *testing.T, s *Session, c *sub, node, steps int) {
	t.Helper()
	do(t, s, c, act(sim.ActRequest, node))
	c.next(t, "events")
	for range steps {
		do(t, s, c, Command{Kind: Step})
		c.next(t, "events")
	}
}

func act(do sim.ActionKind, node int) Command {
	return Command{Kind: Act, Act: sim.ActionJSON{Do: do.String(), Node: &node}}
}

// The stream a client receives is the trace v1 of the run with its interventions,
// byte for byte: the same thing `playground run` prints.
func TestStreamIsTraceV1OfTheReplay(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, act(sim.ActRequest, 0))
	do(t, s, c, act(sim.ActRequest, 2))
	var got []json.RawMessage
	for range 2 {
		f := c.next(t, "events")
		got = append(got, f.Batches[0].Events...)
	}
	got = append(got, stepAll(t, s, c)...)

	cfg := setupOf(t, ra3).Config
	cfg.Until = 0
	ivs := []sim.Intervention{{Step: 0, Action: sim.Action{Do: sim.ActRequest, Node: 0, From: -1, To: -1}},
		{Step: 0, Action: sim.Action{Do: sim.ActRequest, Node: 2, From: -1, To: -1}}}
	var want []byte
	if _, err := sim.Replay(cfg, ivs, 1<<30, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&want)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(want)), "\n")
	lines = lines[len(cfg.IDs):] // the Init rules came with the snapshot
	if len(got) != len(lines) {
		t.Fatalf("streamed %d events, the replay has %d", len(got), len(lines))
	}
	for i := range got {
		if string(got[i]) != lines[i] {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got[i], lines[i])
		}
	}
}

// Seek rebuilds by replay: the snapshot at a step is the same whether the run got
// there live or by seeking, and its node states are sim.Replay's.
func TestSeekGivesTheSameSnapshotAsLive(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":9}`)
	do(t, s, c, act(sim.ActRequest, 1))
	c.next(t, "events")
	for range 5 {
		do(t, s, c, Command{Kind: Step})
		c.next(t, "events")
	}
	do(t, s, c, act(sim.ActRequest, 3))
	c.next(t, "events")
	do(t, s, c, act(sim.ActCrash, 2))
	c.next(t, "events")
	var live []frame
	for range 12 {
		do(t, s, c, Command{Kind: Step})
		f := c.next(t, "events", "state")
		if f.Type == "state" {
			break
		}
		// Attach a second viewer: its snapshot is the live view at this step.
		v := newSub()
		if err := s.Attach(v); err != nil {
			t.Fatal(err)
		}
		live = append(live, v.next(t, "snapshot"))
		s.Detach(v)
	}
	if len(live) < 5 {
		t.Fatalf("only %d steps", len(live))
	}
	cfg := setupOf(t, `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"seed":9}`).Config
	cfg.Until = 0
	ivs := []sim.Intervention{
		{Step: 0, Action: sim.Action{Do: sim.ActRequest, Node: 1, From: -1, To: -1}},
		{Step: 5, Action: sim.Action{Do: sim.ActRequest, Node: 3, From: -1, To: -1}},
		{Step: 5, Action: sim.Action{Do: sim.ActCrash, Node: 2, From: -1, To: -1}},
	}
	for k := len(live) - 1; k >= 0; k -= 2 {
		want := live[k]
		do(t, s, c, Command{Kind: Seek, Step: want.Step})
		got := c.next(t, "snapshot")
		if !bytes.Equal(stripClock(got.raw), stripClock(want.raw)) {
			t.Fatalf("step %d:\n seek %s\n live %s", want.Step, got.raw, want.raw)
		}
		r, err := sim.Replay(cfg, ivs, want.Step, nil)
		if err != nil {
			t.Fatal(err)
		}
		snap := r.Snapshot()
		for i, n := range got.Nodes {
			if string(n.State) != string(snap.Nodes[i].State) {
				t.Fatalf("step %d node %d: %s, sim.Replay has %s", want.Step, n.ID, n.State, snap.Nodes[i].State)
			}
		}
	}
}

// stripClock drops what legitimately differs between a live and a sought snapshot.
func stripClock(b []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	delete(m, "playing")
	delete(m, "horizon")
	out, _ := json.Marshal(m)
	return out
}

func TestInterventionAfterSeekRewritesTheFuture(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, act(sim.ActRequest, 0))
	c.next(t, "events")
	stepAll(t, s, c)
	do(t, s, c, Command{Kind: Seek, Step: 2})
	f := c.next(t, "snapshot")
	if f.Step != 2 || f.Horizon <= 2 {
		t.Fatalf("seek: step %d horizon %d", f.Step, f.Horizon)
	}
	do(t, s, c, act(sim.ActCrash, 1))
	f = c.next(t, "events")
	if f.Horizon != 2 || f.Interventions != 2 {
		t.Fatalf("after the intervention: horizon %d, %d interventions; want 2 and 2", f.Horizon, f.Interventions)
	}
	do(t, s, c, Command{Kind: Seek, Step: 100})
	if f = c.next(t, "snapshot"); f.Step != 2 {
		t.Fatalf("seek past the horizon went to step %d", f.Step)
	}
	if f.Nodes[1].Alive {
		t.Fatal("the crash was not replayed")
	}
	do(t, s, c, Command{Kind: Back})
	if f = c.next(t, "snapshot"); f.Step != 1 || !f.Nodes[1].Alive {
		t.Fatalf("back: step %d, P1 alive %v", f.Step, f.Nodes[1].Alive)
	}
	// Stepping forward replays the recorded crash at its step.
	do(t, s, c, Command{Kind: Step})
	f = c.next(t, "events")
	if len(f.Batches) != 2 || !strings.Contains(string(f.Batches[1].Events[0]), `"type":"crash"`) {
		t.Fatalf("the step did not bring the recorded crash: %s", f.raw)
	}
}

func TestErrorsGoToTheSenderAndTheSessionCarriesOn(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, a := start(t, m, ra3)
	b := newSub()
	if err := s.Attach(b); err != nil {
		t.Fatal(err)
	}
	b.next(t, "snapshot")
	tests := []struct {
		cmd  Command
		code string
	}{
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "request", Node: new(99)}, Ref: 1}, protocol.CodeBadField},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "release", Node: new(0)}, Ref: 2}, protocol.CodeRefused},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "elect", Node: new(0)}, Ref: 3}, protocol.CodeBadField},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "partition"}, Ref: 4}, protocol.CodeBadField},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "drop"}, Ref: 5}, protocol.CodeBadField},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "drop", Msg: 7}, Ref: 6}, protocol.CodeRefused},
		{Command{Kind: Speed, Speed: 100, Ref: 7}, protocol.CodeBadField},
		{Command{Kind: Kind(99), Ref: 8}, protocol.CodeUnknownType},
		{Command{Kind: Reset, Setup: &Setup{Config: setupOf(t, `{"version":1,"algorithm":"central"}`).Config}, Ref: 9}, protocol.CodeBadScenario},
	}
	for _, tc := range tests {
		do(t, s, a, tc.cmd)
		f := a.next(t, "error")
		if f.Code != tc.code || f.Ref != tc.cmd.Ref || f.Error == "" {
			t.Fatalf("command %+v: got %s, want code %s", tc.cmd, f.raw, tc.code)
		}
	}
	do(t, s, a, act(sim.ActRequest, 1))
	if f := a.next(t, "events", "error"); f.Type != "events" {
		t.Fatalf("the session did not carry on: %s", f.raw)
	}
	// b saw the request but none of a's errors.
	if f := b.next(t, "events", "error"); f.Type == "error" {
		t.Fatalf("an error went to another viewer: %s", f.raw)
	}
}

func TestSlowSubscriberIsDroppedOthersCarryOn(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, fast := start(t, m, ra3)
	slow := newSub()
	if err := s.Attach(slow); err != nil {
		t.Fatal(err)
	}
	slow.next(t, "snapshot")
	slow.slow.Store(true)
	do(t, s, fast, act(sim.ActRequest, 0))
	<-slow.closed
	for range 5 {
		do(t, s, fast, Command{Kind: Step})
	}
	for range 6 {
		fast.next(t, "events")
	}
}

func TestPlayPacesPauseStops(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, Command{Kind: Speed, Speed: MaxSpeed})
	c.next(t, "state")
	do(t, s, c, act(sim.ActRequest, 0))
	do(t, s, c, act(sim.ActRequest, 1))
	do(t, s, c, Command{Kind: Play})
	last := 0
	for {
		f := c.next(t, "events", "state")
		if f.Type == "events" && f.Step > last {
			last = f.Step
		}
		if f.Playing && last >= 6 {
			break
		}
	}
	do(t, s, c, Command{Kind: Pause})
	var paused frame
	for {
		paused = c.next(t, "events", "state")
		if paused.Type == "state" {
			break
		}
	}
	if paused.Playing {
		t.Fatal("pause did not stop play")
	}
	// Nothing was published after the pause: the next step is the very next one.
	do(t, s, c, Command{Kind: Step})
	f := c.next(t, "events", "state")
	if f.Type != "events" || f.Batches[0].Step != paused.Step+1 {
		t.Fatalf("after pausing at step %d the next frame is %s", paused.Step, f.raw)
	}
}

func TestLastViewerLeavingPausesAndReattachResumesAtItsStep(t *testing.T) {
	r := newClocked(t, Options{})
	s, c := start(t, r.ms[0], ra3)
	requestAndStep(t, s, c, 2, 3)
	do(t, s, c, Command{Kind: Play})
	c.next(t, "state")
	r.pass(t, 2*time.Second)
	shown := 3
	for len(c.frames) > 0 {
		if f := c.next(t, "events", "state"); f.Type == "events" {
			shown = f.Step
		}
	}
	if shown == 3 {
		t.Fatal("the run did not play")
	}
	s.Detach(c)
	r.pass(t, time.Minute) // less than the idle time
	v := newSub()
	if err := s.Attach(v); err != nil {
		t.Fatal(err)
	}
	v.next(t, "hello")
	f := v.next(t, "snapshot")
	if f.Playing {
		t.Fatal("a session nobody watched kept playing")
	}
	// The step taken and waiting for its time when the viewer left was shown then.
	if f.Step != shown && f.Step != shown+1 || f.Interventions != 1 {
		t.Fatalf("resumed at step %d with %d interventions; step %d was shown when the viewer left", f.Step, f.Interventions, shown)
	}
}

func TestResetStartsANewRun(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, act(sim.ActRequest, 0))
	c.next(t, "events")
	doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":5,"seed":2}`
	setup := setupOf(t, doc)
	do(t, s, c, Command{Kind: Reset, Setup: &setup})
	h := c.next(t, "hello")
	if len(h.IDs) != 5 {
		t.Fatalf("hello after reset has ids %v", h.IDs)
	}
	f := c.next(t, "snapshot")
	if f.Step != 0 || f.Interventions != 0 || len(f.Nodes) != 5 {
		t.Fatalf("reset snapshot: step %d, %d interventions, %d nodes", f.Step, f.Interventions, len(f.Nodes))
	}
	do(t, s, c, Command{Kind: Reset})
	c.next(t, "hello")
	if f = c.next(t, "snapshot"); len(f.Nodes) != 5 || f.Step != 0 {
		t.Fatal("restart lost the new setup")
	}
}

// Every registered algorithm runs in a session, and seeking reproduces sim.Replay.
func TestEveryAlgorithmRunsAndSeeks(t *testing.T) {
	m := NewManager(len(algorithms.All()), Options{})
	defer m.Close()
	for _, spec := range algorithms.All() {
		t.Run(spec.Slug, func(t *testing.T) {
			doc := fmt.Sprintf(`{"version":1,"algorithm":%q,"seed":3}`, spec.Slug)
			s, c := start(t, m, doc)
			first := sim.ActRequest
			if spec.Family == sim.Election {
				first = sim.ActElect
			}
			ids := setupOf(t, doc).Config.IDs
			do(t, s, c, act(sim.ActCrash, ids[len(ids)-1]))
			c.next(t, "events")
			do(t, s, c, act(first, ids[0]))
			if f := c.next(t, "events", "error"); f.Type == "error" {
				t.Fatalf("%s refused: %s", first, f.Error)
			}
			stepAll(t, s, c)
			do(t, s, c, Command{Kind: Seek, Step: 3})
			f := c.next(t, "snapshot")
			cfg := setupOf(t, doc).Config
			cfg.Until = 0
			crash := sim.Action{Do: sim.ActCrash, Node: len(ids) - 1, From: -1, To: -1}
			req := sim.Action{Do: first, Node: 0, From: -1, To: -1}
			r, err := sim.Replay(cfg, []sim.Intervention{{Action: crash}, {Action: req}}, 3, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, n := range r.Snapshot().Nodes {
				if string(f.Nodes[i].State) != string(n.State) {
					t.Fatalf("node %d: %s, sim.Replay has %s", n.ID, f.Nodes[i].State, n.State)
				}
			}
		})
	}
}

// A session nobody opened ends after its first-visit wait, one whose viewers left
// after its idle time; either frees its place. The clock is fake: the test checks the
// instant before each end as well as the end.
func TestManagerCapAndIdleEviction(t *testing.T) {
	const idle = 5 * time.Minute
	r := newClocked(t, Options{Idle: idle})
	m := r.ms[0]
	m.max = 2
	a, err := m.Start(setupOf(t, ra3))
	if err != nil {
		t.Fatal(err)
	}
	b, c := start(t, m, ra3)
	// (A third start would evict a, never opened: share_test.go covers the cap.)
	if got, ok := m.Get(a.ID()); !ok || got != a {
		t.Fatal("Get does not find the session")
	}
	b.Detach(c)
	steps := []struct {
		pass time.Duration
		live int // sessions left after it
	}{
		{firstVisit - time.Millisecond, 2},
		{time.Millisecond, 1},                     // a was never opened
		{idle - firstVisit - time.Millisecond, 1}, // b's viewer left at the start
		{time.Millisecond, 0},
	}
	for i, st := range steps {
		r.pass(t, st.pass)
		if m.Len() != st.live {
			t.Fatalf("after step %d: %d sessions live, want %d", i, m.Len(), st.live)
		}
	}
	testwait.Recv(t, "the end of the unopened session", a.Done())
	testwait.Recv(t, "the end of the left session", b.Done())
	if err := a.Do(nil, Command{Kind: Step}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do on an ended session: %v", err)
	}
	if err := a.Attach(newSub()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Attach on an ended session: %v", err)
	}
	if _, err := m.Start(setupOf(t, ra3)); err != nil {
		t.Fatalf("a place did not free up: %v", err)
	}
}

func TestCloseEndsSessionsAndTellsSubscribers(t *testing.T) {
	m := NewManager(2, Options{})
	_, c := start(t, m, ra3)
	m.Close()
	<-c.closed
	if _, err := m.Start(setupOf(t, ra3)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
}

func TestEventLimitStopsTheRunNotTheSession(t *testing.T) {
	m := NewManager(2, Options{MaxEvents: 40})
	defer m.Close()
	s, c := start(t, m, ra3)
	for _, i := range []int{0, 1, 2} {
		do(t, s, c, act(sim.ActRequest, i))
		c.next(t, "events")
	}
	var stopped frame
	for range 100 {
		do(t, s, c, Command{Kind: Step})
		if f := c.next(t, "events", "error"); f.Type == "error" {
			stopped = f
			break
		}
	}
	if stopped.Code != protocol.CodeStopped {
		t.Fatalf("no run-stopped error: %+v", stopped)
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "error"); f.Code != protocol.CodeStopped {
		t.Fatal(f.Code)
	}
	do(t, s, c, Command{Kind: Seek, Step: 1})
	if f := c.next(t, "snapshot"); f.Step != 1 {
		t.Fatalf("seek back: step %d", f.Step)
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "events", "error"); f.Type != "events" {
		t.Fatalf("the run did not resume after seeking back: %s", f.raw)
	}
}

// In hold mode messages wait in the network until the user delivers one.
func TestHoldModeDeliversOnlyWhatTheUserPicks(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":1,"network":{"hold":true}}`
	s, c := start(t, m, doc)
	do(t, s, c, act(sim.ActRequest, 0))
	f := c.next(t, "events")
	if len(f.Batches[0].Arrive) != 2 {
		t.Fatalf("arrivals %v", f.Batches[0].Arrive)
	}
	for id, at := range f.Batches[0].Arrive {
		if at != -1 {
			t.Fatalf("message %s arrives at %d, want -1 (held)", id, at)
		}
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "state", "events"); f.Type != "state" || !f.Quiet {
		t.Fatalf("a step delivered a held message: %s", f.raw)
	}
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "deliver", Msg: 2}})
	f = c.next(t, "events", "error")
	if f.Type != "events" || !strings.Contains(string(f.Batches[0].Events[0]), `"type":"deliver","node":2,"msg":{"id":2`) {
		t.Fatalf("deliver: %s", f.raw)
	}
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "deliver", Msg: 2}})
	if f := c.next(t, "error"); f.Code != protocol.CodeRefused {
		t.Fatalf("delivering twice: %s", f.raw)
	}
	// The choice is an intervention: a seek replays it. The delivery was a step of its
	// own (step 1): message 1 still held, and P2's REPLY.
	do(t, s, c, Command{Kind: Seek, Step: 1})
	f = c.next(t, "snapshot")
	if len(f.Inflight) != 2 || f.Interventions != 2 {
		t.Fatalf("replayed %d interventions, %d in flight", f.Interventions, len(f.Inflight))
	}
}

func TestViewerCap(t *testing.T) {
	m := NewManager(1, Options{MaxSubscribers: 1})
	defer m.Close()
	s, _ := start(t, m, ra3)
	if err := s.Attach(newSub()); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("a second viewer past the cap: %v", err)
	}
}
