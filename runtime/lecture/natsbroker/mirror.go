package natsbroker

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

// mirror is a lecture of another server, on this one while it has followers here: it
// subscribes to the lecture's frames, loads the checkpoint and log from the presenter's
// server, and keeps its hub in step with the presenter's, frame by frame. One goroutine
// takes every message, in order.
type mirror struct {
	b    *Broker
	code string
	hub  lecture.Hub
	ch   chan *nats.Msg
	sub  *nats.Subscription

	ready chan struct{} // closed when the first load is done, or failed (err)
	err   error
	stop  chan struct{}
	once  sync.Once

	refs int // followers attached or joining; under b.mu

	asm   assembler // a checkpoint under way
	heard time.Time // the latest message from the presenter's server
}

// mirrorQueue is how many messages wait for a mirror's goroutine; past it NATS drops
// them (a slow consumer) and the mirror fetches what it missed.
const mirrorQueue = 4096

// newMirror subscribes to a lecture's frames and starts the goroutine that loads it.
// b.mu is held. The subscription goes to NATS before the request for the checkpoint, on
// the same connection: no frame published after the checkpoint can be missed.
func (b *Broker) newMirror(code string) (*mirror, error) {
	m := &mirror{b: b, code: code, ch: make(chan *nats.Msg, mirrorQueue),
		ready: make(chan struct{}), stop: make(chan struct{})}
	sub, err := b.nc.ChanSubscribe(b.subject(code, "frames"), m.ch)
	if err != nil {
		return nil, err
	}
	m.sub = sub
	go m.run()
	return m, nil
}

func (m *mirror) run() {
	defer func() {
		_ = m.sub.Unsubscribe()
		m.report(0)
		m.b.forget(m)
	}()
	if err := m.resync(); err != nil {
		if errors.Is(err, lecture.ErrNoStream) {
			err = lecture.ErrEnded // the presenter's server forgot it
		}
		m.err = err
		close(m.ready)
		return
	}
	close(m.ready)
	m.heard = time.Now()
	tick := time.NewTicker(m.b.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case msg := <-m.ch:
			if err := m.apply(msg); err != nil {
				m.fail(err)
				return
			}
		case <-tick.C:
			if time.Since(m.heard) > 5*m.b.opts.Heartbeat {
				m.b.log.Warn("a lecture of another server fell silent", "code", m.code)
				m.end(lecture.Unreachable)
				return
			}
			m.report(m.hub.Followers())
		}
	}
}

// apply takes one message of the lecture's subject. It returns lecture.ErrEnded at the
// end, or why the mirror cannot go on.
func (m *mirror) apply(msg *nats.Msg) error {
	m.heard = time.Now()
	kind := ""
	if msg.Header != nil {
		kind = msg.Header.Get(hKind)
	}
	switch kind {
	case "": // a frame
		m.asm.reset()
		n, ok := protocol.StampOf(msg.Data)
		if !ok {
			return nil
		}
		last := m.hub.Last()
		switch {
		case n <= last: // had it from the checkpoint and log
			return nil
		case n == last+1:
			m.hub.Put(n, msg.Data)
			return nil
		}
		return m.resync() // frames were lost on the way
	case kindCheckpoint:
		st, done, err := m.asm.add(msg)
		if err != nil || !done {
			return nil // a part was lost: the old checkpoint still holds, with a longer log
		}
		if last := m.hub.Last(); st.Seq > last {
			return m.resync()
		}
		m.hub.Checkpoint(st.Seq, st.CP)
	case kindBeat:
		if headerSeq(msg, hSeq) > m.hub.Last() {
			return m.resync()
		}
	case kindEnd:
		if headerSeq(msg, hSeq) > m.hub.Last() {
			if err := m.resync(); err != nil {
				return err
			}
		}
		return lecture.ErrEnded
	}
	return nil
}

// resync loads the presenter's server's checkpoint and log: at the start, and when
// frames were lost. The messages that arrive meanwhile wait in the channel.
func (m *mirror) resync() error {
	st, err := m.b.fetch(m.code)
	if err != nil {
		return err
	}
	m.hub.Load(st)
	if st.Ended {
		return lecture.ErrEnded
	}
	return nil
}

func (m *mirror) fail(err error) {
	switch {
	case errors.Is(err, lecture.ErrEnded), errors.Is(err, lecture.ErrNoStream):
		m.end(lecture.Ended)
	default:
		m.b.log.Warn("a lecture of another server cannot be followed", "code", m.code, "err", err)
		m.end(lecture.Unreachable)
	}
}

// end lets the followers go and stops the goroutine.
func (m *mirror) end(why lecture.Reason) {
	m.hub.Close(why)
	m.once.Do(func() { close(m.stop) })
}

// report tells the presenter's server how many followers this server has.
func (m *mirror) report(n int) {
	if !m.b.nc.IsConnected() {
		return
	}
	data, _ := json.Marshal(request{Node: m.b.opts.Node, N: n})
	_ = m.b.nc.Publish(m.b.subject(m.code, "rpc.count"), data)
}

// forget removes m from the broker's mirrors, if it is still there.
func (b *Broker) forget(m *mirror) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mirrors[m.code] == m {
		delete(b.mirrors, m.code)
	}
}

// mirrorSub is a follower's attachment to a mirror; the last one to leave stops it.
type mirrorSub struct {
	m    *mirror
	hs   lecture.Subscription
	once sync.Once
}

// Cancel implements lecture.Subscription.
func (s *mirrorSub) Cancel() {
	if s.hs != nil {
		s.hs.Cancel()
	}
	s.release()
}

func (s *mirrorSub) release() {
	s.once.Do(func() {
		m := s.m
		b := m.b
		b.mu.Lock()
		m.refs--
		last := m.refs == 0
		if last && b.mirrors[m.code] == m {
			delete(b.mirrors, m.code)
		}
		b.mu.Unlock()
		if last {
			m.once.Do(func() { close(m.stop) })
		}
	})
}

// remote is a lecture of another server as a follower's server sees it: what it is, as
// of the lookup; the rest are questions to the presenter's server.
type remote struct {
	b    *Broker
	code string
	info reply
}

var _ lecture.Followed = (*remote)(nil)

func (r *remote) Code() string      { return r.code }
func (r *remote) Algorithm() string { return r.info.Algorithm }

func (r *remote) Ended() (bool, string, string) { return r.info.Ended, r.info.Why, r.info.Link }

func (r *remote) StateFrame() []byte { return []byte(r.info.State) }

// Follow asks the presenter's server whether one more may join, then follows the
// lecture's mirror on this server.
func (r *remote) Follow(after uint64, f lecture.Follower) (lecture.Subscription, error) {
	if _, err := r.b.call(context.Background(), r.code, "admit", request{}); err != nil {
		if errors.Is(err, lecture.ErrNoStream) {
			err = lecture.ErrEnded
		}
		return nil, err
	}
	sub, err := r.b.Follow(r.code, after, f)
	if errors.Is(err, lecture.ErrNoStream) {
		err = lecture.ErrEnded
	}
	return sub, err
}

// FollowCompact attaches a follower of the lecture's compact frames (protocol 2), from
// its own mirror on this server: the frames come encoded by the presenter's server.
// ErrNoStream when that server has no compact stream: the follower gets protocol 1.
func (r *remote) FollowCompact(after uint64, f lecture.Follower) (lecture.Subscription, error) {
	if !r.info.Compact {
		return nil, lecture.ErrNoStream
	}
	if _, err := r.b.call(context.Background(), r.code, "admit", request{}); err != nil {
		if errors.Is(err, lecture.ErrNoStream) {
			err = lecture.ErrEnded
		}
		return nil, err
	}
	sub, err := r.b.Follow(lecture.CompactID(r.code), after, f)
	if errors.Is(err, lecture.ErrNoStream) {
		err = lecture.ErrEnded
	}
	return sub, err
}

func (r *remote) Answer(client, fid string, id, choice int) error {
	_, err := r.b.call(context.Background(), r.code, "answer", request{Client: client, Fid: fid, Question: id, Choice: choice})
	return err
}

// TakePlace asks the presenter's server for a place: it counts the places of every
// server (lecture.Lecture.TakeRemotePlace). This server counts it as held from before
// it asks, so that a report sent meanwhile includes it (places.go).
func (r *remote) TakePlace(client string) (func(), error) {
	r.b.addPlace(r.code, client, 1)
	if _, err := r.b.call(context.Background(), r.code, "place", request{Node: r.b.opts.Node, Client: client}); err != nil {
		r.b.addPlace(r.code, client, -1)
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { r.b.addPlace(r.code, client, -1) }) }, nil
}

func (r *remote) Answered(fid string) (int, int, bool) {
	rep, err := r.b.call(context.Background(), r.code, "answered", request{Fid: fid})
	if err != nil {
		return 0, 0, false
	}
	return rep.Question, rep.Choice, rep.OK
}

func (r *remote) Fork(ctx context.Context, step int) (string, error) {
	rep, err := r.b.call(ctx, r.code, "fork", request{Step: step})
	if err != nil {
		return "", err
	}
	return rep.Link, nil
}
