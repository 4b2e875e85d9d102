package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// atStep holds a run at step at while on is set.
type atStep struct {
	at atomic.Int64
	on atomic.Bool
}

func (b *atStep) Limit() (int, string, bool) {
	return int(b.at.Load()), "held", b.on.Load()
}

// A bound run plays up to its bound and stops there, telling its viewers why; the
// step that waited for its time when the bound fell before it is taken back; a
// seek goes as far as the bound; the recipe is cut at it.
func TestBoundHoldsTheRunAtItsStep(t *testing.T) {
	r := newClocked(t, Options{})
	s, c := start(t, r.ms[0], ra3)
	b := &atStep{}
	s.Bind(b)
	do(t, s, c, act(sim.ActRequest, 1))
	c.next(t, "events")
	requestAndStep(t, s, c, 0, 8) // a timeline to step 8, with interventions at 0 and 8
	do(t, s, c, act(sim.ActRequest, 2))
	if f := c.next(t, "events", "error"); f.Type != "events" {
		t.Fatal(f.raw)
	}
	do(t, s, c, Command{Kind: Seek, Step: 2})
	c.next(t, "snapshot")

	b.at.Store(5)
	b.on.Store(true)
	do(t, s, c, Command{Kind: Play})
	c.next(t, "state")
	r.pass(t, time.Minute)
	last := 2
	for f := c.next(t, "events", "state"); f.Type == "events"; f = c.next(t, "events", "state") {
		last = f.Batches[len(f.Batches)-1].Step
	}
	if e := c.next(t, "error"); last != 5 || e.Code != protocol.CodeQuestionOpen || e.Error != "held" {
		t.Fatalf("play went to step %d, then %s", last, e.raw)
	}

	tests := []struct {
		cmd  Command
		step int // where it stays (-1: no frame but the error)
	}{
		{Command{Kind: Step, Ref: 1}, 5},
		{Command{Kind: Play, Ref: 1}, -1},
		{act(sim.ActRequest, 2), -1},
		{Command{Kind: Seek, Step: 8, Ref: 1}, 5},
	}
	for _, tt := range tests {
		do(t, s, c, tt.cmd)
		if tt.step >= 0 {
			if f := c.next(t, "state", "snapshot", "events"); f.Type == "events" || f.Step != tt.step {
				t.Fatalf("command %d: %s", tt.cmd.Kind, f.raw)
			}
		}
		if e := c.next(t, "error"); e.Code != protocol.CodeQuestionOpen {
			t.Fatalf("command %d: %s", tt.cmd.Kind, e.raw)
		}
	}

	rec, err := s.Recipe(context.Background())
	if err != nil || rec.Step != 5 || rec.Horizon != 5 || len(rec.Interventions) != 2 {
		t.Fatalf("bound recipe: step %d horizon %d, %d interventions (%v)", rec.Step, rec.Horizon, len(rec.Interventions), err)
	}

	// Unbound, it goes on; then a step taken but not yet due when the bound falls
	// before it is never shown.
	b.on.Store(false)
	do(t, s, c, Command{Kind: Speed, Speed: MinSpeed})
	c.next(t, "state")
	do(t, s, c, Command{Kind: Play})
	c.next(t, "state")
	r.pass(t, 0) // what is due now is shown; the next step is taken and waits for its time
	rec, err = s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for f := c.next(t, "events"); f.Step < rec.Step; f = c.next(t, "events") {
	}
	b.at.Store(int64(rec.Step))
	b.on.Store(true)
	do(t, s, c, Command{Kind: Pause})
	if f := c.next(t, "events", "state"); f.Type != "state" || f.Step != rec.Step {
		t.Fatalf("the step that waited was shown past the bound at %d: %s", rec.Step, f.raw)
	}
}
