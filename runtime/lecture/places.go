package lecture

import (
	"errors"
	"time"
)

// What one client (an IPv4 address or an IPv6 /64, as web/ratelimit counts it) may
// hold of a lecture: Options.FollowersPerClient follower places, and as many answers
// to each question. Both are counted here, on the lecture's own server, for every
// server of a cluster: a follower on another server takes its place by asking this
// one (Hosted.TakeRemotePlace), and each server reports the places its followers
// hold every heartbeat (Hosted.ReportPlaces), which replaces what it reported before
// and lapses when it stops reporting. So the share is per lecture, however many
// servers its followers use.
//
// Answers are counted per question and per client, and only the answers the tally
// took: an answer refused for any reason (no such question, a choice out of range,
// answered already, the client's share reached) costs nothing, and an answer to one
// question never touches the count of another. A new question (Ask) starts its own
// count.

// ErrPlaceShare refuses a follower place to a client holding its share of them.
var ErrPlaceShare = errors.New("your network already holds its share of this lecture's places; the others are kept for the rest of the room")

// ErrAnswerShare refuses an answer of a client that has given its share of answers to
// the question.
var ErrAnswerShare = errors.New("your network has already given its share of answers to this question")

// maxReporters bounds the servers whose places a lecture keeps (a cluster has a few).
const maxReporters = 256

// reported is what one other server last said its followers hold.
type reported struct {
	places map[string]int
	until  time.Time
}

// heldLocked is what client holds of the lecture's places on every server. l.mu is
// held.
func (l *Lecture) heldLocked(client string, now time.Time) int {
	n := l.places[client]
	for node, r := range l.remote {
		if now.After(r.until) {
			delete(l.remote, node)
			continue
		}
		n += r.places[client]
	}
	return n
}

// TakePlace takes one of the lecture's places for a follower of client on this
// server; release gives it back. ErrPlaceShare when client holds its share already.
func (l *Lecture) TakePlace(client string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.heldLocked(client, time.Now()) >= l.opts.FollowersPerClient {
		return nil, ErrPlaceShare
	}
	if l.places == nil {
		l.places = make(map[string]int)
	}
	l.places[client]++
	released := false
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if released {
			return
		}
		released = true
		if l.places[client]--; l.places[client] <= 0 {
			delete(l.places, client)
		}
	}, nil
}

// TakeRemotePlace implements Hosted: server node asks a place for a follower of
// client. It counts as node's until node's next report, which includes it.
func (l *Lecture) TakeRemotePlace(node, client string, ttl time.Duration) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.heldLocked(client, now) >= l.opts.FollowersPerClient {
		return ErrPlaceShare
	}
	r, ok := l.remote[node]
	if !ok {
		if len(l.remote) >= maxReporters {
			return ErrCrowded
		}
		r = &reported{places: make(map[string]int)}
		if l.remote == nil {
			l.remote = make(map[string]*reported)
		}
		l.remote[node] = r
	}
	r.places[client]++
	r.until = now.Add(ttl)
	return nil
}

// ReportPlaces implements Hosted: server node's followers hold places, by client
// (what it asked for and has not given back); it stands for ttl.
func (l *Lecture) ReportPlaces(node string, places map[string]int, ttl time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(places) == 0 {
		delete(l.remote, node)
		return
	}
	if _, ok := l.remote[node]; !ok && len(l.remote) >= maxReporters {
		return
	}
	if l.remote == nil {
		l.remote = make(map[string]*reported)
	}
	l.remote[node] = &reported{places: places, until: time.Now().Add(ttl)}
}

// Held is what client holds of the lecture's places, on every server.
func (l *Lecture) Held(client string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heldLocked(client, time.Now())
}
