package lecture

import (
	"errors"
	"sync"
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

// topic is one of Memory's streams: a hub, known by its id while it is open.
type topic struct {
	m   *Memory
	id  string
	hub Hub
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
	return t.hub.Follow(after, f)
}

// Publish implements Stream.
func (t *topic) Publish(frame []byte) uint64 {
	seq, _ := t.hub.Publish(frame)
	return seq
}

// Checkpoint implements Stream.
func (t *topic) Checkpoint(frames ...[]byte) { t.hub.StampCheckpoint(frames) }

// LogLen implements Stream.
func (t *topic) LogLen() int { return t.hub.LogLen() }

// Followers implements Stream.
func (t *topic) Followers() int { return t.hub.Followers() }

// Close implements Stream.
func (t *topic) Close() {
	t.m.mu.Lock()
	delete(t.m.topics, t.id)
	t.m.mu.Unlock()
	t.hub.Close(Ended)
}
