package explore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

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
