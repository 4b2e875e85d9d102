package session

import "time"

// Clock is where a session reads the time and sets its timers (idle end, pacing,
// hibernation). Servers leave Options.Clock nil for the wall clock; tests pass a fake
// that moves only when told, so timing is tested without waiting for it.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed, on a goroutine of the clock's choosing.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call, as *time.Timer is one.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

type wallClock struct{}

func (wallClock) Now() time.Time                            { return time.Now() }
func (wallClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// alarm is one of a session's timers. Its firing does not act by itself: it queues an
// envelope behind the commands already sent, and the run goroutine acts on it in turn,
// so what a timer does is ordered with everything else the session hears (a test that
// moves a fake clock and then asks the session anything gets its answer after the
// timer's effect). A firing that arrives after the alarm was stopped or moved later is
// stale and is ignored.
type alarm struct {
	clock Clock
	timer Timer
	at    time.Time // when it is due; zero while stopped
}

// alarmKind says which alarm an envelope comes from.
type alarmKind uint8

const (
	idleAlarm alarmKind = iota
	paceAlarm
	restAlarm
)

// newAlarm makes a stopped alarm whose firing queues kind.
func (s *Session) newAlarm(kind alarmKind) *alarm {
	a := &alarm{clock: s.clock}
	a.timer = s.clock.AfterFunc(time.Hour, func() {
		select {
		case s.cmds <- &envelope{what: fired, alarm: kind}:
		case <-s.done:
		}
	})
	a.timer.Stop()
	return a
}

// set makes the alarm due in d (at once when d <= 0).
func (a *alarm) set(d time.Duration) {
	d = max(d, 0)
	a.at = a.clock.Now().Add(d)
	a.timer.Reset(d)
}

func (a *alarm) stop() {
	a.at = time.Time{}
	a.timer.Stop()
}

// fired reports whether a firing is current, and disarms the alarm if so.
func (a *alarm) fired() bool {
	if a.at.IsZero() || a.clock.Now().Before(a.at) {
		return false
	}
	a.at = time.Time{}
	return true
}

func (s *Session) alarmOf(kind alarmKind) *alarm {
	switch kind {
	case idleAlarm:
		return s.idle
	case paceAlarm:
		return s.pace
	}
	return s.rest
}

// alarmed acts on a current firing of the pace or rest alarm (the idle alarm ends the
// run loop itself, when nobody watches).
func (s *Session) alarmed(kind alarmKind) {
	switch kind {
	case paceAlarm:
		s.advance(s.clock.Now())
	case restAlarm:
		s.putToRest()
	}
}
