package session

import "github.com/teach-dist/playground/runtime/protocol"

// Checkpoint calls fn on the session's goroutine with a fresh hello and snapshot frame,
// in order with the frames its subscribers receive: every frame sent before the call
// is in the snapshot, none sent after it is. A lecture's broker uses it to refresh the
// state a late joiner starts from, so its log of frames to replay stays short. fn must
// not block. It returns ErrClosed if the session has ended.
func (s *Session) Checkpoint(fn func(hello, snapshot protocol.Encoded)) error {
	return s.send(&envelope{what: checkpoint, snap: fn})
}

func (s *Session) checkpoint(fn func(hello, snapshot protocol.Encoded)) {
	// What was due goes out first, as on attach, so the snapshot and the stream agree.
	s.flush()
	fn(s.helloFrame(), s.snapshotFrame())
}
