package session

import "fmt"

// A run left still (a tab open on a paused run, for hours) would otherwise hold its
// kernel, its messages in flight, the narration ring and the encoder's buffers. At
// rest it keeps only its recipe (setup, interventions, step); the next thing that
// needs the run rebuilds it by replay, which yields the same state and the same trace
// (the kernel is deterministic, and a seek already relies on it). A replay of a long
// run takes milliseconds (docs/benchmarks.md), once, when the user comes back.

// still reports whether nothing will happen without someone acting.
func (s *Session) still() bool {
	if !s.playing || len(s.subs) == 0 {
		return true
	}
	return s.pending == nil && !s.sim.HasNext() && s.applied == len(s.ivs)
}

// armRest (re)starts the countdown to rest after anything happened, or stops it while
// the run plays.
func (s *Session) armRest() {
	if s.opts.HibernateAfter <= 0 || s.resting {
		return
	}
	if s.failed == nil && s.still() {
		s.rest.set(s.opts.HibernateAfter)
	} else {
		s.rest.stop()
	}
}

// putToRest drops everything the recipe can rebuild. A failed run is not put to rest:
// its replay would not fail again, and the user must still see it stopped.
func (s *Session) putToRest() {
	if s.resting || s.failed != nil || !s.still() {
		return
	}
	s.flush()
	s.restStep = s.sim.Steps()
	s.sim, s.enc = nil, nil
	s.track = track{}
	s.saves.init(s.saves.every, s.saves.max, s.saves.maxBytes) // a run at rest keeps only its recipe
	s.setResting(true)
}

// setResting records the rest state and tells OnHibernate when it changes.
func (s *Session) setResting(resting bool) {
	if s.resting == resting {
		return
	}
	s.resting = resting
	if s.opts.OnHibernate != nil {
		s.opts.OnHibernate(s, resting)
	}
}

// wake rebuilds the run where it was put to rest.
func (s *Session) wake() {
	s.setResting(false)
	if err := s.rebuild(s.restStep); err != nil {
		// The same recipe ran before; failing now is a bug, contained like a panic.
		panic(fmt.Sprintf("session: a run at rest could not be rebuilt at step %d: %v", s.restStep, err))
	}
}
