package session

import (
	"errors"
	"fmt"
	"math"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// Kind is what a command asks for.
type Kind uint8

const (
	Play Kind = iota + 1
	Pause
	Step
	Back
	Seek
	Speed
	Reset
	Act
)

// Command is one request from a subscriber. Node ids are the scenario's ids.
type Command struct {
	Kind  Kind
	Ref   int64   // echoed in an error frame so the client can match it
	Step  int     // Seek
	Speed float64 // Speed
	Setup *Setup  // Reset: a new run; nil restarts the current one without interventions
	// Act: the intervention as a scenario event writes it (node ids); act decodes it
	// for the current run with the kernel's decoder, as a scenario's events are.
	Act sim.ActionJSON
}

type cmdError struct {
	code, msg string
	line      int // of the scenario's source, when the error is in it
}

func (e *cmdError) Error() string { return e.code + ": " + e.msg }

func badField(format string, args ...any) error {
	return &cmdError{code: protocol.CodeBadField, msg: fmt.Sprintf(format, args...)}
}

func (s *Session) command(c Command) error {
	// Anything the user does applies to what the user has seen: publish the step that
	// was waiting for its time first.
	s.flush()
	switch c.Kind {
	case Play:
		if s.failed != nil {
			return &cmdError{code: protocol.CodeStopped, msg: s.failed.Error()}
		}
		if err := s.held(); err != nil {
			return err
		}
		s.playing = true
		s.reanchor(s.clock.Now())
		s.broadcast(s.stateFrame())
	case Pause:
		s.playing = false
		s.broadcast(s.stateFrame())
	case Speed:
		if math.IsNaN(c.Speed) || c.Speed < MinSpeed || c.Speed > MaxSpeed {
			return badField("speed: %v is out of range (%v to %v)", c.Speed, MinSpeed, MaxSpeed)
		}
		s.speed = c.Speed
		s.reanchor(s.clock.Now())
		s.broadcast(s.stateFrame())
	case Step:
		if s.failed != nil {
			return &cmdError{code: protocol.CodeStopped, msg: s.failed.Error()}
		}
		s.playing = false
		if err := s.held(); err != nil {
			s.broadcast(s.stateFrame())
			return err
		}
		batches, ok, err := s.forward()
		if err != nil {
			return s.fail(err)
		}
		if !ok {
			s.quiet = true
			s.broadcast(s.stateFrame())
			return nil
		}
		s.publish(batches)
	case Back:
		s.playing = false
		return s.seek(s.sim.Steps() - 1)
	case Seek:
		s.playing = false
		return s.seek(c.Step)
	case Reset:
		setup := s.setup
		if c.Setup != nil {
			setup = *c.Setup
			if setup.Config.Spec == nil || setup.Config.Spec.Slug != s.algorithm {
				return &cmdError{code: protocol.CodeBadScenario, msg: fmt.Sprintf("algorithm: this session runs %s", s.algorithm)}
			}
		}
		s.playing = false
		if err := s.load(setup); err != nil {
			return &cmdError{code: protocol.CodeBadScenario, msg: err.Error(), line: scenarios.SourceLine(err)}
		}
		s.broadcast(s.helloFrame())
		s.broadcast(s.snapshotFrame())
	case Act:
		return s.act(c)
	default:
		return &cmdError{code: protocol.CodeUnknownType, msg: fmt.Sprintf("command %d is unknown", c.Kind)}
	}
	return nil
}

func (s *Session) seek(step int) error {
	step, held := s.clampSeek(max(0, min(step, s.horizon)))
	if err := s.rebuild(step); err != nil {
		return s.fail(err)
	}
	s.broadcast(s.snapshotFrame())
	return held // the run went as far as its bound lets it (bound.go)
}

// fail stops the run after a kernel error (its event limit): the user can seek back
// or reset.
func (s *Session) fail(err error) error {
	s.failed = err
	s.playing = false
	s.broadcast(s.stateFrame())
	return &cmdError{code: protocol.CodeStopped, msg: err.Error() + "; seek back or reset"}
}

// act applies an intervention now and records it, which rewrites the future: recorded
// interventions after this step are forgotten and the horizon comes back here.
func (s *Session) act(c Command) error {
	if s.failed != nil {
		return &cmdError{code: protocol.CodeStopped, msg: s.failed.Error()}
	}
	if err := s.held(); err != nil {
		return err
	}
	a, err := c.Act.Action(s.cfg.Spec, s.cfg.IDs)
	if err != nil {
		return badField("%v", err)
	}
	step := s.sim.Steps()
	s.saves.forgetFrom(step) // what they hold from step on is no longer this run
	s.begin()
	if err := s.sim.Apply(a); err != nil {
		s.discard()
		var ae *sim.ActionError
		if errors.As(err, &ae) {
			return &cmdError{code: protocol.CodeRefused, msg: ae.Error()}
		}
		return s.fail(err)
	}
	b := s.end()
	// Forget the old future: its interventions were made on a timeline that no longer
	// is. Those not applied yet are that future (a delivery recorded for this very step
	// is one: it was the step after it).
	s.ivs = append(s.ivs[:s.applied], sim.Intervention{Step: step, Action: a})
	s.applied = len(s.ivs)
	s.horizon = s.sim.Steps() // one further when the action took a step
	s.quiet = false
	if s.playing {
		s.reanchor(s.clock.Now())
	}
	s.publish([]batch{b})
	return nil
}
