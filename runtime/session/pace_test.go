package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
)

// Playing shows virtual time t at Rate*speed units per second of the clock: every
// step appears at the first tick at or after its time, never before, and a pause
// stops the stream however long the clock then runs.
func TestPlayShowsEachStepWhenItIsDue(t *testing.T) {
	const tick = 250 * time.Millisecond
	for _, speed := range []float64{MinSpeed, 1, 4} {
		t.Run(fmt.Sprint("speed ", speed), func(t *testing.T) {
			r := newClocked(t, Options{})
			s, c := start(t, r.ms[0], ra3)
			do(t, s, c, Command{Kind: Speed, Speed: speed})
			c.next(t, "state")
			do(t, s, c, act(sim.ActRequest, 0))
			do(t, s, c, act(sim.ActRequest, 1))
			c.next(t, "events")
			c.next(t, "events")
			do(t, s, c, Command{Kind: Play}) // at virtual time 0
			c.next(t, "state")
			shown, quiet := 0, false
			for k := 1; !quiet; k++ {
				if k > 400 {
					t.Fatal("the run never went quiet")
				}
				r.pass(t, tick)
				before := float64(k-1) * tick.Seconds() * Rate * speed
				limit := float64(k) * tick.Seconds() * Rate * speed
				first := true
				for len(c.frames) > 0 {
					f := c.next(t, "events", "state")
					quiet = quiet || f.Quiet
					for _, b := range f.Batches {
						if float64(b.T) > limit || (first && float64(b.T) <= before) {
							t.Fatalf("tick %d (virtual time (%v, %v]) showed step %d at time %d", k, before, limit, b.Step, b.T)
						}
						first = false
						shown = b.Step
					}
				}
			}
			if shown < 6 {
				t.Fatalf("only %d steps were shown before the run went quiet", shown)
			}
			do(t, s, c, act(sim.ActRequest, 2))
			c.next(t, "events")
			do(t, s, c, Command{Kind: Pause})
			c.next(t, "state")
			r.pass(t, time.Hour)
			if n := len(c.frames); n > 0 {
				t.Fatalf("%d frames came after the pause: %s", n, c.next(t, "events", "state").raw)
			}
		})
	}
}
