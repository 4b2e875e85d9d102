package session

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// restWatch hears a manager's sessions going to rest and waking.
type restWatch chan bool

func (w restWatch) options(rest time.Duration) Options {
	return Options{HibernateAfter: rest, OnHibernate: func(_ *Session, resting bool) {
		select {
		case w <- resting:
		default:
		}
	}}
}

// restPair is a manager whose runs rest after 10 ms, heard by w, and one whose runs
// never rest, to compare with.
func restPair(t *testing.T, w restWatch) (rested, awake *Manager) {
	rested = NewManager(4, w.options(10*time.Millisecond))
	awake = NewManager(4, Options{HibernateAfter: -1})
	t.Cleanup(func() {
		rested.Close()
		awake.Close()
	})
	return rested, awake
}

// wait returns once the latest report is that the session went to rest (true) or
// woke (false): reports of rests and wakes between the test's commands (when the
// test was slower than the rest period) are passed over.
func (w restWatch) wait(t *testing.T, resting bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case r := <-w:
			if r == resting && len(w) == 0 {
				return
			}
		case <-deadline:
			t.Fatalf("the session never reported resting=%v", resting)
		}
	}
}

// A run at rest keeps only its recipe; the viewer who comes back gets the same hello
// and snapshot, byte for byte, and the run goes on exactly as one that never rested.
func TestRestingRunWakesToTheSameRun(t *testing.T) {
	w := make(restWatch, 1024)
	rested, awake := restPair(t, w)
	s, c := liveWithFuture(t, rested) // at step 4 with interventions recorded after it
	ctl, cc := liveWithFuture(t, awake)
	w.wait(t, true)
	if got, want := viewOf(t, s), viewOf(t, ctl); !bytes.Equal(got.raw, want.raw) {
		t.Fatalf("after rest the snapshot differs:\n rested %s\n  awake %s", got.raw, want.raw)
	}
	w.wait(t, false)

	// Step both the same way, resting between commands whenever the timer allows, and
	// compare every frame.
	for k := range 20 {
		cmd := Command{Kind: Step}
		if k == 7 {
			cmd = act(sim.ActRequest, 1)
		}
		do(t, s, c, cmd)
		do(t, ctl, cc, cmd)
		got, want := c.next(t, "events", "state", "error"), cc.next(t, "events", "state", "error")
		if !bytes.Equal(got.raw, want.raw) {
			t.Fatalf("command %d:\n rested %s\n  awake %s", k, got.raw, want.raw)
		}
		if k%5 == 0 {
			w.wait(t, true)
		}
	}
}

// Exports and panels read recipes; a resting run answers them without waking.
func TestRestingRunGivesItsRecipeWithoutWaking(t *testing.T) {
	w := make(restWatch, 16)
	m := NewManager(4, w.options(10*time.Millisecond))
	defer m.Close()
	s, c := start(t, m, ra3)
	requestAndStep(t, s, c, 2, 3)
	w.wait(t, true)
	r, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 3 || len(r.Interventions) != 1 || r.Interventions[0].Action.Do != sim.ActRequest {
		t.Fatalf("recipe at rest: step %d, interventions %+v", r.Step, r.Interventions)
	}
	select {
	case resting := <-w:
		t.Fatalf("the recipe changed the rest state to %v", resting)
	default:
	}
}

// A run playing with nothing left to happen rests too; an intervention wakes it and
// play carries on from there.
func TestQuietPlayingRunRestsAndAnInterventionWakesIt(t *testing.T) {
	w := make(restWatch, 16)
	m := NewManager(4, w.options(10*time.Millisecond))
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, Command{Kind: Speed, Speed: MaxSpeed})
	do(t, s, c, Command{Kind: Play})
	w.wait(t, true)
	do(t, s, c, act(sim.ActRequest, 0))
	w.wait(t, false)
	f := c.next(t, "events")
	if !bytes.Contains(f.raw, []byte(`"rule":"RA1"`)) {
		t.Fatalf("the request did not fire RA1: %s", f.raw)
	}
	// Still playing: the replies come without another command, up to P1's entry.
	for {
		f = c.next(t, "events")
		if bytes.Contains(f.raw, []byte(`"type":"enter"`)) {
			return
		}
	}
}

// A failed run stays awake: its replay would not fail, and the user must see it stopped.
func TestFailedRunDoesNotRest(t *testing.T) {
	w := make(restWatch, 16)
	m := NewManager(4, Options{HibernateAfter: 5 * time.Millisecond, MaxEvents: 40, OnHibernate: w.options(0).OnHibernate})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, act(sim.ActRequest, 0))
	do(t, s, c, act(sim.ActRequest, 1))
	do(t, s, c, act(sim.ActRequest, 2))
	for {
		do(t, s, c, Command{Kind: Step})
		if f := c.next(t, "events", "error"); f.Type == "error" {
			if f.Code != protocol.CodeStopped {
				t.Fatalf("error %s", f.raw)
			}
			break
		}
	}
	// Before it failed, the run may have rested and woken between the test's
	// commands: those reports came before the error frame. None may come after it.
	for len(w) > 0 {
		<-w
	}
	time.Sleep(50 * time.Millisecond) // ten rest periods
	select {
	case resting := <-w:
		t.Fatalf("a failed run reported resting=%v", resting)
	default:
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "error"); f.Code != protocol.CodeStopped {
		t.Fatalf("after the wait the run answers %s", f.raw)
	}
}

// A page loaded and never connected: the run rests without ever having had a viewer,
// and the first viewer sees what it would have seen at once.
func TestUnwatchedRunRests(t *testing.T) {
	w := make(restWatch, 16)
	m, awake := restPair(t, w)
	s, err := m.Start(setupOf(t, ra4))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := awake.Start(setupOf(t, ra4))
	if err != nil {
		t.Fatal(err)
	}
	w.wait(t, true)
	got, want := viewOf(t, s), viewOf(t, ctl)
	if !bytes.Equal(got.raw, want.raw) {
		t.Fatalf("first viewer after rest:\n rested %s\n  awake %s", got.raw, want.raw)
	}
}
