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

// refuse is the answer to an action the run's state does not allow: a live one is
// refused with an *ActionError saying why, a scheduled one skipped.
func refuse(live bool, a *Action, format string, args ...any) error {
	if !live {
		return nil // a scheduled action that no longer applies is skipped
	}
	return &ActionError{Action: a.Do, Reason: fmt.Sprintf(format, args...)}
}

// apply carries out an action: the workload's through Take, the network's here (they
// end in Take's deliveries, losses and timers).
func (s *Sim) apply(a *Action, live bool) error {
	switch a.Do {
	case ActDrop:
		return s.drop(a, live)
	case ActDeliver:
		return s.deliverHeld(a, live)
	case ActNetwork:
		s.setNetwork(&a.Net)
		return nil
	case ActFire:
		return s.fireNow(a, live)
	case ActTell:
		return s.tell(a, live)
	}
	return Take(kernel{s}, &Transition{Kind: TAct, Act: a, Live: live})
}

// refused reports whether action a does not apply to the run as it stands, and then
// refuse's answer.
func (s *Sim) refused(a *Action, live bool) (bool, error) {
	why := refusal(kernel{s}, a)
	if why == "" {
		return false, nil
	}
	return true, refuse(live, a, why, s.name(a.Node))
}

// tell is node a.Node sending an application message to a.To: a step of its own, with
// one effect, carried out as every node's effects are.
func (s *Sim) tell(a *Action, live bool) error {
	if no, err := s.refused(a, live); no {
		return err
	}
	s.ctx.Reset(a.Node)
	s.ctx.Send(a.To, Message{Type: AppMessage})
	return effects(kernel{s}, a.Node, s.ctx.did, s.nw.group)
}
