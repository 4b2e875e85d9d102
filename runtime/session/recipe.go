package session

import (
	"context"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// Recipe is everything that rebuilds a session's run somewhere else: the setup, the
// recorded interventions, the step shown and the furthest step of the timeline. Share
// links, exports and metrics are computed from it off the session's goroutine, by
// replay, so a long export never stalls the live run.
type Recipe struct {
	Setup         Setup
	Config        sim.Config // what the live run uses: no end time, the live event limit
	Interventions []sim.Intervention
	Step          int
	Horizon       int
}

// Recipe asks the session's goroutine for its recipe. Nothing in it aliases the run.
func (s *Session) Recipe(ctx context.Context) (Recipe, error) {
	reply := make(chan Recipe, 1)
	if err := s.send(&envelope{what: recipe, recipe: reply}); err != nil {
		return Recipe{}, err
	}
	select {
	case r := <-reply:
		return r, nil
	case <-s.done:
		return Recipe{}, ErrClosed
	case <-ctx.Done():
		return Recipe{}, ctx.Err()
	}
}

func (s *Session) recipe() Recipe {
	// The pending step is already taken from the kernel but not yet shown: the step
	// shown is the one before it.
	var step int
	switch {
	case s.resting: // the exports and panels read recipes: they need not wake the run
		step = s.restStep
	case s.pending == nil:
		step = s.sim.Steps()
	default:
		step = s.pending[0].step - 1
	}
	r := Recipe{
		Setup:         s.setup,
		Config:        s.cfg,
		Interventions: cloneInterventions(s.ivs),
		Step:          max(step, 0),
		Horizon:       s.horizon,
	}
	if at, _, ok := s.limit(); ok {
		r = boundRecipe(r, at) // a lecture's fork: no export runs past its bound
	}
	return r
}

func cloneInterventions(ivs []sim.Intervention) []sim.Intervention {
	out := slices.Clone(ivs)
	for i := range out {
		out[i].Action.Groups = slices.Clone(out[i].Action.Groups)
		for g := range out[i].Action.Groups {
			out[i].Action.Groups[g] = slices.Clone(out[i].Action.Groups[g])
		}
	}
	return out
}
