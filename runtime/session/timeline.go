package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/teach-dist/playground/runtime/sim"
)

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
	s.save()
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

// yieldEvery is how many steps a replay takes before it yields its processor.
const yieldEvery = 32

// rebuild replays the run from the start to step (or as far as it goes), with the
// recorded interventions, and makes it the current run. It reports no batches: the
// caller sends a snapshot.
func (s *Session) rebuild(step int) error {
	s.pending = nil
	s.reset()
	s.capture = false
	defer func() { s.capture = true }()
	s.enc = sim.NewEncoder(s.cfg.Spec, s.cfg.IDs)
	if p := s.saves.before(step); p != nil {
		s.resume(p) // savepoints.go: the run as it was at p.step
	} else if err := s.start(); err != nil {
		return err
	}
	for k := 0; s.sim.Steps() < step; k++ {
		// A link's replay is bounded (StartAtWithin): checked before every step, since
		// one step of a source may be a sandbox call of up to its deadline.
		if s.replay != nil && s.replay.Err() != nil {
			return fmt.Errorf("the replay stopped at step %d of %d: %w", s.sim.Steps(), step, context.Cause(s.replay))
		}
		if k%yieldEvery == yieldEvery-1 {
			// A replay of thousands of steps takes milliseconds of one core: let the
			// other sessions' goroutines on this processor (another user's step)
			// run between, rather than wait out Go's 10 ms time slice.
			runtime.Gosched()
		}
		s.saves.replayed.Add(1)
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

// start builds the run at step 0, with the interventions recorded for it.
func (s *Session) start() error {
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
	return nil
}
