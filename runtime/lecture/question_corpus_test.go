package lecture

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// A recorded run: what each step did, and who held the token, who was up and whom
// each node took as leader after it. The checks below read the answers off it with
// their own bookkeeping, not the generator's.
type recorded struct {
	cfg      sim.Config
	ivs      []sim.Intervention
	ids      []int
	events   [][]sim.Event // events[k]: the events of step k (0: before the first step)
	holder   []int         // after step k: index of the live token holder, -1: none
	alive    [][]bool      // after step k, per node index
	leader   [][]int       // after step k: the id each node index takes as leader
	maxSteps int
}

// record runs cfg with interventions at step 0 (the presenter's clicks before the
// first step) for up to steps steps, the way Generate rebuilds a live session's run.
func record(t *testing.T, cfg sim.Config, ivs []sim.Intervention, steps int) *recorded {
	t.Helper()
	cfg.Until = 0
	cfg.MaxEvents = session.DefaultMaxEvents
	r := &recorded{cfg: cfg, ivs: ivs, ids: cfg.IDs}
	cur := []sim.Event{}
	s, err := sim.Replay(cfg, ivs, 0, func(ev *sim.Event) { cur = append(cur, *ev) })
	if err != nil {
		t.Fatal(err)
	}
	after := func() {
		r.events = append(r.events, cur)
		cur = []sim.Event{}
		h := -1
		alive := make([]bool, len(r.ids))
		leader := make([]int, len(r.ids))
		snap := s.Snapshot()
		for i := range r.ids {
			alive[i] = s.Alive(i)
			leader[i] = snap.Nodes[i].Leader
			if th, ok := s.Node(i).(sim.TokenHolder); ok && s.Alive(i) && th.HoldsToken() {
				h = i
			}
		}
		r.holder, r.alive, r.leader = append(r.holder, h), append(r.alive, alive), append(r.leader, leader)
	}
	after()
	for range steps + Ahead {
		ok, err := s.Step()
		if err != nil || !ok {
			break
		}
		after()
	}
	r.maxSteps = min(steps, len(r.events)-1)
	return r
}

func (r *recorded) name(i int) string { return fmt.Sprintf("P%d", r.ids[i]) }

// waitingAt is the set of node names that asked for the CS and are not in it (nor
// crashed) after step k.
func (r *recorded) waitingAt(k int) map[string]bool {
	w := map[string]bool{}
	for j := 0; j <= k; j++ {
		for _, ev := range r.events[j] {
			switch ev.Type {
			case sim.EvRequest:
				w[r.name(ev.Node)] = true
			case sim.EvEnter, sim.EvCrash:
				delete(w, r.name(ev.Node))
			}
		}
	}
	return w
}

// check asserts that q, asked after step k, is worth asking and that the run agrees
// with its answer.
func (r *recorded) check(t *testing.T, where string, k int, q Question) {
	t.Helper()
	where = fmt.Sprintf("%s at step %d: %s %q %v", where, k, q.Kind, q.Text, q.Choices)
	if len(q.Choices) < 2 || q.Answer < 0 || q.Answer >= len(q.Choices) {
		t.Fatalf("%s: answer %d of %d choices", where, q.Answer, len(q.Choices))
	}
	if len(slices.Compact(slices.Sorted(slices.Values(q.Choices)))) != len(q.Choices) {
		t.Fatalf("%s: a choice is repeated", where)
	}
	if q.Step != k || q.Reveal <= k || q.Reveal >= len(r.events) {
		t.Fatalf("%s: asked at %d, revealed at %d", where, q.Step, q.Reveal)
	}
	answer := q.Choices[q.Answer]
	switch q.Kind {
	case NextRule:
		who := strings.Fields(q.Text)[3] // "Which rule does Pk fire next?"
		for j := k + 1; j <= q.Reveal; j++ {
			for _, ev := range r.events[j] {
				if ev.Type != sim.EvRule || r.name(ev.Node) != who {
					continue
				}
				if j != q.Reveal || ev.Rule != answer {
					t.Fatalf("%s: %s fired %s first, at step %d", where, who, ev.Rule, j)
				}
				// A message, a timer or the scenario's scheduled request, election or
				// recovery wakes it.
				first := r.events[j][0]
				if !slices.Contains([]sim.EventType{sim.EvDeliver, sim.EvTimer, sim.EvRequest, sim.EvElect, sim.EvRecover}, first.Type) || r.name(first.Node) != who {
					t.Fatalf("%s: nothing the hall knows of wakes %s: its step starts with a %v of P%d", where, who, first.Type, first.Node)
				}
				return
			}
		}
		t.Fatalf("%s: %s fired no rule by step %d", where, who, q.Reveal)
	case NextCS:
		// The choices wait now or ask, as the scenario has them, before anyone enters.
		waiting := r.waitingAt(k)
	asks:
		for j := k + 1; j <= q.Reveal; j++ {
			for _, ev := range r.events[j] {
				if ev.Type == sim.EvEnter {
					break asks
				}
				if ev.Type == sim.EvRequest {
					waiting[r.name(ev.Node)] = true
				}
			}
		}
		if len(waiting) < 2 {
			t.Fatalf("%s: only %v wait", where, waiting)
		}
		for _, c := range q.Choices {
			if !waiting[c] {
				t.Fatalf("%s: %s is a choice but neither waits nor asks", where, c)
			}
		}
		for j := k + 1; j <= q.Reveal; j++ {
			for _, ev := range r.events[j] {
				if ev.Type == sim.EvEnter {
					if r.name(ev.Node) != answer || j != q.Reveal {
						t.Fatalf("%s: %s entered first, at step %d", where, r.name(ev.Node), j)
					}
					return
				}
			}
		}
		t.Fatalf("%s: nobody entered by step %d", where, q.Reveal)
	case NextToken:
		for j := k + 1; j <= q.Reveal; j++ {
			if h := r.holder[j]; h >= 0 && h != r.holder[k] {
				if r.name(h) != answer || j != q.Reveal {
					t.Fatalf("%s: the token went to %s first, at step %d", where, r.name(h), j)
				}
				return
			}
		}
		t.Fatalf("%s: the token stayed by step %d", where, q.Reveal)
	case Deadlock:
		waiting := r.waitingAt(k)
		if len(waiting) < 2 {
			t.Fatalf("%s: only %v wait, which cannot deadlock", where, waiting)
		}
		dead := 0
		for j := k + 1; j <= q.Reveal && dead == 0; j++ {
			for _, ev := range r.events[j] {
				if ev.Type == sim.EvViolation && ev.Property == sim.PropDeadlock {
					dead = j
				}
				if ev.Type == sim.EvEnter {
					delete(waiting, r.name(ev.Node))
				}
			}
		}
		if q.Answer == 0 && dead != q.Reveal {
			t.Fatalf("%s: answered yes, deadlock seen at step %d", where, dead)
		}
		if q.Answer == 1 && (dead != 0 || len(waiting) != 0) {
			t.Fatalf("%s: answered no, but deadlock at step %d and %v still wait", where, dead, waiting)
		}
	case Elected:
		for i, up := range r.alive[q.Reveal] {
			if up && fmt.Sprintf("P%d", r.leader[q.Reveal][i]) != answer {
				t.Fatalf("%s: %s takes P%d as leader at step %d", where, r.name(i), r.leader[q.Reveal][i], q.Reveal)
			}
		}
	default:
		t.Fatalf("%s: unknown kind", where)
	}
}

// Every question the generator makes, over a corpus of runs (every curated scenario at
// every step of its first 400, and free runs of every algorithm over a sweep of seeds
// at every step of their first 60), has at least two choices, holds its answer, shows
// it before anything the hall cannot see coming, and the run then does what it says.
// Questions that are not worth asking are not made: no "who enters next" with one
// waiter, no deadlock question for a single waiter, no rule question for a process
// nothing wakes.
func TestEveryQuestionOfACorpusIsWorthAskingAndRight(t *testing.T) {
	type run struct {
		name  string
		cfg   sim.Config
		ivs   []sim.Intervention
		steps int
	}
	var runs []run
	for _, e := range scenarios.Curated() {
		cfg, err := e.Scenario.Config()
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{e.Name, cfg, nil, 400})
	}
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for _, spec := range algorithms.All() {
		for seed := 1; seed <= seeds; seed++ {
			sc, err := scenarios.Parse(fmt.Appendf(nil, `{"version":2,"algorithm":%q,"nodes":5,"seed":%d,"cs":3}`, spec.Slug, seed))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			// The presenter's clicks before the first step: three requests, or an
			// election started by the lowest process (on odd seeds also the highest
			// crashed).
			var ivs []sim.Intervention
			act := func(do sim.ActionKind, node int) {
				ivs = append(ivs, sim.Intervention{Step: 0, Action: sim.Action{Do: do, Node: node, From: -1, To: -1}})
			}
			if spec.Family == sim.Mutex {
				for _, i := range []int{1, 3, 4} {
					act(sim.ActRequest, i)
				}
			} else {
				if seed%2 == 1 {
					act(sim.ActCrash, 4)
				}
				act(sim.ActElect, 0)
			}
			runs = append(runs, run{fmt.Sprintf("%s seed %d", spec.Slug, seed), cfg, ivs, 60})
		}
	}
	kinds := map[Kind]int{}
	deadlockYes := 0
	for _, rn := range runs {
		r := record(t, rn.cfg, rn.ivs, rn.steps)
		for k := 0; k <= r.maxSteps; k++ {
			qs, err := Generate(session.Recipe{Setup: session.Setup{Config: r.cfg}, Interventions: r.ivs, Step: k})
			if err != nil && !errors.Is(err, ErrNothingNext) {
				t.Fatalf("%s at step %d: %v", rn.name, k, err)
			}
			for _, q := range qs {
				r.check(t, rn.name, k, q)
				kinds[q.Kind]++
				if q.Kind == Deadlock && q.Answer == 0 {
					deadlockYes++
				}
			}
		}
	}
	for _, k := range []Kind{NextRule, NextCS, NextToken, Elected, Deadlock} {
		if kinds[k] == 0 {
			t.Errorf("the corpus made no %s question to check", k)
		}
	}
	if deadlockYes == 0 {
		t.Error("no deadlock question of the corpus answered yes (maekawa-deadlock should give one)")
	}
	t.Logf("%d runs; questions checked: %v", len(runs), kinds)
}
