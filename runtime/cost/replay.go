package cost

import "github.com/teach-dist/playground/runtime/sim"

// Replay rebuilds a run up to step, exactly as sim.Replay does, and measures it. It
// tells the collector where every step begins, so a grant can be pointed at by its
// step and a release's messages are told apart from the step before it. On an error
// the result so far comes with it (an *sim.ActionError: an intervention that no longer
// applies; the event limit).
func Replay(cfg sim.Config, ivs []sim.Intervention, step int) (Result, error) {
	return ReplayWhile(cfg, ivs, step, nil)
}

// ReplayWhile is Replay that asks goOn (if not nil) before each step whether to go on;
// when it says no, the result so far comes with sim.ErrStopped (its Step is where it
// stopped). A server bounds a measure's time with it, as sim.ReplayWhile an export's.
func ReplayWhile(cfg sim.Config, ivs []sim.Intervention, step int, goOn func(*sim.Sim) bool) (Result, error) {
	c := New(cfg.Spec, cfg.IDs, Options{MeanDelay: MeanDelay(cfg.Network), Params: cfg.Params})
	return replay(cfg, ivs, step, c, nil, goOn)
}

// replay is sim.Replay's loop with a boundary before each step and intervention;
// TestReplayMatchesTheKernel keeps the two in step. tap, if set, sees every event too.
func replay(cfg sim.Config, ivs []sim.Intervention, step int, c *Collector, tap sim.Sink, goOn func(*sim.Sim) bool) (Result, error) {
	sink := c.Sink()
	if tap != nil {
		collect := sink
		sink = func(ev *sim.Event) {
			tap(ev)
			collect(ev)
		}
	}
	c.Boundary(0)
	s, err := sim.New(cfg, sink)
	if err != nil {
		return c.Result(), err
	}
	result := func() Result {
		r := c.Result()
		r.Step, r.T = s.Steps(), s.Now()
		return r
	}
	apply := func(a sim.Action) error {
		at := s.Steps()
		if a.TakesStep() {
			at++ // a held message the user delivers is a step of its own
		}
		c.Boundary(at)
		return s.Apply(a)
	}
	k := 0
	for {
		for k < len(ivs) && ivs[k].Step <= s.Steps() && !ivs[k].Action.TakesStep() {
			if err := apply(ivs[k].Action); err != nil {
				return result(), err
			}
			k++
		}
		if s.Steps() >= step {
			return result(), nil
		}
		if k < len(ivs) && ivs[k].Step <= s.Steps() {
			if err := apply(ivs[k].Action); err != nil {
				return result(), err
			}
			k++
			continue
		}
		if goOn != nil && !goOn(s) {
			return result(), sim.ErrStopped
		}
		c.Boundary(s.Steps() + 1)
		ok, err := s.Step()
		if err != nil {
			return result(), err
		}
		if !ok && k == len(ivs) {
			return result(), nil
		}
		if !ok {
			if err := apply(ivs[k].Action); err != nil {
				return result(), err
			}
			k++
		}
	}
}
