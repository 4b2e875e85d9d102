//go:build unix

package explore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// stepCase is a configuration whose random walks take every kind of transition the
// search has: deliveries, timers, ends of the CS, and each workload event (request,
// release, elect, crash, recover, partition, heal), plus, where it says so, losses and
// drop tokens; timed or not.
type stepCase struct {
	name  string
	cfg   sim.Config
	timed bool // time on even without timers
}

// stepCases returns, for every algorithm, its walk scenarios (walk_test.go: requests or
// elections, a crash and a recovery) and variants with each fault and with time; with
// starlark, the same for the algorithm's Starlark template instead of the Go one.
func stepCases(t *testing.T, starlark bool) []stepCase {
	t.Helper()
	var out []stepCase
	for _, sc := range walkScenarios(t) {
		cfg, err := sc.Config()
		if err != nil {
			t.Fatal(err)
		}
		if starlark {
			src, ok := starlarkalg.Template(sc.Algorithm)
			if !ok {
				continue
			}
			spec, err := starlarkalg.Load(sc.Algorithm, src)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Spec, cfg.Params = spec, nil
			if spec.ParseParams != nil {
				if cfg.Params, err = spec.ParseParams(sc.Params, cfg.IDs); err != nil {
					t.Fatal(err)
				}
			}
		}
		name := fmt.Sprintf("%s/n=%d/fifo=%v", sc.Algorithm, len(cfg.IDs), cfg.Network.FIFO)
		if sc.Title != "" {
			name = sc.Algorithm + "/" + sc.Title
		}
		out = append(out, stepCase{name: name, cfg: cfg})
		if cfg.Network.FIFO || sc.Title != "" {
			continue // the faults once per algorithm
		}
		n := len(cfg.IDs)
		with := func(what string, change func(c *sim.Config)) {
			c := cfg
			c.Actions = append([]sim.Action(nil), cfg.Actions...)
			change(&c)
			out = append(out, stepCase{name: name + "/" + what, cfg: c})
		}
		with("loss", func(c *sim.Config) { c.Network.Loss = 0.2 })
		with("drop", func(c *sim.Config) {
			c.Actions = append(c.Actions, sim.Action{At: 1, Do: sim.ActDrop, From: -1, To: 0})
		})
		with("partition", func(c *sim.Config) {
			rest := make([]int, 0, n-1)
			for i := 1; i < n; i++ {
				rest = append(rest, i)
			}
			c.Actions = append(c.Actions, sim.Action{At: 2, Do: sim.ActPartition, Groups: [][]int{{0}, rest}, From: -1, To: -1},
				sim.Action{At: 5, Do: sim.ActHeal, From: -1, To: -1})
		})
		if cfg.Spec.Family == sim.Mutex {
			with("release-events", func(c *sim.Config) {
				c.CS = 0
				for i := range n {
					c.Actions = append(c.Actions, sim.Action{At: 2, Do: sim.ActRelease, Node: i, From: -1, To: -1})
				}
			})
		}
		out = append(out, stepCase{name: name + "/timed", cfg: cfg, timed: true})
	}
	return out
}

// newWalkSearch is the search a walk of c takes: with time when c says so or the
// algorithm sets timers (as a search restarts timed), with canonical forms or not.
func newWalkSearch(t *testing.T, c stepCase, full bool) *search {
	t.Helper()
	timed := c.timed
	for {
		x, err := newSearch(c.cfg, timed, &Options{NoReduce: full})
		if err != nil {
			t.Fatal(err)
		}
		x.initial(newState(x.m), nil)
		if x.it.sawTimer.Load() && !timed {
			timed = true
			continue
		}
		return x
	}
}

// TestTakeStepsAsStepGo: on random walks of every algorithm, Go and Starlark, each
// transition carried out by the kernel's transition function (applyTake) gives the
// very state, finding and timer flag that the explorer's own stepping (apply) gives.
func TestTakeStepsAsStepGo(t *testing.T) {
	for _, starlark := range []bool{false, true} {
		seeds := uint64(20)
		if starlark {
			seeds = 4
		}
		for _, c := range stepCases(t, starlark) {
			for _, full := range []bool{true, false} {
				t.Run(fmt.Sprintf("starlark=%v/%s/full=%v", starlark, c.name, full), func(t *testing.T) {
					x := newWalkSearch(t, c, full)
					kinds := map[string]int{}
					for seed := uint64(1); seed <= seeds; seed++ {
						rng := rand.New(rand.NewPCG(seed, 3))
						s := newState(x.m)
						x.initial(s, nil)
						a, b := newState(x.m), newState(x.m)
						var trs []trans
						for step := 1; step <= 80; step++ {
							trs = x.enumerate(s, trs)
							if len(trs) == 0 {
								break
							}
							tr := trs[rng.IntN(len(trs))]
							kinds[kindName(x, tr)]++
							words := x.describe(s, tr).words
							a.copyFrom(s)
							b.copyFrom(s)
							x.timerSet = false
							fa := x.apply(a, tr)
							setA := x.timerSet
							x.timerSet = false
							fb := x.applyTake(b, tr)
							ka, kb := x.m.encode(nil, a), x.m.encode(nil, b)
							sameFinding := (fa == nil) == (fb == nil) && (fa == nil || *fa == *fb)
							if !bytes.Equal(ka, kb) || !sameFinding || setA != x.timerSet {
								t.Fatalf("seed %d step %d (%s): step.go gives %x %v (timer %v), Take gives %x %v (timer %v)",
									seed, step, words, ka, fa, setA, kb, fb, x.timerSet)
							}
							if fa != nil {
								break
							}
							s.copyFrom(a)
						}
					}
					t.Logf("%s: transitions by kind: %v", t.Name(), kinds)
				})
			}
		}
	}
}

// kindName names a transition's kind for a coverage log: an event by its action.
func kindName(x *search, t trans) string {
	if t.kind == tEvent {
		return x.m.events[t.a].act.Do.String()
	}
	return [...]string{tDeliver: "deliver", tLose: "lose", tDrop: "drop", tTimer: "timer", tRelease: "end-cs", tTick: "tick"}[t.kind]
}
