package session

import (
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/scenarios"
)

// advance publishes every step that is due by now, stepping the run as needed; the
// first step not yet due waits in pending.
func (s *Session) advance(now time.Time) {
	if !s.playing || s.failed != nil {
		return
	}
	s.refactor(now)
	slowed := s.factor < 1
	began := time.Now() // the wall clock: what others wait for, not the run's clock
	var out []batch
	defer func() {
		if slowed {
			// A slowed run works at most its factor of the time: after w of work it
			// rests w*(1/factor - 1) before its next wake, however far behind it is.
			w := time.Since(began)
			s.notBefore = s.clock.Now().Add(time.Duration(float64(w) * (1/s.factor - 1)))
		}
	}()
	for range maxBatchesPerWake {
		if slowed && time.Since(began) >= slowQuantum {
			break // the rest waits for the next wake
		}
		if s.pending == nil {
			if err := s.held(); err != nil { // a lecture's fork waits for the answer (bound.go)
				s.publish(out)
				s.stopHeld(err)
				return
			}
			bs, ok, err := s.forward()
			if err != nil {
				s.publish(out)
				_ = s.fail(err)
				s.broadcast(errorFrame(0, protocol.CodeStopped, err.Error()+"; seek back or reset", scenarios.SourceLine(err)))
				return
			}
			if !ok {
				s.quiet = true
				break
			}
			s.pending = bs
		}
		due := s.due(s.pending[0].t)
		if due.After(now) {
			break
		}
		if now.Sub(due) > lag {
			s.anchorWall, s.anchorVirt = now, s.pending[0].t
		}
		out = append(out, s.pending...)
		s.pending = nil
	}
	s.publish(out)
}

// flush publishes the pending step at once.
func (s *Session) flush() {
	if took, err := s.unpend(); took {
		if err != nil {
			_ = s.fail(err)
		}
		return
	}
	if s.pending != nil {
		bs := s.pending
		s.pending = nil
		s.publish(bs)
	}
}

func (s *Session) reanchor(now time.Time) {
	s.anchorWall, s.anchorVirt = now, s.sim.Now()
}

// due is when virtual time t should be shown.
func (s *Session) due(t int) time.Time {
	secs := float64(t-s.anchorVirt) / (Rate * s.speed * s.factor)
	return s.anchorWall.Add(time.Duration(secs * float64(time.Second)))
}

// refactor asks the CPU how fast the client's runs may go now (cpu.go). When that
// changes, the run goes on from the virtual time due now at the new pace, and its
// viewers are told whether it is slowed.
func (s *Session) refactor(now time.Time) {
	f := s.opts.CPU.Factor(s.shares.owner)
	if f == s.factor {
		return
	}
	v := s.anchorVirt + int(now.Sub(s.anchorWall).Seconds()*Rate*s.speed*s.factor)
	if s.pending != nil {
		v = min(v, s.pending[0].t)
	}
	s.anchorWall, s.anchorVirt = now, max(v, s.anchorVirt)
	was := s.factor < 1
	s.factor = f
	if was != (f < 1) {
		s.broadcast(s.stateFrame())
	}
}

// arm sets the pacing timer for the next thing to publish while playing.
func (s *Session) arm() {
	s.pace.stop()
	if s.resting || !s.playing || s.failed != nil || len(s.subs) == 0 {
		return
	}
	now := s.clock.Now()
	rest := time.Duration(0)
	if s.factor < 1 {
		rest = s.notBefore.Sub(now) // a slowed run's rest after its last wake's work
	}
	switch {
	case s.pending != nil:
		s.pace.set(max(s.due(s.pending[0].t).Sub(now), rest))
	case s.sim.HasNext() || s.applied < len(s.ivs):
		s.pace.set(max(0, rest))
	}
	// Otherwise quiet: an intervention will wake the run.
}

func (s *Session) publish(bs []batch) {
	if len(bs) == 0 {
		return
	}
	s.horizon = max(s.horizon, bs[len(bs)-1].step)
	if s.opts.OnEvents != nil {
		n := 0
		for i := range bs {
			n += bs[i].events
		}
		s.opts.OnEvents(n)
	}
	s.broadcast(s.eventsFrame(bs))
}
