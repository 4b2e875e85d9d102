package lecture

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// Predict-the-next-step questions. They are made from the running scenario by looking
// ahead: the run is replayed to the step on screen and then taken further on that copy,
// so the answer is known before anyone answers. The lecture reveals it when the live
// run reaches the step where it shows.
//
// A question is asked only when it is worth asking: it has at least two plausible
// answers (only processes waiting now, or asking before anyone enters, can be the next
// to enter; a single waiter cannot deadlock), and its answer follows from what the hall
// can know: the run on screen and the scenario it follows. The scenario's scheduled
// actions (requests, elections, crashes still to come) are part of what happens next,
// as its explanation tells them; "which rule does Pk fire next" is asked of a process
// a message, a timer or a scheduled action is about to wake.

// Kind is what a question asks.
type Kind string

const (
	NextRule  Kind = "next-rule"  // which rule does Pk fire next?
	NextCS    Kind = "next-cs"    // who enters the critical section next?
	NextToken Kind = "next-token" // who holds the token next?
	Elected   Kind = "elected"    // who will be elected?
	Deadlock  Kind = "deadlock"   // will the waiting processes deadlock?
)

// Question is one generated question with its answer.
type Question struct {
	Kind    Kind     `json:"kind"`
	Text    string   `json:"text"`
	Choices []string `json:"choices"`
	Answer  int      `json:"-"` // index into Choices; never sent before the reveal
	Step    int      `json:"step"`
	Reveal  int      `json:"-"` // the step whose events show the answer
}

// Look-ahead bounds: far enough for an election or a round of requests to settle, short
// enough to answer a presenter at once even late in a run.
const (
	Ahead      = 400 // steps looked ahead
	settle     = 30  // steps without a leader change after which an election counts as settled
	maxChoices = 6
)

// ErrFutureRecorded is returned when the step shown has recorded interventions after
// it: the presenter went back in time, and the future on screen is not the one a
// plain look-ahead sees.
var ErrFutureRecorded = errors.New("questions are made at the end of the timeline: this run has interventions recorded after the step shown")

// ErrNothingNext is returned when nothing happens after the step shown, neither a
// message, a timer nor an action the scenario has scheduled: there is nothing to
// predict until someone intervenes.
var ErrNothingNext = errors.New("nothing to predict from this step: nothing happens next without an intervention")

// Generate makes the questions that can be asked at the recipe's step, in a fixed order.
// The run is rebuilt exactly as the live session runs it (no end time, the session's
// event limit).
func Generate(rec session.Recipe) ([]Question, error) {
	cfg := rec.Setup.Config
	cfg.Until = 0
	cfg.MaxEvents = session.DefaultMaxEvents
	step := rec.Step
	for _, iv := range rec.Interventions {
		if iv.Step > step || (iv.Step == step && iv.Action.TakesStep()) {
			return nil, ErrFutureRecorded
		}
	}
	var w watcher
	s, err := sim.Replay(cfg, rec.Interventions, step, w.sink)
	if err != nil {
		var ae *sim.ActionError
		if !errors.As(err, &ae) {
			return nil, err
		}
	}
	if s == nil || s.Steps() != step {
		return nil, nil // the run ended before this step: nothing comes next
	}
	w.start(s)
	for range Ahead {
		ok, err := s.Step()
		if err != nil || !ok {
			break // an error (the event limit) ends the look-ahead like a quiet run
		}
		w.after(s)
	}
	w.quiet = !s.HasNext()
	if s.Steps() == step {
		return nil, ErrNothingNext
	}
	return w.questions(), nil
}

// watcher follows the replay: before the step shown it tracks who waits for the CS; in
// the look-ahead it records what each question needs.
type watcher struct {
	s      *sim.Sim
	ahead  bool
	quiet  bool // the look-ahead ended because nothing was left to happen
	spec   *sim.Spec
	ids    []int
	step0  int
	alive0 []bool

	waiting map[int]bool // node index -> asked for the CS and not yet in it

	// The look-ahead's steps by what started them: the step being watched and the
	// node a delivery, a timer or a scheduled action of it woke.
	curStep  int
	curWoken int // node index, -1: none (an exit, a drop)

	asking map[int]bool // node index -> asked for the CS in the look-ahead before anyone entered

	firstRule     *ruleAt // the first rule fired by a node a delivery or timer woke
	firstEnter    *nodeAt
	ruled         map[int]bool // node index -> has fired a rule in the look-ahead
	entered       map[int]int  // waiting node index -> step it entered
	deadlockAt    int          // step of a deadlock violation, 0: none
	token0        int          // index holding the token at the step shown, -1: none
	tokenNext     *nodeAt
	leaderOf      []int // id per node index
	lastLeaderAt  int   // step of the latest leader event in the look-ahead
	lastStepAhead int
}

type ruleAt struct {
	node int
	rule string
	step int
}

type nodeAt struct {
	node int
	step int
}

func (w *watcher) sink(ev *sim.Event) {
	if !w.ahead {
		if w.waiting == nil {
			w.waiting = make(map[int]bool)
		}
		switch ev.Type {
		case sim.EvRequest:
			w.waiting[ev.Node] = true
		case sim.EvEnter, sim.EvCrash:
			delete(w.waiting, ev.Node)
		}
		return
	}
	step := w.s.Steps()
	if step != w.curStep {
		w.stepStarts(step, ev)
	}
	switch ev.Type {
	case sim.EvRule:
		if w.ruled[ev.Node] {
			break
		}
		w.ruled[ev.Node] = true
		if w.firstRule == nil && w.curWoken == ev.Node {
			w.firstRule = &ruleAt{node: ev.Node, rule: ev.Rule, step: step}
		}
	case sim.EvRequest:
		if w.firstEnter == nil && !w.waiting[ev.Node] {
			w.asking[ev.Node] = true
		}
	case sim.EvEnter:
		if w.firstEnter == nil {
			w.firstEnter = &nodeAt{node: ev.Node, step: step}
		}
		if w.waiting[ev.Node] {
			if _, ok := w.entered[ev.Node]; !ok {
				w.entered[ev.Node] = step
			}
		}
	case sim.EvViolation:
		if ev.Property == sim.PropDeadlock && w.deadlockAt == 0 {
			w.deadlockAt = step
		}
	case sim.EvLeader:
		w.leaderOf[ev.Node] = ev.Leader
		w.lastLeaderAt = step
	}
}

// stepStarts notes what started a step of the look-ahead from its first event: a
// delivery, a timer or a scheduled request, election or recovery of the scenario wakes
// a node; an exit, a drop, a crash or a partition wakes none.
func (w *watcher) stepStarts(step int, ev *sim.Event) {
	w.curStep, w.curWoken = step, -1
	switch ev.Type {
	case sim.EvDeliver, sim.EvTimer, sim.EvRequest, sim.EvElect, sim.EvRecover:
		w.curWoken = ev.Node
	}
}

// start is called at the step shown, before the look-ahead.
func (w *watcher) start(s *sim.Sim) {
	w.s = s
	w.ahead = true
	w.spec = s.Spec()
	w.ids = s.IDs()
	w.step0 = s.Steps()
	w.entered = make(map[int]int)
	w.ruled = make(map[int]bool)
	w.asking = make(map[int]bool)
	w.curStep = w.step0
	snap := s.Snapshot()
	w.alive0 = make([]bool, len(snap.Nodes))
	w.leaderOf = make([]int, len(snap.Nodes))
	for i, n := range snap.Nodes {
		w.alive0[i] = n.Alive
		w.leaderOf[i] = n.Leader
	}
	for i := range w.waiting {
		if !w.alive0[i] || s.InCS(i) {
			delete(w.waiting, i)
		}
	}
	w.token0 = w.holder(s)
}

// holder is the index of the live node holding the token, -1 when it is on its way or
// the algorithm has none.
func (w *watcher) holder(s *sim.Sim) int {
	for i := range w.ids {
		if th, ok := s.Node(i).(sim.TokenHolder); ok && s.Alive(i) && th.HoldsToken() {
			return i
		}
	}
	return -1
}

// after is called after each step of the look-ahead.
func (w *watcher) after(s *sim.Sim) {
	w.lastStepAhead = s.Steps()
	if w.tokenNext == nil {
		if _, ok := s.Node(0).(sim.TokenHolder); ok {
			if h := w.holder(s); h >= 0 && h != w.token0 {
				w.tokenNext = &nodeAt{node: h, step: s.Steps()}
			}
		}
	}
}

func (w *watcher) name(i int) string { return fmt.Sprintf("P%d", w.ids[i]) }

func (w *watcher) questions() []Question {
	var out []Question
	add := func(q Question, ok bool) {
		if ok && q.Reveal > w.step0 && q.Answer >= 0 && len(q.Choices) >= 2 {
			q.Step = w.step0
			out = append(out, q)
		}
	}
	add(w.nextRule())
	if w.spec.Family == sim.Mutex {
		add(w.nextCS())
	}
	add(w.nextToken())
	if w.spec.Family == sim.Mutex {
		add(w.deadlock())
	}
	if w.spec.Family == sim.Election {
		add(w.elected())
	}
	return out
}

// nextRule asks about the process that acts next: which of the rules fires first.
func (w *watcher) nextRule() (Question, bool) {
	r := w.firstRule
	if r == nil {
		return Question{}, false
	}
	labels := make([]string, len(w.spec.Rules))
	for i, x := range w.spec.Rules {
		labels[i] = x.Label
	}
	k := slices.Index(labels, r.rule)
	if k < 0 {
		return Question{}, false
	}
	// At most maxChoices rules, a window of the pseudocode around the answer so that
	// its position does not give it away.
	lo := max(0, min(k-maxChoices/2, len(labels)-maxChoices))
	choices := labels[lo:min(len(labels), lo+maxChoices)]
	return Question{
		Kind:    NextRule,
		Text:    fmt.Sprintf("Which rule does %s fire next?", w.name(r.node)),
		Choices: slices.Clone(choices),
		Answer:  slices.Index(choices, r.rule),
		Reveal:  r.step,
	}, true
}

// nextCS asks who enters the critical section next, among the processes waiting for
// it now and those the scenario makes ask before anyone enters: with fewer than two
// there is nothing to predict.
func (w *watcher) nextCS() (Question, bool) {
	e := w.firstEnter
	set := maps.Clone(w.waiting)
	maps.Copy(set, w.asking)
	if e == nil || len(set) < 2 || !set[e.node] {
		return Question{}, false
	}
	text := "Who enters the critical section next?"
	if len(w.waiting) > 0 {
		text += fmt.Sprintf(" Waiting now: %s.", w.names(w.waiting))
	}
	if len(w.asking) > 0 {
		text += fmt.Sprintf(" About to ask: %s.", w.names(w.asking))
	}
	w.limit(set, e.node)
	choices, answer := w.nodeChoices(set, e.node)
	return Question{Kind: NextCS, Text: text, Choices: choices, Answer: answer, Reveal: e.step}, true
}

// nextToken asks who holds the token next (token algorithms only).
func (w *watcher) nextToken() (Question, bool) {
	e := w.tokenNext
	if e == nil {
		return Question{}, false
	}
	set := map[int]bool{e.node: true}
	for i, up := range w.alive0 {
		if up && i != w.token0 {
			set[i] = true
		}
	}
	w.limit(set, e.node)
	choices, answer := w.nodeChoices(set, e.node)
	text := "The token is on its way. Who holds it next?"
	if w.token0 >= 0 {
		text = fmt.Sprintf("%s holds the token. Who holds it next?", w.name(w.token0))
	}
	return Question{Kind: NextToken, Text: text, Choices: choices, Answer: answer, Reveal: e.step}, true
}

// deadlock asks whether the processes waiting for the CS now all get it; a deadlock
// takes at least two, so a single waiter is not asked about.
func (w *watcher) deadlock() (Question, bool) {
	if len(w.waiting) < 2 {
		return Question{}, false
	}
	q := Question{
		Kind:    Deadlock,
		Text:    fmt.Sprintf("%s wait for the critical section. Will they deadlock?", w.names(w.waiting)),
		Choices: []string{"Yes: they wait for each other for ever", "No: each of them gets the CS"},
	}
	if w.deadlockAt > 0 {
		q.Answer, q.Reveal = 0, w.deadlockAt
		return q, true
	}
	last := 0
	for i := range w.waiting {
		at, ok := w.entered[i]
		if !ok {
			return Question{}, false // not settled within the look-ahead
		}
		last = max(last, at)
	}
	q.Answer, q.Reveal = 1, last
	return q, true
}

// elected asks who wins the election under way: the leader every live process agrees
// on once leader changes stop.
func (w *watcher) elected() (Question, bool) {
	if w.lastLeaderAt == 0 {
		return Question{}, false
	}
	if !w.quiet && w.lastStepAhead-w.lastLeaderAt < settle {
		return Question{}, false // still changing at the end of the look-ahead
	}
	leader := -1
	for i, id := range w.leaderOf {
		if !w.s.Alive(i) {
			continue
		}
		if leader == -1 {
			leader = id
		} else if id != leader {
			return Question{}, false // no agreement: nothing single to predict
		}
	}
	k := slices.Index(w.ids, leader)
	if leader < 0 || k < 0 {
		return Question{}, false
	}
	set := map[int]bool{k: true}
	for i, up := range w.alive0 {
		if up {
			set[i] = true
		}
	}
	w.limit(set, k)
	choices, answer := w.nodeChoices(set, k)
	return Question{Kind: Elected, Text: "Who will be elected leader?", Choices: choices, Answer: answer, Reveal: w.lastLeaderAt}, true
}

// limit keeps at most maxChoices processes, the answer among them, by node order
// around it.
func (w *watcher) limit(set map[int]bool, keep int) {
	for len(set) > maxChoices {
		// Drop the process furthest (in index) from the answer; ties go to the higher.
		far, d := -1, -1
		for i := range set {
			if x := abs(i - keep); x > d || (x == d && i > far) {
				far, d = i, x
			}
		}
		delete(set, far)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// nodeChoices lists the processes of set by node order; it returns the answer's index.
func (w *watcher) nodeChoices(set map[int]bool, answer int) ([]string, int) {
	idx := slices.Sorted(maps.Keys(set))
	return w.namesOf(idx), slices.Index(idx, answer)
}

// namesOf names the processes idx, in that order.
func (w *watcher) namesOf(idx []int) []string {
	out := make([]string, len(idx))
	for k, i := range idx {
		out[k] = w.name(i)
	}
	return out
}

func (w *watcher) names(set map[int]bool) string {
	parts := w.namesOf(slices.Sorted(maps.Keys(set)))
	switch len(parts) {
	case 1:
		return parts[0]
	default:
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
}
