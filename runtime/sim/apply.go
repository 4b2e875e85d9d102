package sim

import "fmt"

// Apply performs a live intervention now, between steps. It returns an *ActionError
// when the action makes no sense in the current state (crashing a crashed node, ...).
func (s *Sim) Apply(a Action) error {
	if err := a.Check(s.spec, s.cfg.IDs); err != nil {
		return &ActionError{Action: a.Do, Reason: err.Error(), Err: err}
	}
	if err := s.apply(&a, true); err != nil {
		return err
	}
	// A live crash, partition or request can change what the quiescent checks see
	// without ending the quiet (a leader crashed after the election settled): check
	// again; findings already reported in this quiet period are not repeated.
	s.mon.quietSeen = false
	return s.monitorStep()
}

func (s *Sim) refuse(live bool, a *Action, format string, args ...any) error {
	if !live {
		return nil // a scheduled action that no longer applies is skipped
	}
	return &ActionError{Action: a.Do, Reason: fmt.Sprintf(format, args...)}
}

func (s *Sim) apply(a *Action, live bool) error {
	i := a.Node
	switch a.Do {
	case ActRequest:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		if s.mon.pendingSince[i] >= 0 || s.cs.in[i] {
			return s.refuse(live, a, "%s already wants or holds the CS", s.name(i))
		}
		if err := s.emit(s.event(EvRequest, i)); err != nil {
			return err
		}
		s.mon.pendingSince[i] = s.now
		s.mon.pendingSeen[i] = false
		s.mon.nextDeadline = min(s.mon.nextDeadline, s.now+s.mon.pendingLimit)
		return s.stepNode(i, s.input(Request))
	case ActRelease:
		if !s.alive[i] || !s.cs.in[i] {
			return s.refuse(live, a, "%s is not in the CS", s.name(i))
		}
		return s.release(i)
	case ActElect:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		if err := s.emit(s.event(EvElect, i)); err != nil {
			return err
		}
		s.mon.totals.Elections++
		return s.stepNode(i, s.input(Elect))
	case ActCrash:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is already crashed", s.name(i))
		}
		return s.crash(i)
	case ActRecover:
		if s.alive[i] {
			return s.refuse(live, a, "%s is not crashed", s.name(i))
		}
		return s.recover(i)
	case ActDrop:
		return s.drop(a, live)
	case ActDeliver:
		return s.deliverHeld(a, live)
	case ActPartition:
		return s.partition(a.Groups)
	case ActHeal:
		clear(s.nw.group)
		return s.emit(s.event(EvHeal, -1))
	case ActNetwork:
		s.setNetwork(&a.Net)
	case ActFire:
		return s.fireNow(a, live)
	case ActTell:
		if !s.alive[i] {
			return s.refuse(live, a, "%s is crashed", s.name(i))
		}
		return s.send(Message{Type: AppMessage, From: i, To: a.To})
	}
	return nil
}

func (s *Sim) crash(i int) error {
	s.alive[i] = false
	if err := s.emit(s.event(EvCrash, i)); err != nil {
		return err
	}
	s.cs.leave(i)
	s.mon.pendingSince[i] = -1
	s.mon.leaderOf[i] = -1
	s.tm.disarmAll(i)
	// Messages on their way to a crashed node are lost, oldest first.
	for _, slot := range s.nw.live(func(ms *msgSlot) bool { return ms.msg.To == i }) {
		if err := s.removeInFlight(slot, ReasonCrashed); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sim) recover(i int) error {
	s.alive[i] = true
	s.nodes[i] = s.spec.New(i, &s.setup)
	if err := s.emit(s.event(EvRecover, i)); err != nil {
		return err
	}
	return s.stepNode(i, s.input(Recover))
}
