package session

import (
	"fmt"

	"github.com/teach-dist/playground/runtime/protocol"
)

// Subscriber receives a session's frames: a browser tab, a lecture. It is defined
// here, where it is used; the web package implements it over a WebSocket.
type Subscriber interface {
	// Deliver queues one frame and must not block. It returns false when the
	// subscriber cannot take it (too slow, or gone); the session then drops the
	// subscriber. f.JSON, encoded once for every subscriber, is the subscriber's to
	// keep but not to modify; f.Frame may share the session's buffers, so it is read
	// during the call only.
	Deliver(f protocol.Encoded) bool
	// Close tells the subscriber that the session dropped it or ended. It must not
	// block and may be called more than once.
	Close()
}

// send hands env to the goroutine, or fails if the session has ended.
func (s *Session) send(e *envelope) error {
	select {
	case <-s.done: // checked first: a buffered channel would otherwise accept it
		return ErrClosed
	default:
	}
	select {
	case s.cmds <- e:
		return nil
	case <-s.done:
		return ErrClosed
	}
}

// Do queues a command from sub; errors about it come back to sub as error frames.
func (s *Session) Do(sub Subscriber, c Command) error {
	return s.send(&envelope{what: user, sub: sub, cmd: c})
}

// Attach adds a subscriber, which first receives hello and snapshot frames.
func (s *Session) Attach(sub Subscriber) error {
	errc := make(chan error, 1)
	if err := s.send(&envelope{what: attach, sub: sub, errc: errc}); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-s.done:
		return ErrClosed
	}
}

// Detach removes a subscriber; the last one leaving pauses the run.
func (s *Session) Detach(sub Subscriber) {
	_ = s.send(&envelope{what: detach, sub: sub})
}

// Touch postpones idle eviction: a page was just served for this session.
func (s *Session) Touch() {
	select {
	case s.cmds <- &envelope{what: touch}:
	default: // a busy session is not idle anyway
	}
}

func (s *Session) attach(sub Subscriber) error {
	if len(s.subs) >= s.opts.MaxSubscribers {
		return fmt.Errorf("session: %d viewers already follow this run", len(s.subs))
	}
	// What was due for the others must go out first, so the snapshot and the stream agree.
	s.flush()
	s.subs = append(s.subs, sub)
	s.shares.viewers.Store(int32(len(s.subs))) // before the snapshot: once it is read, the run counts as watched
	s.idle.stop()
	s.sendTo(sub, s.helloFrame())
	s.sendTo(sub, s.snapshotFrame())
	return nil
}

func (s *Session) detach(sub Subscriber) {
	for i, x := range s.subs {
		if x == sub {
			s.subs = append(s.subs[:i], s.subs[i+1:]...)
			break
		}
	}
	s.shares.viewers.Store(int32(len(s.subs)))
	if len(s.subs) == 0 {
		// Nobody watches: stop spending time on the run, and keep its step for a reload.
		s.flush()
		s.playing = false
		s.idle.set(s.opts.Idle)
	}
}

// sendTo delivers to one subscriber; one that cannot keep up is dropped.
func (s *Session) sendTo(sub Subscriber, frame protocol.Encoded) {
	if sub == nil {
		return
	}
	if !sub.Deliver(frame) {
		s.drop(sub)
	}
}

// broadcast delivers to every subscriber; slow ones are dropped, not waited for.
func (s *Session) broadcast(frame protocol.Encoded) {
	kept := s.subs[:0]
	var slow []Subscriber
	for _, sub := range s.subs {
		if sub.Deliver(frame) {
			kept = append(kept, sub)
		} else {
			slow = append(slow, sub)
		}
	}
	clear(s.subs[len(kept):])
	s.subs = kept
	s.shares.viewers.Store(int32(len(s.subs)))
	for _, sub := range slow {
		sub.Close()
	}
	if len(s.subs) == 0 && len(slow) > 0 {
		s.playing = false
		s.idle.set(s.opts.Idle)
	}
}

func (s *Session) drop(sub Subscriber) {
	s.detach(sub)
	sub.Close()
}
