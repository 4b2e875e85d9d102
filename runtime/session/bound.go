package session

import (
	"errors"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
	"slices"
)

// Bound holds a run back for a while: a lecture's fork may not go past the
// presenter's step while a question is open, or a student could step their copy of
// the run to the answer before it is revealed. The session asks it before every step
// it would take or show, on its own goroutine, so Limit must be quick and must not
// call back into this session.
type Bound interface {
	// Limit is the furthest step the run may reach now and why; ok is false when
	// nothing holds it back.
	Limit() (step int, why string, ok bool)
}

// boundRef holds a Bound in an atomic pointer (an interface cannot be one).
type boundRef struct{ Bound }

// Bind ties the run to b from now on (nil unties it). A fork is bound by the handler
// that starts it, before its page connects.
func (s *Session) Bind(b Bound) {
	if b == nil {
		s.bound.Store(nil)
		return
	}
	s.bound.Store(&boundRef{b})
}

// limit is the bound's Limit, if the run has one.
func (s *Session) limit() (step int, why string, ok bool) {
	ref := s.bound.Load()
	if ref == nil {
		return 0, "", false
	}
	return ref.Limit()
}

// held refuses to go on from the step shown when the bound holds the run there.
func (s *Session) held() error {
	at, why, ok := s.limit()
	if !ok || s.sim.Steps() < at {
		return nil
	}
	return &cmdError{code: protocol.CodeQuestionOpen, msg: why}
}

// stopHeld stops playing at the bound and tells every viewer why (advance).
func (s *Session) stopHeld(err error) {
	s.playing = false
	s.broadcast(s.stateFrame())
	var ce *cmdError
	if errors.As(err, &ce) {
		s.broadcast(errorFrame(0, ce.code, ce.msg, ce.line))
	}
}

// unpend takes back the step waiting for its time when the bound now holds the run
// before it (a question opened meanwhile): it reports whether it did, and the run is
// back at the step shown.
func (s *Session) unpend() (bool, error) {
	at, _, ok := s.limit()
	if !ok || s.pending == nil || s.pending[len(s.pending)-1].step <= at {
		return false, nil
	}
	return true, s.rebuild(s.pending[0].step - 1)
}

// clampSeek is the step a seek to step may reach, and the refusal to tell the viewer
// when the bound cut it short.
func (s *Session) clampSeek(step int) (int, error) {
	at, why, ok := s.limit()
	if !ok || step <= at {
		return step, nil
	}
	return at, &cmdError{code: protocol.CodeQuestionOpen, msg: why}
}

// boundRecipe cuts a recipe at the bound: exports and links replay no further than
// the run may go, and carry none of the interventions recorded beyond it.
func boundRecipe(r Recipe, at int) Recipe {
	r.Step, r.Horizon = min(r.Step, at), min(r.Horizon, at)
	r.Interventions = slices.DeleteFunc(r.Interventions, func(iv sim.Intervention) bool { return iv.Step > at })
	return r
}
