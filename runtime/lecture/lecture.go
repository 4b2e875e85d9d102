// Package lecture is lecture mode: an instructor drives one live run on the projector
// while a hall of students follows it on their own screens. A Lecture is a subscriber
// of the presenter's session: it stamps every frame of the run with a sequence number
// once, keeps the latest checkpoint (hello and snapshot) and the frames after it, and
// hands them to a Broker that fans them out to the followers, so a late joiner or a
// reconnecting student catches up with nothing lost and nothing twice. On top of the
// run it carries predict-the-next-step questions, their answers and their reveal.
package lecture

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
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
	// MaxFollowers is the number of followers one lecture takes (default 1000).
	MaxFollowers int
	// Link turns a run's recipe into the path of a link that replays it ("/r/...").
	// Without it lectures have no link to the run.
	Link func(session.Recipe) (string, error)
}

func (o Options) withDefaults() Options {
	if o.Idle <= 0 {
		o.Idle = 20 * time.Minute
	}
	if o.Keep <= 0 {
		o.Keep = 2 * time.Hour
	}
	if o.Refresh <= 0 {
		o.Refresh = 128
	}
	if o.Max <= 0 {
		o.Max = 50
	}
	if o.MaxFollowers <= 0 {
		o.MaxFollowers = 1000
	}
	return o
}

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
)

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

// Start makes sess the run of a new lecture and returns it with the presenter's token.
// A session has at most one live lecture: starting again returns the one it has.
func (r *Registry) Start(sess *session.Session) (*Lecture, string, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, "", ErrClosed
	}
	r.purge(time.Now())
	if l, ok := r.bySession[sess.ID()]; ok {
		r.mu.Unlock()
		return l, l.token, nil
	}
	if len(r.bySession) >= r.opts.Max {
		r.mu.Unlock()
		return nil, "", ErrFull
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
		reg: r, code: code, token: token, sess: sess, opts: r.opts,
		kick: make(chan struct{}, 1), endc: make(chan string, 1), done: make(chan struct{}),
		presenters: make(map[Presenter]struct{}), seen: time.Now(),
	}
	l.tap = &tap{l: l}
	if err != nil {
		r.mu.Unlock()
		return nil, "", err
	}
	l.stream = stream
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
	sess   *session.Session
	opts   Options
	stream Stream
	tap    *tap
	kick   chan struct{}
	endc   chan string
	done   chan struct{}

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
	tally      []int
	tallyDirty bool
	revealing  bool
	stepping   bool   // the presenter asked to step to the answer
	qFrame     []byte // the latest question frame published
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
func (l *Lecture) Followers() int { return l.stream.Followers() }

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

// StateFrame is the lecture frame a follower receives (live or ended, the link), for
// a follower who arrives after the end.
func (l *Lecture) StateFrame() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateFrame()
}

// tap is the lecture as a subscriber of the presenter's session.
type tap struct{ l *Lecture }

// Deliver implements session.Subscriber. It runs on the session's goroutine, so the
// frames come in the run's order; it never blocks on a follower.
func (t *tap) Deliver(f protocol.Encoded) bool {
	t.l.onFrame(f)
	return true
}

// Close implements session.Subscriber: the session ended.
func (t *tap) Close() { t.l.requestEnd("the presenter's run ended") }

// followerHello is hello as followers get it: without the session id, which is the
// capability to drive the run.
func followerHello(h *protocol.Hello) []byte {
	v := *h
	v.Session = ""
	return v.AppendJSON(nil)
}

func (l *Lecture) onFrame(f protocol.Encoded) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	switch v := f.Frame.(type) {
	case *protocol.Hello:
		l.hello = followerHello(v)
		l.stream.Publish(l.hello)
		if l.q != nil && l.qState == "open" {
			l.closeQuestion("withdrawn", "the presenter started the run again")
		}
		return
	case *protocol.Snapshot:
		l.stream.Publish(f.JSON)
		l.stepping = false // a seek: V may step to the answer again
		l.setStep(&v.Clock)
		l.checkpoint(f.JSON)
		return
	case *protocol.Events:
		l.stream.Publish(f.JSON)
		l.setStep(&v.Clock)
	case *protocol.State:
		l.stream.Publish(f.JSON)
		l.setStep(&v.Clock)
	default:
		l.stream.Publish(f.JSON)
	}
	if !l.cpAsked && l.stream.LogLen() >= l.opts.Refresh {
		l.cpAsked = true
		l.wake()
	}
}

// setStep follows the step on screen. At the open question's reveal step the lecture
// checks and reveals; so it does when the run goes quiet before that step, which the
// run the answer was computed on does not do: it was changed, and the check withdraws.
func (l *Lecture) setStep(c *protocol.Clock) {
	l.step = c.Step
	if l.q == nil || l.qState != "open" || l.revealing {
		return
	}
	if c.Step >= l.q.Reveal || c.Quiet {
		l.revealing = true
		l.wake()
	}
}

// checkpoint sets what a new follower starts from: the run (hello, snapshot) and the
// lecture (its state, the latest question). l.mu is held.
func (l *Lecture) checkpoint(snapshot []byte) {
	frames := [][]byte{l.hello, snapshot, l.stateFrame()}
	if l.qFrame != nil {
		frames = append(frames, l.qFrame)
	}
	l.stream.Checkpoint(frames...)
	l.cpAsked = false
}

func (l *Lecture) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// stateFrame is the lecture frame followers receive: live or ended, and the link.
func (l *Lecture) stateFrame() []byte {
	f := protocol.Lecture{Code: l.code, Display: DisplayCode(l.code), State: "live", Link: l.link}
	if l.ended {
		f.State, f.Reason = "ended", l.why
	}
	return f.AppendJSON(nil)
}

// presenterFrame adds what only the presenter sees.
func (l *Lecture) presenterFrame() []byte {
	f := protocol.PresenterLecture{Role: "presenter", Code: l.code, Display: DisplayCode(l.code), State: "live",
		Link: l.link, LinkStep: l.linkStep, Followers: l.followers}
	if l.ended {
		f.State, f.Reason = "ended", l.why
	}
	return f.AppendJSON(nil)
}

func (l *Lecture) questionFrame(presenter bool) []byte {
	q := l.q
	f := protocol.Question{ID: l.qid, State: l.qState, Kind: string(q.Kind), Text: q.Text,
		Choices: q.Choices, Step: q.Step, Answers: len(l.answers), Reason: l.qWhy}
	if presenter || l.qState == "revealed" {
		f.Tally = l.tally
	}
	if presenter {
		f.Reveal = &q.Reveal
	}
	if l.qState == "revealed" {
		f.Answer = &q.Answer
	}
	return f.AppendJSON(nil)
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
	l.followers = l.stream.Followers()
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

// Questions makes the questions that can be asked at the step on screen, keeps them
// for Ask, and returns them.
func (l *Lecture) Questions(ctx context.Context) ([]Question, int, error) {
	rec, err := l.sess.Recipe(ctx)
	if err != nil {
		return nil, 0, err
	}
	qs, err := Generate(rec)
	if err != nil {
		return nil, rec.Step, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.candidates, l.candStep, l.cand = qs, rec.Step, rec
	return qs, rec.Step, nil
}

// QuestionsFrame makes the questions for the step shown (Questions) and is the answer
// to the presenter's questions op: the list, or why there is none. ref is the op's.
func (l *Lecture) QuestionsFrame(ctx context.Context, ref int64) []byte {
	qs, step, err := l.Questions(ctx)
	f := protocol.Questions{Step: step, Items: make([]protocol.Prompt, len(qs)), Ref: ref}
	for i, q := range qs {
		f.Items[i] = protocol.Prompt{Kind: string(q.Kind), Text: q.Text, Choices: q.Choices, Step: q.Step}
	}
	switch {
	case err != nil:
		f.Error = err.Error()
	case len(qs) == 0:
		f.Error = "nothing to predict from this step: nothing happens next without an intervention"
	}
	return f.AppendJSON(nil)
}

// Ask puts candidate i of the latest Questions to the followers.
func (l *Lecture) Ask(i int) (Question, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return Question{}, ErrEnded
	}
	if l.q != nil && l.qState == "open" {
		return Question{}, ErrOpen
	}
	if i < 0 || i >= len(l.candidates) {
		return Question{}, ErrNoCandidate
	}
	if l.candStep != l.step {
		return Question{}, ErrStale
	}
	q := l.candidates[i]
	l.qid++
	l.q, l.qState, l.qWhy, l.qRec = &q, "open", "", l.cand
	l.answers = make(map[string]int)
	l.tally = make([]int, len(q.Choices))
	l.revealing, l.stepping = false, false
	l.candidates = nil
	l.publishQuestion()
	return q, nil
}

// publishQuestion sends the question's state to followers (in the stream) and to the
// presenters (with the tally). l.mu is held.
func (l *Lecture) publishQuestion() {
	l.qFrame = l.questionFrame(false)
	l.stream.Publish(l.qFrame)
	l.toPresenters(l.questionFrame(true))
	l.tallyDirty = false
}

// closeQuestion reveals or withdraws the open question. l.mu is held.
func (l *Lecture) closeQuestion(state, why string) {
	l.qState, l.qWhy = state, why
	l.publishQuestion()
}

// Withdraw takes the open question back.
func (l *Lecture) Withdraw(why string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" {
		return ErrNoQuestion
	}
	l.closeQuestion("withdrawn", why)
	return nil
}

// RunChanged tells the lecture that the presenter changed the run's future (an
// intervention): an open question's answer no longer holds.
func (l *Lecture) RunChanged() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q != nil && l.qState == "open" {
		l.closeQuestion("withdrawn", "the presenter changed the run, so the answer changed too")
	}
}

// Answer records follower fid's answer to question id. A follower answers once.
func (l *Lecture) Answer(fid string, id, choice int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" || id != l.qid {
		return ErrNoQuestion
	}
	if choice < 0 || choice >= len(l.q.Choices) {
		return ErrBadChoice
	}
	if _, ok := l.answers[fid]; ok {
		return ErrAnswered
	}
	if len(l.answers) >= 4*l.opts.MaxFollowers {
		return ErrCrowded // a bound on memory against a client reconnecting without its cookie
	}
	l.answers[fid] = choice
	l.tally[choice]++
	if !l.tallyDirty {
		l.tallyDirty = true
		l.wake()
	}
	return nil
}

// Answered returns follower fid's answer to the current question, if any.
func (l *Lecture) Answered(fid string) (id, choice int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil {
		return 0, 0, false
	}
	c, ok := l.answers[fid]
	return l.qid, c, ok
}

// RevealTarget returns the open question's reveal step and the step shown: stepping
// the difference reveals it. It answers once per question, so that a second press
// while the run steps there does not step past the answer.
func (l *Lecture) RevealTarget() (reveal, step int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" {
		return 0, 0, ErrNoQuestion
	}
	if l.stepping {
		return 0, 0, ErrStepping
	}
	l.stepping = true
	return l.q.Reveal, l.step, nil
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
	if n := l.stream.Followers(); n != l.followers {
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

// onCheckpoint runs on the session's goroutine with a fresh hello and snapshot.
func (l *Lecture) onCheckpoint(hello, snapshot protocol.Encoded) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if h, ok := hello.Frame.(*protocol.Hello); ok {
		l.hello = followerHello(h)
	}
	l.checkpoint(snapshot.JSON)
}

// reveal shows the open question's answer now that the run has reached its step,
// unless the run the presenter made since is not the one the answer was computed on.
func (l *Lecture) reveal() {
	l.mu.Lock()
	q, id, from := l.q, l.qid, l.qRec
	open := q != nil && l.qState == "open"
	l.mu.Unlock()
	if !open {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	rec, err := l.sess.Recipe(ctx)
	cancel()
	same := err == nil && bytes.Equal(rec.Setup.Scenario, from.Setup.Scenario) &&
		sameUpTo(rec.Interventions, from.Interventions, q.Reveal)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revealing = false
	if l.q == nil || l.qid != id || l.qState != "open" {
		return
	}
	switch {
	case !same:
		l.closeQuestion("withdrawn", "the presenter changed the run, so the answer changed too")
	case l.step >= q.Reveal:
		l.closeQuestion("revealed", "")
	}
	// Otherwise the presenter stepped back meanwhile: the next frame at the step asks again.
}

// sameUpTo reports whether two intervention lists agree on every intervention that
// can affect the run up to step.
func sameUpTo(a, b []sim.Intervention, step int) bool {
	cut := func(x []sim.Intervention) []sim.Intervention {
		n := 0
		for n < len(x) && x[n].Step <= step {
			n++
		}
		return x[:n]
	}
	a, b = cut(a), cut(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
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
	l.stream.Publish(l.stateFrame())
	l.toPresenters(l.presenterFrame())
	l.mu.Unlock()
	l.stream.Close()
	l.sess.Detach(l.tap)
	l.reg.ended(l)
}
