package lecture

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Several servers behind a load balancer can serve one lecture: its run lives on one
// of them (the presenter's), its followers connect to any. A Broker that spans the
// servers implements Cluster; the registry then finds lectures of other servers by
// their join code, and answers the other servers' questions about its own.

// Followed is a lecture as the server of its followers sees it: a Lecture of this
// server, or one that runs on another server of a Cluster.
type Followed interface {
	Code() string
	// Algorithm is the slug of the run's algorithm: the page to draw it.
	Algorithm() string
	// Ended reports whether the lecture has ended, why, and the link to its run.
	Ended() (ended bool, why, link string)
	// StateFrame is the lecture frame a follower receives (live or ended, the link).
	StateFrame() []byte
	// Follow attaches a follower, resuming after sequence number after (0: from a
	// checkpoint).
	Follow(after uint64, f Follower) (Subscription, error)
	// Answer records follower fid's answer to question id, for client (an IPv4
	// address or an IPv6 /64): ErrAnswerShare past the client's share (places.go).
	Answer(client, fid string, id, choice int) error
	// TakePlace takes a follower's place for client before it follows; release gives
	// it back. ErrPlaceShare when client holds its share, on any server.
	TakePlace(client string) (release func(), err error)
	// Answered returns follower fid's answer to the current question, if any.
	Answered(fid string) (id, choice int, ok bool)
	// Fork is the path of the link to the run at step (the step on screen if step < 0).
	Fork(ctx context.Context, step int) (string, error)
}

// Hosted is a lecture of this server as a Cluster serves it to the others.
type Hosted interface {
	Followed
	// Admit tells whether one more follower may join: ErrEnded or ErrCrowded if not.
	Admit() error
	// TakeRemotePlace takes a place for a follower of client on server node, counted
	// as node's for ttl or until its next report (places.go).
	TakeRemotePlace(node, client string, ttl time.Duration) error
	// ReportPlaces replaces what server node's followers hold, by client, for ttl.
	ReportPlaces(node string, places map[string]int, ttl time.Duration)
}

// Cluster is a Broker between several servers.
type Cluster interface {
	Broker
	// Serve hands the broker this server's lectures: it answers other servers'
	// questions about them (what they are, admissions, answers, forks) through local.
	Serve(local func(code string) (Hosted, bool))
	// Lookup finds a lecture that runs on another server: ErrNoStream when no server
	// has it, ErrUnreachable when the servers cannot be asked.
	Lookup(ctx context.Context, code string) (Followed, error)
}

// ErrUnreachable says that the server that runs a lecture cannot be reached.
var ErrUnreachable = errors.New("the server that runs this lecture cannot be reached right now; try again in a moment")

// Join finds a lecture by its (normalized) join code: on this server, or, when the
// broker is a Cluster, on another one. It returns ErrNoStream when there is none.
func (r *Registry) Join(ctx context.Context, code string) (Followed, error) {
	if l, ok := r.ByCode(code); ok {
		return l, nil
	}
	if c, ok := r.broker.(Cluster); ok {
		return c.Lookup(ctx, code)
	}
	return nil, ErrNoStream
}

// hosted is the registry's lecture as a Cluster serves it.
func (r *Registry) hosted(code string) (Hosted, bool) {
	l, ok := r.ByCode(code)
	if !ok {
		return nil, false
	}
	return l, true
}

// Algorithm implements Followed.
func (l *Lecture) Algorithm() string { return l.sess.Algorithm() }

// Admit implements Hosted.
func (l *Lecture) Admit() error {
	l.mu.Lock()
	ended := l.ended
	l.mu.Unlock()
	if ended {
		return ErrEnded
	}
	if l.Followers() >= l.opts.MaxFollowers {
		return ErrCrowded
	}
	return nil
}

// Fork implements Followed: the run at step (at most its horizon) as a link, where it
// goes on in a session of the follower's own. While a question is open there is no
// fork: a run of one's own could be stepped to the answer before the presenter
// reveals it.
func (l *Lecture) Fork(ctx context.Context, step int) (string, error) {
	if l.opts.Link == nil {
		return "", errors.New("this server makes no links to runs")
	}
	l.mu.Lock()
	open := l.q != nil && l.qState == "open"
	l.mu.Unlock()
	if open {
		return "", ErrQuestionOpen
	}
	rec, err := l.sess.Recipe(ctx)
	if err != nil {
		return "", ErrEnded
	}
	if step >= 0 {
		rec.Step = min(step, rec.Horizon)
	}
	return l.opts.Link(rec)
}

// Limit implements session.Bound for the lecture's forks on this server: while a
// question is open a fork made before it opened may not go past the step on the
// presenter's screen; the bound follows the presenter, and lifts at the reveal (or
// when the question is withdrawn, or the lecture ends).
func (l *Lecture) Limit() (int, string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.q == nil || l.qState != "open" {
		return 0, "", false
	}
	return l.step, fmt.Sprintf("the presenter's question is open: this fork waits at step %d until the answer is revealed", l.step), true
}
