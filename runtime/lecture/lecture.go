// Package lecture is lecture mode: an instructor drives one live run on the projector
// while a hall of students follows it on their own screens. A Lecture is a subscriber
// of the presenter's session: it stamps every frame of the run with a sequence number
// once, keeps the latest checkpoint (hello and snapshot) and the frames after it, and
// hands them to a Broker that fans them out to the followers, so a late joiner or a
// reconnecting student catches up with nothing lost and nothing twice. On top of the
// run it carries predict-the-next-step questions, their answers and their reveal.
package lecture

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
)

// Options tune lectures. Zero values take the defaults.
type Options struct {
	// Idle ends a lecture whose presenter has been away this long (default 20 min).
	Idle time.Duration
	// Keep is how long an ended lecture's code still tells its followers that it
	// ended, with the link to the run (default 2 h).
	Keep time.Duration
	// Refresh is how many frames may follow a checkpoint before the lecture asks the
	// session for a fresh one, which bounds what a late joiner replays (default 128).
	Refresh int
	// Max is the number of live lectures at once (default 50).
	Max int
	// Share is the number of live lectures one client (an IPv4 address or an IPv6 /64)
	// keeps on a full server while another client wants one (default half of Max;
	// share.go). Under it, a client may fill the server while nobody else asks.
	Share int
	// OnEvict hears of a lecture ended on a full server to make room for another
	// client's (the server's log and metrics). It must not block.
	OnEvict func(code string)
	// MaxFollowers is the number of followers one lecture takes (default 5000: a
	// webinar, or several sections of a course; a follower costs the server about
	// 20 to 26 KiB of memory, 106 to 152 MiB resident for 5,000: docs/operations.md).
	MaxFollowers int
	// FollowersPerClient is how many of a lecture's places, and of the answers to one
	// of its questions, one client (an IPv4 address or an IPv6 /64) may hold (default
	// 40 % of MaxFollowers, 2,000 of 5,000: a campus behind one NAT fits, one address
	// cannot take every place). The web layer counts them (web/lecturehttp, ClientShare).
	FollowersPerClient int
	// Link turns a run's recipe into the path of a link that replays it ("/r/...").
	// Without it lectures have no link to the run.
	Link func(session.Recipe) (string, error)
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.Idle, 20*time.Minute)
	defaults.Positive(&o.Keep, 2*time.Hour)
	defaults.Positive(&o.Refresh, 128)
	defaults.Positive(&o.Max, 50)
	defaults.Positive(&o.MaxFollowers, 5000)
	if o.Share <= 0 || o.Share > o.Max {
		o.Share = max(1, o.Max/2)
	}
	defaults.Positive(&o.FollowersPerClient, max(1, o.MaxFollowers*2/5))
	return o
}

// FollowerCap is MaxFollowers with the defaults applied.
func (o Options) FollowerCap() int { return o.withDefaults().MaxFollowers }

// ClientShare is FollowersPerClient with the defaults applied.
func (o Options) ClientShare() int { return o.withDefaults().FollowersPerClient }

// Errors of the registry and of a lecture's operations. Their text is shown to people.
var (
	ErrFull        = errors.New("the server has reached its limit of live lectures; try again later")
	ErrClosed      = errors.New("the server is shutting down")
	ErrNoQuestion  = errors.New("there is no open question")
	ErrAnswered    = errors.New("you have already answered this question")
	ErrBadChoice   = errors.New("that choice is not one of the answers")
	ErrStale       = errors.New("the run has moved on since these questions were made: ask for new ones")
	ErrOpen        = errors.New("a question is already open: reveal or withdraw it first")
	ErrNoCandidate = errors.New("that question is not on the list")
	ErrCrowded     = errors.New("this lecture has all the followers it can take")
	ErrStepping    = errors.New("the run is already stepping to the answer")
	// ErrQuestionOpen refuses a fork while a question is open (Fork).
	ErrQuestionOpen = errors.New("a question is open: forks open again once the presenter reveals the answer, so nobody can step ahead to it")
)

// Presenter receives the presenter's own frames (follower count, live tally, the
// questions to choose from). Send must not block.
type Presenter interface {
	Send(frame []byte) bool
}

// Lecture is one live lecture.
type Lecture struct {
	reg    *Registry
	code   string
	token  string
	owner  string // the client that started it (share.go)
	sess   *session.Session
	opts   Options
	stream Stream
	// compact is the stream of the compact follower frames (protocol 2), made by
	// compactor; nil when the broker has none (docs/protocol.md).
	compact   Stream
	compactor *protocol.Compactor
	tap       *tap
	kick      chan struct{}
	endc      chan string
	done      chan struct{}

	mu         sync.Mutex
	hello      []byte // the latest hello, without the session id
	step       int    // the step the followers see
	cpAsked    bool   // a checkpoint was requested and has not come yet
	ended      bool
	endedAt    time.Time
	why        string // why it ended
	link       string // path of the link to the run, as of linkStep
	linkStep   int
	presenters map[Presenter]struct{}
	seen       time.Time // the presenter was last connected
	followers  int       // as last told to the presenters

	candidates []Question // made at candStep from cand
	candStep   int
	cand       session.Recipe
	qid        int
	q          *Question // the question asked (open, revealed or withdrawn)
	qState     string
	qWhy       string
	qRec       session.Recipe // what q was made from
	answers    map[string]int
	answersBy  map[string]int // client -> answers the tally took for q (places.go)
	tally      []int
	tallyDirty bool
	revealing  bool
	stepping   bool   // the presenter asked to step to the answer
	qFrame     []byte // the latest question frame published

	places map[string]int       // client -> places its followers hold on this server (places.go)
	remote map[string]*reported // server -> the places its followers hold, as it last said
}

// Code is the join code.
func (l *Lecture) Code() string { return l.code }

// Session is the presenter's session.
func (l *Lecture) Session() *session.Session { return l.sess }

// Done is closed when the lecture has ended.
func (l *Lecture) Done() <-chan struct{} { return l.done }

// Ended reports whether the lecture has ended, why, and the link to its run.
func (l *Lecture) Ended() (bool, string, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended, l.why, l.link
}

// Link is the path of the link to the run as last computed ("" when none yet).
func (l *Lecture) Link() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.link
}

// Step is the step the followers see.
func (l *Lecture) Step() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.step
}

// Followers is the number of followers attached.
func (l *Lecture) Followers() int {
	n := l.stream.Followers()
	if l.compact != nil {
		n += l.compact.Followers()
	}
	return n
}

// CatchUpLen is how many frames a follower joining now replays after the checkpoint:
// the checkpoint is refreshed as the run goes, so it stays short.
func (l *Lecture) CatchUpLen() int { return l.stream.LogLen() }

// Follow attaches a follower, resuming after sequence number after (0: from a checkpoint).
func (l *Lecture) Follow(after uint64, f Follower) (Subscription, error) {
	if err := l.Admit(); err != nil {
		return nil, err
	}
	sub, err := l.reg.broker.Follow(l.code, after, f)
	if errors.Is(err, ErrNoStream) {
		err = ErrEnded // it closed between the check and the call
	}
	return sub, err
}

// FollowCompact attaches a follower of the compact frames (protocol 2), resuming
// after their sequence number after. ErrNoStream: this lecture has no compact stream
// (its broker could not open one), the follower is served protocol 1.
func (l *Lecture) FollowCompact(after uint64, f Follower) (Subscription, error) {
	if l.compact == nil {
		return nil, ErrNoStream
	}
	if err := l.Admit(); err != nil {
		return nil, err
	}
	sub, err := l.reg.broker.Follow(CompactID(l.code), after, f)
	if errors.Is(err, ErrNoStream) {
		err = ErrEnded
	}
	return sub, err
}

// A lecture has two streams in its broker: its code names the protocol-1 frames,
// CompactID(code) the compact ones. Both are numbered and kept for resuming apart; a
// broker between servers carries each to the other servers once (natsbroker).
const compactSuffix = "~2"

// CompactID names the compact stream (protocol 2) of lecture code in the broker.
func CompactID(code string) string { return code + compactSuffix }

// StreamCode reads a broker's stream id: the lecture's code, and whether it names the
// compact stream.
func StreamCode(id string) (code string, compact bool) {
	return strings.CutSuffix(id, compactSuffix)
}

// StateFrame is the lecture frame a follower receives (live or ended, the link), for
// a follower who arrives after the end.
func (l *Lecture) StateFrame() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateFrame()
}

// toPresenters sends a frame to every presenter connection. l.mu is held.
func (l *Lecture) toPresenters(frame []byte) {
	for p := range l.presenters {
		p.Send(frame)
	}
}

// AddPresenter registers a presenter connection; it receives the lecture's state and
// the open question at once.
func (l *Lecture) AddPresenter(p Presenter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.presenters[p] = struct{}{}
	l.seen = time.Now()
	l.followers = l.Followers()
	p.Send(l.presenterFrame())
	if l.q != nil {
		p.Send(l.questionFrame(true))
	}
}

// RemovePresenter forgets a presenter connection.
func (l *Lecture) RemovePresenter(p Presenter) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.presenters, p)
	l.seen = time.Now()
}

// End ends the lecture and waits until it has: followers are told, with the link.
func (l *Lecture) End(why string) {
	l.requestEnd(why)
	<-l.done
}

func (l *Lecture) requestEnd(why string) {
	select {
	case l.endc <- why:
	default: // already asked
	}
}

// run is the lecture's goroutine: checkpoints, reveals, the presenter's figures, the
// link to the run, idle time and the end.
func (l *Lecture) run(ctx context.Context) {
	defer close(l.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.end("the server is shutting down")
			return
		case why := <-l.endc:
			l.end(why)
			return
		case <-l.sess.Done():
			l.end("the presenter's run ended")
			return
		case <-l.kick:
			l.work()
		case <-tick.C:
			l.work()
			l.mu.Lock()
			idle := len(l.presenters) == 0 && time.Since(l.seen) > l.opts.Idle
			l.mu.Unlock()
			if idle {
				l.end("the presenter has been away too long")
				return
			}
			l.refreshLink(false)
		}
	}
}

// work does what onFrame and Answer asked for.
func (l *Lecture) work() {
	l.mu.Lock()
	cp, reveal := l.cpAsked, l.revealing
	if n := l.Followers(); n != l.followers {
		l.followers = n
		l.toPresenters(l.presenterFrame())
	}
	if l.tallyDirty && l.q != nil {
		l.toPresenters(l.questionFrame(true))
		l.tallyDirty = false
	}
	l.mu.Unlock()
	if cp {
		if err := l.sess.Checkpoint(l.onCheckpoint); err != nil {
			l.requestEnd("the presenter's run ended")
		}
	}
	if reveal {
		l.reveal()
	}
}

// refreshLink recomputes the link to the run when the step has changed (at most once a
// tick), off the session's goroutine.
func (l *Lecture) refreshLink(force bool) {
	if l.opts.Link == nil {
		return
	}
	l.mu.Lock()
	stale := l.link == "" || l.linkStep != l.step
	l.mu.Unlock()
	if !stale && !force {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	rec, err := l.sess.Recipe(ctx)
	cancel()
	if err != nil {
		return
	}
	link, err := l.opts.Link(rec)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	changed := link != l.link
	l.link, l.linkStep = link, rec.Step
	if changed && !l.ended {
		l.toPresenters(l.presenterFrame())
	}
}

// end closes the lecture: the link is brought up to date, followers get the ended
// frame and then Close, the session loses its subscriber.
func (l *Lecture) end(why string) {
	l.refreshLink(true)
	l.mu.Lock()
	if l.q != nil && l.qState == "open" {
		l.closeQuestion("withdrawn", "the lecture ended")
	}
	l.ended, l.endedAt, l.why = true, time.Now(), why
	l.publish(nil, l.stateFrame())
	l.toPresenters(l.presenterFrame())
	l.mu.Unlock()
	l.stream.Close()
	if l.compact != nil {
		l.compact.Close()
	}
	l.sess.Detach(l.tap)
	l.reg.ended(l)
}
