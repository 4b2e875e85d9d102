package sim_test

import (
	"errors"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// ReplayWhile asks before each step and stops where it is told, with ErrStopped; told
// to go on, it is Replay.
func TestReplayWhileStopsBetweenSteps(t *testing.T) {
	cfg := crashCfg()
	for _, tc := range []struct {
		stopAt, step, want int
		err                error
	}{
		{stopAt: 2, step: 100, want: 2, err: sim.ErrStopped},
		{stopAt: 0, step: 100, want: 0, err: sim.ErrStopped},
		{stopAt: 5, step: 3, want: 3},      // reached before it was told to stop
		{stopAt: 1000, step: 100, want: 9}, // the run's end (nine steps)
	} {
		asked := 0
		s, err := sim.ReplayWhile(cfg, nil, tc.step, nil, func(s *sim.Sim) bool { asked++; return s.Steps() < tc.stopAt })
		if !errors.Is(err, tc.err) || s.Steps() != tc.want || asked == 0 && tc.want > 0 {
			t.Errorf("stop at %d, replay to %d: step %d, %v (asked %d times), want step %d, %v",
				tc.stopAt, tc.step, s.Steps(), err, asked, tc.want, tc.err)
		}
	}
}
