package session

import (
	"context"
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// StartAt creates a session that continues a recorded run: setup with its
// interventions, paused at step. This is how a share link opens: the run is rebuilt
// by replay, so it is the same run, and the timeline reaches at least the last
// intervention, so every recorded choice stays on the slider.
//
// Errors are those of Start, or the replay's (an event limit reached on the way: a
// link's run is bounded by Options.MaxEvents like any other).
func (m *Manager) StartAt(setup Setup, ivs []sim.Intervention, step int) (*Session, error) {
	return m.StartAtFor("", setup, ivs, step)
}

// StartAtFor is StartAt on behalf of owner, a client key (share.go).
func (m *Manager) StartAtFor(owner string, setup Setup, ivs []sim.Intervention, step int) (*Session, error) {
	return m.StartAtWithin(context.Background(), owner, setup, ivs, step)
}

// StartAtWithin is StartAtFor with the replay bounded by ctx: when ctx ends (its
// deadline, or the client that asked went away) the replay stops between two steps
// and the session is not started. A source's steps run in sandbox workers, one call
// each: a long link costs real time, which the caller bounds so.
func (m *Manager) StartAtWithin(ctx context.Context, owner string, setup Setup, ivs []sim.Intervention, step int) (*Session, error) {
	if step < 0 {
		return nil, fmt.Errorf("session: step %d is negative", step)
	}
	if !slices.IsSortedFunc(ivs, func(a, b sim.Intervention) int { return a.Step - b.Step }) {
		return nil, fmt.Errorf("session: interventions are not in step order")
	}
	return m.start(owner, newID(), setup, func(s *Session) error {
		s.replay = ctx
		defer func() { s.replay = nil }()
		return s.restore(ivs, step)
	})
}

// restore replays the recorded interventions up to step. Called before the session's
// goroutine starts, so it may touch the run directly.
func (s *Session) restore(ivs []sim.Intervention, step int) error {
	s.ivs = cloneInterventions(ivs)
	if n := len(ivs); n > 0 && ivs[n-1].Step > step {
		// Reach the last intervention once, for the horizon, then come back.
		if err := s.rebuild(ivs[n-1].Step); err != nil {
			return fmt.Errorf("session: replaying the run: %w", err)
		}
	}
	if err := s.rebuild(step); err != nil {
		return fmt.Errorf("session: replaying the run: %w", err)
	}
	return nil
}
