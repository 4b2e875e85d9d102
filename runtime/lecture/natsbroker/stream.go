package natsbroker

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/runtime/lecture"
)

// stream is a lecture of this server: the publishing end, its own followers' hub, and
// the answers to the other servers' questions about it.
type stream struct {
	b    *Broker
	code string
	subj string // the lecture's frames
	rpc  *nats.Subscription
	hub  lecture.Hub

	mu     sync.Mutex // publishes the frames in the order the hub numbers them
	closed bool

	cmu    sync.Mutex
	counts map[string]count // other servers' followers, as they last reported
}

type count struct {
	n  int
	at time.Time
}

// Publish implements lecture.Stream: one stamp, for this server's followers and, in one
// message, for every other server's.
func (s *stream) Publish(frame []byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, fr := s.hub.Publish(frame)
	if fr != nil {
		s.b.publish(&nats.Msg{Subject: s.subj, Data: fr})
	}
	return seq
}

// Checkpoint implements lecture.Stream. The other servers take it too, so that their
// late joiners start as near the present as this server's.
func (s *stream) Checkpoint(frames ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq, cp := s.hub.StampCheckpoint(frames)
	if cp == nil {
		return // closed
	}
	for _, m := range stateMsgs(s.subj, kindCheckpoint, lecture.HubState{CPSeq: seq, Seq: seq, CP: cp}, s.b.payloadLimit()) {
		s.b.publish(m)
	}
}

// LogLen implements lecture.Stream.
func (s *stream) LogLen() int { return s.hub.LogLen() }

// Followers implements lecture.Stream: this server's and, as they last reported (within
// three heartbeats), the other servers'.
func (s *stream) Followers() int {
	n := s.hub.Followers()
	fresh := time.Now().Add(-3 * s.b.opts.Heartbeat)
	s.cmu.Lock()
	defer s.cmu.Unlock()
	for node, c := range s.counts {
		if c.at.Before(fresh) {
			delete(s.counts, node)
			continue
		}
		n += c.n
	}
	return n
}

// Close implements lecture.Stream: this server's followers are let go after the frames
// published so far, and the other servers are told, with the number of the last frame,
// so that one that missed some fetches them before letting its followers go.
func (s *stream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	s.hub.Close(lecture.Ended)
	s.b.publish(s.marker(kindEnd))
}

func (s *stream) marker(kind string) *nats.Msg {
	m := nats.NewMsg(s.subj)
	m.Header.Set(hKind, kind)
	m.Header.Set(hSeq, strconv.FormatUint(s.hub.Last(), 10))
	return m
}

// beat tells the other servers that the lecture is alive and how far it is: one that
// missed the latest frames notices. It reports false once the stream has closed.
func (s *stream) beat() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.b.publish(s.marker(kindBeat))
	return true
}

// serve answers another server's question about this lecture.
func (s *stream) serve(m *nats.Msg) {
	op := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	var req request
	if len(m.Data) > 0 && json.Unmarshal(m.Data, &req) != nil {
		return
	}
	switch op {
	case "count":
		s.cmu.Lock()
		if req.N > 0 {
			s.counts[req.Node] = count{n: req.N, at: time.Now()}
		} else {
			delete(s.counts, req.Node)
		}
		s.cmu.Unlock()
		return
	case "places":
		if l, ok := s.b.hosted(s.code); ok {
			l.ReportPlaces(req.Node, req.Places, s.b.placesLast())
		}
		return
	case "sync":
		s.sync(m)
		return
	}
	if m.Reply == "" {
		return
	}
	l, ok := s.b.hosted(s.code)
	if !ok {
		respond(m, errReply(lecture.ErrNoStream))
		return
	}
	switch op {
	case "info":
		ended, why, link := l.Ended()
		respond(m, reply{Algorithm: l.Algorithm(), Ended: ended, Why: why, Link: link, State: string(l.StateFrame()),
			Compact: s.b.hasCompact(l.Code())})
	case "admit":
		respond(m, result(l.Admit()))
	case "answer":
		respond(m, result(l.Answer(req.Client, req.Fid, req.Question, req.Choice)))
	case "place":
		respond(m, result(l.TakeRemotePlace(req.Node, req.Client, s.b.placesLast())))
	case "answered":
		id, choice, ok := l.Answered(req.Fid)
		respond(m, reply{Question: id, Choice: choice, OK: ok})
	case "fork":
		// A replay off this goroutine: answers keep coming meanwhile.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.b.opts.Timeout)
			defer cancel()
			link, err := l.Fork(ctx, req.Step)
			if err != nil {
				respond(m, errReply(err))
				return
			}
			respond(m, reply{Link: link})
		}()
	default:
		respond(m, reply{Msg: "unknown question " + strconv.Quote(op)})
	}
}

// sync answers with the checkpoint and the log, in as many parts as they need.
func (s *stream) sync(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	for _, part := range stateMsgs(m.Reply, kindState, s.hub.Snapshot(), s.b.payloadLimit()) {
		s.b.publish(part)
	}
}

func result(err error) reply {
	if err != nil {
		return errReply(err)
	}
	return reply{}
}

func respond(m *nats.Msg, r reply) {
	b, _ := json.Marshal(r)
	_ = m.Respond(b)
}
