package lecture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// collector is a session subscriber whose frames the test reads one by one.
type collector struct{ c chan []byte }

func newCollector() *collector { return &collector{c: make(chan []byte, 4096)} }

func (c *collector) Send(f []byte) bool {
	select {
	case c.c <- f:
		return true
	default:
		return false
	}
}

// Deliver implements session.Subscriber: the presenter's tab takes the bytes.
func (c *collector) Deliver(f protocol.Encoded) bool { return c.Send(f.JSON) }

func (c *collector) Close() {}

func (c *collector) next(t *testing.T) []byte {
	t.Helper()
	return testwait.Recv(t, "a frame from the session", c.c)
}

type nodeView struct {
	ID     int
	Alive  bool
	Token  bool
	Leader int
}

type event struct {
	Type     string
	Node     int
	Rule     string
	Property string
}

type wireFrame struct {
	Type    string
	Step    int
	Nodes   []nodeView
	Batches []struct {
		Step   int
		Events []event
		Nodes  []nodeView
	}
}

// live is a real session stepped by the test, with what its frames showed.
type live struct {
	t      *testing.T
	sess   *session.Session
	sub    *collector
	step   int
	nodes  map[int]nodeView // id -> latest view
	events []stepEvent
}

type stepEvent struct {
	step int
	event
}

func startLive(t *testing.T, m *session.Manager, sc *scenarios.Scenario) *live {
	t.Helper()
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(sc)
	sess, err := m.Start(session.Setup{Config: cfg, Scenario: doc})
	if err != nil {
		t.Fatal(err)
	}
	l := &live{t: t, sess: sess, sub: newCollector(), nodes: map[int]nodeView{}}
	if err := sess.Attach(l.sub); err != nil {
		t.Fatal(err)
	}
	l.read() // hello
	l.read() // snapshot
	return l
}

func (l *live) read() wireFrame {
	l.t.Helper()
	var f wireFrame
	if err := json.Unmarshal(l.sub.next(l.t), &f); err != nil {
		l.t.Fatal(err)
	}
	for _, n := range f.Nodes {
		l.nodes[n.ID] = n
	}
	for _, b := range f.Batches {
		for _, e := range b.Events {
			l.events = append(l.events, stepEvent{b.Step, e})
		}
		for _, n := range b.Nodes {
			l.nodes[n.ID] = n
		}
	}
	if f.Type != "hello" {
		l.step = f.Step
	}
	return f
}

func (l *live) do(c session.Command) wireFrame {
	l.t.Helper()
	if err := l.sess.Do(l.sub, c); err != nil {
		l.t.Fatal(err)
	}
	return l.read()
}

// stepTo steps the live run to step k (or until nothing happens).
func (l *live) stepTo(k int) {
	l.t.Helper()
	for l.step < k {
		before := l.step
		if l.do(session.Command{Kind: session.Step}); l.step == before {
			return
		}
	}
}

func (l *live) holder() int {
	for id, n := range l.nodes {
		if n.Token && n.Alive {
			return id
		}
	}
	return -1
}

// The answer of every generated question is what the live session then does when it is
// stepped: curated scenarios and free runs, at several steps, every kind of question.
func TestGeneratedAnswersMatchTheLiveRun(t *testing.T) {
	m := session.NewManager(1000, session.Options{})
	defer m.Close()
	type run struct {
		name string
		sc   *scenarios.Scenario
		asks []int // processes that request the CS at step 0
	}
	var runs []run
	for _, e := range scenarios.Curated() {
		runs = append(runs, run{e.Name, e.Scenario, nil})
	}
	for _, spec := range algorithms.All() {
		if spec.Family != sim.Mutex {
			continue
		}
		sc, err := scenarios.Parse([]byte(`{"version":2,"algorithm":"` + spec.Slug + `","nodes":5,"seed":3}`))
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{"free " + spec.Slug, sc, []int{1, 3, 4}})
	}
	kinds := map[Kind]int{}
	deadlockYes := 0
	for _, r := range runs {
		for _, at := range []int{0, 2, 7, 20} {
			l := startLive(t, m, r.sc)
			for _, id := range r.asks {
				l.do(session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(id)}})
			}
			l.stepTo(at)
			if l.step != at {
				l.sess.Detach(l.sub)
				continue // the run is quiet before this step
			}
			rec, err := l.sess.Recipe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			qs, err := Generate(rec)
			if err != nil && !errors.Is(err, ErrNothingNext) {
				t.Fatalf("%s at step %d: %v", r.name, at, err)
			}
			token0 := l.holder()
			from := len(l.events)
			last := 0
			for _, q := range qs {
				last = max(last, q.Reveal)
			}
			l.stepTo(last)
			ahead := l.events[from:]
			for _, q := range qs {
				where := fmt.Sprintf("%s at step %d: %s %q (answer %s, reveal at %d)", r.name, at, q.Kind, q.Text, q.Choices[q.Answer], q.Reveal)
				if q.Step != at || q.Reveal <= at {
					t.Fatalf("%s: asked at %d", where, q.Step)
				}
				checkAnswer(t, where, q, ahead, l, token0)
				kinds[q.Kind]++
				if q.Kind == Deadlock && q.Answer == 0 {
					deadlockYes++
				}
			}
			l.sess.Detach(l.sub)
		}
	}
	for _, k := range []Kind{NextRule, NextCS, NextToken, Elected, Deadlock} {
		if kinds[k] == 0 {
			t.Errorf("no %s question was made and checked", k)
		}
	}
	if deadlockYes == 0 {
		t.Error("no deadlock question answered yes (maekawa-deadlock should give one)")
	}
	t.Logf("checked: %v", kinds)
}

func checkAnswer(t *testing.T, where string, q Question, ahead []stepEvent, l *live, token0 int) {
	t.Helper()
	answer := q.Choices[q.Answer]
	pid := func(id int) string { return fmt.Sprintf("P%d", id) }
	switch q.Kind {
	case NextRule:
		who := strings.Fields(q.Text)[3] // "Which rule does Pk fire next?"
		for _, e := range ahead {
			if e.Type == "rule" && pid(e.Node) == who {
				if e.Rule != answer || e.step != q.Reveal {
					t.Fatalf("%s: %s fired %s first, at step %d", where, who, e.Rule, e.step)
				}
				return
			}
		}
		t.Fatalf("%s: %s fired no rule", where, who)
	case NextCS:
		for _, e := range ahead {
			if e.Type == "enter" {
				if pid(e.Node) != answer || e.step != q.Reveal {
					t.Fatalf("%s: P%d entered first, at step %d", where, e.Node, e.step)
				}
				return
			}
		}
		t.Fatalf("%s: nobody entered", where)
	case NextToken:
		// Replay the frames' node views step by step to find the first new holder.
		got, at := findNextHolder(t, l, ahead, token0)
		if pid(got) != answer || at != q.Reveal {
			t.Fatalf("%s: the token went to P%d first, at step %d", where, got, at)
		}
	case Deadlock:
		var dead int
		entered := map[string]bool{}
		for _, e := range ahead {
			if e.step > q.Reveal {
				break
			}
			if e.Type == "violation" && e.Property == sim.PropDeadlock && dead == 0 {
				dead = e.step
			}
			if e.Type == "enter" {
				entered[pid(e.Node)] = true
			}
		}
		if q.Answer == 0 {
			if dead != q.Reveal {
				t.Fatalf("%s: deadlock reported at step %d", where, dead)
			}
			return
		}
		if dead != 0 {
			t.Fatalf("%s: deadlock at step %d", where, dead)
		}
		for _, w := range strings.FieldsFunc(strings.SplitN(q.Text, " wait", 2)[0], func(r rune) bool { return r == ',' || r == ' ' }) {
			if w != "and" && !entered[w] {
				t.Fatalf("%s: %s did not enter by step %d", where, w, q.Reveal)
			}
		}
	case Elected:
		for id, n := range l.nodes {
			if n.Alive && pid(n.Leader) != answer {
				t.Fatalf("%s: P%d takes P%d as leader at step %d", where, id, n.Leader, l.step)
			}
		}
	default:
		t.Fatalf("%s: unknown kind", where)
	}
}

// findNextHolder rebuilds the token holder after each step from a replay of the same
// run, since the frames' node views say who holds the token only when it changes.
func findNextHolder(t *testing.T, l *live, ahead []stepEvent, token0 int) (int, int) {
	t.Helper()
	rec, err := l.sess.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg := rec.Setup.Config
	cfg.Until = 0
	steps := []int{}
	for _, e := range ahead {
		if len(steps) == 0 || steps[len(steps)-1] != e.step {
			steps = append(steps, e.step)
		}
	}
	for _, k := range steps {
		s, err := sim.Replay(cfg, rec.Interventions, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range s.IDs() {
			if th, ok := s.Node(i).(sim.TokenHolder); ok && s.Alive(i) && th.HoldsToken() && id != token0 {
				return id, k
			}
		}
	}
	return -1, -1
}

// Questions are not made on a timeline the presenter rewound: its recorded future
// would not be the one a plain look-ahead sees.
func TestGenerateRefusesARecordedFuture(t *testing.T) {
	m := session.NewManager(1, session.Options{})
	defer m.Close()
	sc, _ := scenarios.Parse([]byte(`{"version":2,"algorithm":"ricart-agrawala","nodes":3,"seed":1}`))
	l := startLive(t, m, sc)
	l.do(session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(0)}})
	l.stepTo(3)
	l.do(session.Command{Kind: session.Act, Act: sim.ActionJSON{Do: "request", Node: new(1)}})
	l.do(session.Command{Kind: session.Seek, Step: 1})
	rec, _ := l.sess.Recipe(context.Background())
	if _, err := Generate(rec); err != ErrFutureRecorded {
		t.Fatalf("err %v, want ErrFutureRecorded", err)
	}
}

// The choices of a process question list the answer once, among at most six.
func TestChoicesAreBoundedAndHoldTheAnswer(t *testing.T) {
	sc, _ := scenarios.Parse([]byte(`{"version":2,"algorithm":"ricart-agrawala","nodes":12,"seed":5}`))
	cfg, _ := sc.Config()
	doc, _ := json.Marshal(sc)
	var ivs []sim.Intervention
	for i := range 12 {
		ivs = append(ivs, sim.Intervention{Step: 0, Action: sim.Action{Do: sim.ActRequest, Node: i, From: -1, To: -1}})
	}
	qs, err := Generate(session.Recipe{Setup: session.Setup{Config: cfg, Scenario: doc}, Interventions: ivs, Step: 0})
	if err != nil || len(qs) == 0 {
		t.Fatalf("%v, %d questions", err, len(qs))
	}
	for _, q := range qs {
		if len(q.Choices) < 2 || len(q.Choices) > maxChoices || q.Answer < 0 || q.Answer >= len(q.Choices) {
			t.Fatalf("%s: %d choices, answer %d", q.Kind, len(q.Choices), q.Answer)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(q.Choices)))) != len(q.Choices) {
			t.Fatalf("%s: repeated choices %v", q.Kind, q.Choices)
		}
	}
}

// The scenario's scheduled actions are what happens next: at step 0 of a guided
// scenario, before any message is in flight, the hall is asked about the process its
// first scheduled action wakes; a run with nothing left to happen says so.
func TestScheduledActionsAreWhatHappensNext(t *testing.T) {
	asked := 0
	for _, e := range scenarios.Curated() {
		cfg, err := e.Scenario.Config()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Until = 0
		var first []sim.Event
		s, err := sim.Replay(cfg, nil, 0, func(ev *sim.Event) { first = append(first, *ev) })
		if err != nil {
			t.Fatal(err)
		}
		first = first[:0]
		if ok, err := s.Step(); !ok || err != nil || len(first) == 0 {
			continue
		}
		if ty := first[0].Type; ty != sim.EvRequest && ty != sim.EvElect {
			continue // a message on screen starts this run, or a crash that wakes nobody
		}
		doc, _ := json.Marshal(e.Scenario)
		qs, err := Generate(session.Recipe{Setup: session.Setup{Config: cfg, Scenario: doc}})
		if err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
		who := fmt.Sprintf("Which rule does P%d fire next?", s.IDs()[first[0].Node])
		if !slices.ContainsFunc(qs, func(q Question) bool { return q.Kind == NextRule && q.Text == who && q.Reveal == 1 }) {
			t.Errorf("%s at step 0: the scheduled %v of node %d is not asked about: %+v", e.Name, first[0].Type, first[0].Node, qs)
		}
		asked++
	}
	if asked < 3 {
		t.Fatalf("only %d guided scenarios start with a scheduled request or election", asked)
	}

	sc, err := scenarios.Parse([]byte(`{"version":2,"algorithm":"ricart-agrawala","nodes":3,"seed":1}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(session.Recipe{Setup: session.Setup{Config: cfg}}); !errors.Is(err, ErrNothingNext) {
		t.Fatalf("a free run with nothing asked: %v, want %v", err, ErrNothingNext)
	}
}
