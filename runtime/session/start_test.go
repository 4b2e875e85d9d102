package session

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// liveWithFuture plays ra4 (ids, not indexes) with interventions at several steps, then seeks back to
// step 4 so that recorded interventions lie both behind and ahead of the step shown.
func liveWithFuture(t *testing.T, m *Manager) (*Session, *sub) {
	t.Helper()
	s, c := start(t, m, ra4)
	do(t, s, c, act(sim.ActRequest, 7))
	c.next(t, "events")
	for k := range 9 {
		do(t, s, c, Command{Kind: Step})
		if f := c.next(t, "events", "state"); f.Type == "state" {
			t.Fatalf("the run went quiet at step %d", f.Step)
		}
		switch k {
		case 2:
			do(t, s, c, act(sim.ActRequest, 9))
			c.next(t, "events")
		case 6:
			do(t, s, c, act(sim.ActCrash, 3))
			c.next(t, "events")
		}
	}
	do(t, s, c, Command{Kind: Seek, Step: 4})
	c.next(t, "snapshot")
	return s, c
}

const ra4 = `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"ids":[7,3,9,1],"seed":9,"network":{"delay":[1,3],"fifo":false}}`

// viewOf attaches a fresh viewer and returns the snapshot it gets: what a new tab shows.
func viewOf(t *testing.T, s *Session) frame {
	t.Helper()
	v := newSub()
	if err := s.Attach(v); err != nil {
		t.Fatal(err)
	}
	defer s.Detach(v)
	return v.next(t, "snapshot")
}

// A session started from another's recipe shows the same run at the same step, byte
// for byte, and goes on the same way, future interventions included.
func TestStartAtRecipeShowsTheSameRun(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := liveWithFuture(t, m)
	want := viewOf(t, s)
	rec, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Step != 4 || len(rec.Interventions) != 3 {
		t.Fatalf("recipe: step %d, %d interventions; want 4, 3", rec.Step, len(rec.Interventions))
	}
	r, err := m.StartAt(rec.Setup, rec.Interventions, rec.Step)
	if err != nil {
		t.Fatal(err)
	}
	// The horizon is not part of a recipe's replay: the restored timeline reaches the
	// last intervention (step 7), the original went on to 9.
	got := viewOf(t, r)
	if got.Horizon != 7 {
		t.Fatalf("restored horizon %d; want 7, the last intervention's step", got.Horizon)
	}
	if !bytes.Equal(stripClock(got.raw), stripClock(want.raw)) {
		t.Fatalf("restored snapshot differs:\n got %s\nwant %s", got.raw, want.raw)
	}
	if got.Playing {
		t.Fatal("a restored run plays; it should wait, paused, at its step")
	}
	// Both go on identically: the recorded crash at step 7 is replayed by both.
	rc := newSub()
	if err := r.Attach(rc); err != nil {
		t.Fatal(err)
	}
	rc.next(t, "snapshot")
	for k := range 6 {
		do(t, s, c, Command{Kind: Step})
		do(t, r, rc, Command{Kind: Step})
		a, b := c.next(t, "events", "state"), rc.next(t, "events", "state")
		if !bytes.Equal(stripClock(a.raw), stripClock(b.raw)) {
			t.Fatalf("step %d after the restore:\n original %s\n restored %s", k, a.raw, b.raw)
		}
	}
}

// The same through a share link: recipe -> link code -> run -> session.
func TestStartAtFromALinkShowsTheSameRun(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, _ := liveWithFuture(t, m)
	want := viewOf(t, s)
	rec, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l, err := scenarios.LinkFromRun(rec.Setup.Scenario, rec.Setup.Config, rec.Interventions, rec.Step)
	if err != nil {
		t.Fatal(err)
	}
	code, err := scenarios.EncodeLink(l)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ivs, err := back.Run()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(back.Scenario)
	r, err := m.StartAt(Setup{Config: cfg, Scenario: doc}, ivs, back.Step)
	if err != nil {
		t.Fatal(err)
	}
	if got := viewOf(t, r); !bytes.Equal(stripClock(got.raw), stripClock(want.raw)) {
		t.Fatalf("snapshot from the link differs:\n got %s\nwant %s", got.raw, want.raw)
	}
}

func TestStartAtRefusesWhatCannotReplay(t *testing.T) {
	m := NewManager(2, Options{MaxEvents: 200})
	defer m.Close()
	setup := setupOf(t, ra3)
	ivs := []sim.Intervention{{Step: 5, Action: sim.Action{Do: sim.ActRequest, Node: 0, From: -1, To: -1}},
		{Step: 2, Action: sim.Action{Do: sim.ActRequest, Node: 1, From: -1, To: -1}}}
	if _, err := m.StartAt(setup, ivs, 3); err == nil || !strings.Contains(err.Error(), "step order") {
		t.Fatalf("unsorted interventions: %v", err)
	}
	if _, err := m.StartAt(setup, nil, -1); err == nil {
		t.Fatal("a negative step was accepted")
	}
	// A run that requests forever reaches the event limit before the step.
	var many []sim.Intervention
	for k := range 100 {
		many = append(many, sim.Intervention{Step: k, Action: sim.Action{Do: sim.ActRequest, Node: k % 3, From: -1, To: -1}})
	}
	_, err := m.StartAt(setup, many, 1000)
	if err == nil || !strings.Contains(err.Error(), "replaying the run") {
		t.Fatalf("a run past its event limit: %v", err)
	}
	if m.Len() != 0 {
		t.Fatalf("%d sessions left after failed starts", m.Len())
	}
}

// Every state-bearing frame carries seq, the seq of the last trace event shown.
func TestFramesCarryTheSeqOfTheLastEvent(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	lastSeq := func(evs []json.RawMessage) int64 {
		var e struct{ Seq int64 }
		if err := json.Unmarshal(evs[len(evs)-1], &e); err != nil {
			t.Fatal(err)
		}
		return e.Seq
	}
	seqOf := func(f frame) int64 {
		var x struct{ Seq *int64 }
		if err := json.Unmarshal(f.raw, &x); err != nil || x.Seq == nil {
			t.Fatalf("%s frame without seq: %s", f.Type, f.raw)
		}
		return *x.Seq
	}
	do(t, s, c, act(sim.ActRequest, 0))
	for range 4 {
		do(t, s, c, Command{Kind: Step})
	}
	var last frame
	for range 5 {
		last = c.next(t, "events")
		b := last.Batches[len(last.Batches)-1]
		if got, want := seqOf(last), lastSeq(b.Events); got != want {
			t.Fatalf("events frame seq %d; its last event has %d", got, want)
		}
	}
	do(t, s, c, Command{Kind: Seek, Step: 2})
	snap := c.next(t, "snapshot")
	if got, want := seqOf(snap), lastSeq(snap.Recent); got != want || want < 0 {
		t.Fatalf("snapshot seq %d; its latest event has %d", got, want)
	}
	do(t, s, c, Command{Kind: Pause})
	if st := c.next(t, "state"); seqOf(st) != seqOf(snap) {
		t.Fatalf("state seq %d after the snapshot's %d", seqOf(st), seqOf(snap))
	}
}
