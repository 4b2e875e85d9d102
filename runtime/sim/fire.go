package sim

// fireNow fires node a.Node's armed timer a.Timer at once, as if it had come due. In
// hold mode the user (or a counterexample of the explorer) chooses the order of
// deliveries; this lets a time-out be placed in that order too. The timer's scheduled
// expiry is cancelled, so it fires once.
func (s *Sim) fireNow(a *Action, live bool) error {
	i := a.Node
	if !s.alive[i] {
		return s.refuse(live, a, "%s is crashed", s.name(i))
	}
	slot, ok := s.nodeTimers[i][a.Timer]
	if !ok {
		return s.refuse(live, a, "%s has no timer %q armed", s.name(i), a.Timer)
	}
	s.killTimer(slot)
	delete(s.nodeTimers[i], a.Timer)
	ev := s.event(EvTimer, i)
	ev.Name = a.Timer
	if err := s.emit(ev); err != nil {
		return err
	}
	in := s.input(Timer)
	in.Timer = a.Timer
	return s.stepNode(i, in)
}
