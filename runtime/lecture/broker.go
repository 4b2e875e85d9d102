package lecture

import (
	"errors"
	"sync"

	"github.com/teach-dist/playground/runtime/protocol"
)

// A lecture's frames go from the one server that runs its session to every follower
// through a Broker. The in-memory Broker below serves followers on the same server;
// another implementation (a message bus between servers) can take its place, since the
// lecture only ever talks to these interfaces.

// Follower receives a lecture's frames: a student's WebSocket.
type Follower interface {
	// Send queues one frame, already stamped with its sequence number. It must not
	// block; it returns false when the follower cannot take it (too slow, or gone),
	// and the broker then drops the follower.
	Send(frame []byte) bool
	// Close tells the follower that the broker dropped it (why: Slow) or that the
	// lecture ended (why: Ended). It must not block and may be called more than once.
	Close(why Reason)
}

// Reason says why a follower was let go.
type Reason uint8

const (
	Slow        Reason = iota + 1 // it did not take its frames
	Ended                         // the lecture ended
	Unreachable                   // the server that runs the lecture cannot be reached (a Cluster)
)

// Broker carries the frames of lectures to their followers.
type Broker interface {
	// Open starts the stream of one lecture; only the server that runs the lecture
	// opens it.
	Open(lecture string) (Stream, error)
	// Follow attaches f to a lecture's stream. f first receives what brings it up to
	// date: the frames after sequence number after if the broker still has them all,
	// else a checkpoint and the frames after it (after = 0 asks for that). Then it
	// receives every frame as it is published, in order, each exactly once.
	Follow(lecture string, after uint64, f Follower) (Subscription, error)
}

// Stream is the publishing end of one lecture.
type Stream interface {
	// Publish stamps frame (a JSON object) with the next sequence number, once for all
	// followers, and delivers it to each. It returns the number.
	Publish(frame []byte) uint64
	// Checkpoint sets what a follower that cannot resume receives first: frames that
	// together give the state after the last published frame. They carry that frame's
	// number. The log of frames kept for resuming starts over after it.
	Checkpoint(frames ...[]byte)
	// LogLen is the number of frames published since the last checkpoint: the
	// publisher refreshes the checkpoint when it grows.
	LogLen() int
	// Followers is the number of followers attached.
	Followers() int
	// Close ends the stream: every follower gets Close(Ended) after the frames
	// published so far, and Follow fails from then on.
	Close()
}

// Subscription is one follower's attachment.
type Subscription interface {
	// Cancel detaches the follower; it receives nothing more and no Close.
	Cancel()
}

// Errors of Follow and Open.
var (
	ErrNoStream = errors.New("lecture: no such lecture stream")
	ErrEnded    = errors.New("lecture: the lecture has ended")
	ErrBehind   = errors.New("lecture: the follower could not take its catch-up frames")
	ErrExists   = errors.New("lecture: stream already open")
)

// Memory is the in-process Broker.
type Memory struct {
	mu     sync.Mutex
	topics map[string]*topic
}

// NewMemory returns an empty in-process broker.
func NewMemory() *Memory { return &Memory{topics: make(map[string]*topic)} }

type topic struct {
	m  *Memory
	id string

	mu         sync.Mutex
	seq        uint64   // the last published number
	cpSeq      uint64   // the number the checkpoint stands for
	checkpoint [][]byte // stamped with cpSeq
	log        [][]byte // stamped frames cpSeq+1 .. seq
	subs       []*sub
	closed     bool
}

type sub struct {
	t *topic
	f Follower
}

// Open implements Broker.
func (m *Memory) Open(id string) (Stream, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.topics[id]; ok {
		return nil, ErrExists
	}
	t := &topic{m: m, id: id}
	m.topics[id] = t
	return t, nil
}

// Follow implements Broker.
func (m *Memory) Follow(id string, after uint64, f Follower) (Subscription, error) {
	m.mu.Lock()
	t, ok := m.topics[id]
	m.mu.Unlock()
	if !ok {
		return nil, ErrNoStream
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrEnded
	}
	var catchUp [][]byte
	if after > 0 && after >= t.cpSeq && after <= t.seq {
		catchUp = t.log[after-t.cpSeq:]
	} else {
		catchUp = append(catchUp, t.checkpoint...)
		catchUp = append(catchUp, t.log...)
	}
	for _, fr := range catchUp {
		if !f.Send(fr) {
			f.Close(Slow)
			return nil, ErrBehind
		}
	}
	s := &sub{t: t, f: f}
	t.subs = append(t.subs, s)
	return s, nil
}

// Cancel implements Subscription.
func (s *sub) Cancel() {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	t.remove(s)
}

func (t *topic) remove(s *sub) bool {
	for i, x := range t.subs {
		if x == s {
			last := len(t.subs) - 1
			t.subs[i] = t.subs[last]
			t.subs[last] = nil
			t.subs = t.subs[:last]
			return true
		}
	}
	return false
}

// Publish implements Stream.
func (t *topic) Publish(frame []byte) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.seq
	}
	t.seq++
	fr := protocol.Stamp(t.seq, frame)
	t.log = append(t.log, fr)
	// A follower that cannot take the frame now is dropped: nobody waits for it.
	subs := t.subs
	refused := FanOut(len(subs), func(i int) bool { return subs[i].f.Send(fr) })
	for k := len(refused) - 1; k >= 0; k-- { // from the last: removing swaps a later one in
		s := subs[refused[k]]
		t.remove(s)
		s.f.Close(Slow)
	}
	return t.seq
}

// Checkpoint implements Stream.
func (t *topic) Checkpoint(frames ...[]byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cpSeq = t.seq
	t.checkpoint = t.checkpoint[:0]
	for _, f := range frames {
		t.checkpoint = append(t.checkpoint, protocol.Stamp(t.seq, f))
	}
	clear(t.log)
	t.log = t.log[:0]
}

// LogLen implements Stream.
func (t *topic) LogLen() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.log)
}

// Followers implements Stream.
func (t *topic) Followers() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs)
}

// Close implements Stream.
func (t *topic) Close() {
	t.mu.Lock()
	subs := t.subs
	t.subs = nil
	t.closed = true
	t.log, t.checkpoint = nil, nil
	t.mu.Unlock()
	t.m.mu.Lock()
	delete(t.m.topics, t.id)
	t.m.mu.Unlock()
	for _, s := range subs {
		s.f.Close(Ended)
	}
}
