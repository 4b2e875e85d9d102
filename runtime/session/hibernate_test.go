package session

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// restAfter is the hibernation delay of the tests' resting managers: on the fake
// clock its length is only a number.
const restAfter = 10 * time.Second

// restRig is a manager whose runs rest after restAfter and one whose runs never rest
// (HibernateAfter zero, as --hibernate-after 0), to compare with, on one fake clock; it
// keeps each session's reports of rest, from both.
type restRig struct {
	*clocked
	rested, awake *Manager

	mu      sync.Mutex
	resting map[*Session]bool // the latest report
	reports int
}

func newRestRig(t *testing.T, opts Options) *restRig {
	r := &restRig{resting: make(map[*Session]bool)}
	opts.HibernateAfter = restAfter
	opts.OnHibernate = func(s *Session, resting bool) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.resting[s] = resting
		r.reports++
	}
	r.clocked = newClocked(t, opts, Options{OnHibernate: opts.OnHibernate})
	r.rested, r.awake = r.ms[0], r.ms[1]
	return r
}

// want checks s's rest state once everything sent to it so far is handled, and
// returns how many reports of rest the rig has heard in all.
func (r *restRig) want(t *testing.T, s *Session, resting bool) int {
	t.Helper()
	r.settle(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.resting[s] != resting {
		t.Fatalf("resting is %v, want %v", r.resting[s], resting)
	}
	return r.reports
}

// A run at rest keeps only its recipe; the viewer who comes back gets the same hello
// and snapshot, byte for byte, and the run goes on exactly as one that never rested.
func TestRestingRunWakesToTheSameRun(t *testing.T) {
	r := newRestRig(t, Options{})
	s, c := liveWithFuture(t, r.rested) // at step 4 with interventions recorded after it
	ctl, cc := liveWithFuture(t, r.awake)
	r.pass(t, restAfter-time.Millisecond)
	r.want(t, s, false)
	r.pass(t, time.Millisecond)
	r.want(t, s, true)
	if got, want := viewOf(t, s), viewOf(t, ctl); !bytes.Equal(got.raw, want.raw) {
		t.Fatalf("after rest the snapshot differs:\n rested %s\n  awake %s", got.raw, want.raw)
	}
	r.want(t, s, false)

	// Step both the same way, resting before every fifth command, and compare every frame.
	for k := range 20 {
		if k%5 == 0 {
			r.pass(t, restAfter)
			r.want(t, s, true)
		}
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
		r.want(t, s, false)
	}
}

// Exports and panels read recipes; a resting run answers them without waking.
func TestRestingRunGivesItsRecipeWithoutWaking(t *testing.T) {
	r := newRestRig(t, Options{})
	s, c := start(t, r.rested, ra3)
	requestAndStep(t, s, c, 2, 3)
	r.pass(t, restAfter)
	reports := r.want(t, s, true)
	rec, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Step != 3 || len(rec.Interventions) != 1 || rec.Interventions[0].Action.Do != sim.ActRequest {
		t.Fatalf("recipe at rest: step %d, interventions %+v", rec.Step, rec.Interventions)
	}
	if now := r.want(t, s, true); now != reports {
		t.Fatalf("the recipe changed the rest state: %d reports, then %d", reports, now)
	}
}

// A run playing with nothing left to happen rests too; an intervention wakes it and
// play carries on from there, paced by the clock.
func TestQuietPlayingRunRestsAndAnInterventionWakesIt(t *testing.T) {
	r := newRestRig(t, Options{})
	s, c := start(t, r.rested, ra3)
	do(t, s, c, Command{Kind: Play})
	r.pass(t, restAfter)
	r.want(t, s, true)
	do(t, s, c, act(sim.ActRequest, 0))
	r.want(t, s, false)
	f := c.next(t, "events")
	if !bytes.Contains(f.raw, []byte(`"rule":"RA1"`)) {
		t.Fatalf("the request did not fire RA1: %s", f.raw)
	}
	// Still playing: the replies come as time passes, without another command, up to
	// P1's entry (delays are at most 3 units, 1.5 s at speed 1).
	for range 20 {
		r.pass(t, time.Second)
		for len(c.frames) > 0 {
			if f := c.next(t, "events", "state"); bytes.Contains(f.raw, []byte(`"type":"enter"`)) {
				return
			}
		}
	}
	t.Fatal("P1 never entered while the run played")
}

// A failed run stays awake: its replay would not fail, and the user must see it stopped.
func TestFailedRunDoesNotRest(t *testing.T) {
	r := newRestRig(t, Options{MaxEvents: 40})
	s, c := start(t, r.rested, ra3)
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
	reports := r.want(t, s, false)
	r.pass(t, 10*restAfter)
	if now := r.want(t, s, false); now != reports {
		t.Fatalf("a failed run reported a rest: %d reports, then %d", reports, now)
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "error"); f.Code != protocol.CodeStopped {
		t.Fatalf("after the wait the run answers %s", f.raw)
	}
}

// A page loaded and never connected: the run rests without ever having had a viewer,
// and the first viewer sees what it would have seen at once.
func TestUnwatchedRunRests(t *testing.T) {
	r := newRestRig(t, Options{})
	s, err := r.rested.Start(setupOf(t, ra4))
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := r.awake.Start(setupOf(t, ra4))
	if err != nil {
		t.Fatal(err)
	}
	r.pass(t, restAfter)
	if reports := r.want(t, s, true); reports != 1 {
		t.Fatalf("%d reports of rest, want the rested run's alone: zero must mean never", reports)
	}
	r.pass(t, 5*restAfter) // well past any delay, short of the idle end (10 min)
	r.want(t, ctl, false)
	got, want := viewOf(t, s), viewOf(t, ctl)
	if !bytes.Equal(got.raw, want.raw) {
		t.Fatalf("first viewer after rest:\n rested %s\n  awake %s", got.raw, want.raw)
	}
}
