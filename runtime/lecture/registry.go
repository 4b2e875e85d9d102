package lecture

import (
	"context"
	"errors"
	"github.com/teach-dist/playground/runtime/protocol"
	"sync"
	"time"

	"github.com/teach-dist/playground/runtime/session"
)

// The registry starts lectures and finds them again: by join code (followers), by
// presenter token (the instructor), by session (one live lecture per run).

// Registry holds the lectures of this server by join code and by presenter token.
type Registry struct {
	opts   Options
	broker Broker
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	byCode    map[string]*Lecture
	byToken   map[[32]byte]*Lecture
	bySession map[string]*Lecture // live lectures only
	closed    bool
}

// NewRegistry returns a registry whose lectures publish through broker.
func NewRegistry(opts Options, broker Broker) *Registry {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Registry{opts: opts.withDefaults(), broker: broker, ctx: ctx, cancel: cancel,
		byCode: make(map[string]*Lecture), byToken: make(map[[32]byte]*Lecture), bySession: make(map[string]*Lecture)}
	if c, ok := broker.(Cluster); ok {
		c.Serve(r.hosted) // other servers' followers of our lectures (cluster.go)
	}
	return r
}

// Start makes sess the run of a new lecture, started by client (an IPv4 address or an
// IPv6 /64), and returns it with the presenter's token. A session has at most one live
// lecture: starting again returns the one it has. A full registry ends a lecture of a
// client over its share before it refuses (share.go).
func (r *Registry) Start(sess *session.Session, client string) (*Lecture, string, error) {
	r.mu.Lock()
	for {
		if r.closed {
			r.mu.Unlock()
			return nil, "", ErrClosed
		}
		r.purge(time.Now())
		if l, ok := r.bySession[sess.ID()]; ok {
			r.mu.Unlock()
			return l, l.token, nil
		}
		if len(r.bySession) < r.opts.Max {
			break
		}
		victim := r.victimLocked(client)
		if victim == nil {
			r.mu.Unlock()
			return nil, "", ErrFull
		}
		// Its end takes r.mu (ended): wait for it unlocked, then look again, as
		// another starter may have taken the place meanwhile.
		r.mu.Unlock()
		victim.End(evictedWhy)
		if r.opts.OnEvict != nil {
			r.opts.OnEvict(victim.code)
		}
		r.mu.Lock()
	}
	var code string
	var stream Stream
	var err error
	// A broker between servers refuses a code another server has (ErrExists).
	for tries := 0; ; tries++ {
		code = newCode()
		if r.byCode[code] != nil {
			continue
		}
		stream, err = r.broker.Open(code)
		if !errors.Is(err, ErrExists) || tries >= 8 {
			break
		}
	}
	token := newToken()
	l := &Lecture{
		reg: r, code: code, token: token, owner: client, sess: sess, opts: r.opts,
		kick: make(chan struct{}, 1), endc: make(chan string, 1), done: make(chan struct{}),
		presenters: make(map[Presenter]struct{}), seen: time.Now(),
	}
	l.tap = &tap{l: l}
	if err != nil {
		r.mu.Unlock()
		return nil, "", err
	}
	l.stream = stream
	// Compact frames for the followers that ask for them, encoded here once per frame;
	// a broker between servers carries them as they are (docs/protocol.md). A broker
	// that cannot open the stream leaves its followers to protocol 1.
	if cs, err := r.broker.Open(CompactID(code)); err == nil {
		l.compact, l.compactor = cs, protocol.NewCompactor()
	}
	r.byCode[code] = l
	r.byToken[tokenKey(token)] = l
	r.bySession[sess.ID()] = l
	r.mu.Unlock()

	// The session sends hello and snapshot at once: the first checkpoint.
	if err := sess.Attach(l.tap); err != nil {
		r.mu.Lock()
		delete(r.byCode, code)
		delete(r.byToken, tokenKey(token))
		delete(r.bySession, sess.ID())
		r.mu.Unlock()
		stream.Close()
		if l.compact != nil {
			l.compact.Close()
		}
		return nil, "", err
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		l.run(r.ctx)
	}()
	return l, token, nil
}

// purge forgets ended lectures older than Keep. r.mu is held.
func (r *Registry) purge(now time.Time) {
	for code, l := range r.byCode {
		l.mu.Lock()
		old := l.ended && now.Sub(l.endedAt) > r.opts.Keep
		l.mu.Unlock()
		if old {
			delete(r.byCode, code)
			delete(r.byToken, tokenKey(l.token))
		}
	}
}

// ByCode finds a lecture, live or recently ended, by its join code (normalized).
func (r *Registry) ByCode(code string) (*Lecture, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.purge(time.Now())
	l, ok := r.byCode[code]
	return l, ok
}

// ByToken finds a lecture by its presenter token.
func (r *Registry) ByToken(token string) (*Lecture, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.byToken[tokenKey(token)]
	return l, ok
}

// Live is the number of live lectures.
func (r *Registry) Live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.bySession)
}

func (r *Registry) ended(l *Lecture) {
	r.mu.Lock()
	if r.bySession[l.sess.ID()] == l {
		delete(r.bySession, l.sess.ID())
	}
	r.mu.Unlock()
}

// Close ends every lecture and waits for their goroutines.
func (r *Registry) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}
