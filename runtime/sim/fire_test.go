package sim_test

import (
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

func fire(at, node int, name string) sim.Action {
	return sim.Action{At: at, Do: sim.ActFire, Node: node, Timer: name, From: -1, To: -1}
}

// A fire event fires an armed timer at once, in its place among the events, and its
// own expiry no longer comes (the explorer's counterexamples place time-outs so).
func TestFire_FiresAnArmedTimerNowAndOnce(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Init: [][]timerOp{nil, {{Name: "tick", After: 15}}}}, 1)
	cfg.Until = 30
	cfg.Actions = []sim.Action{fire(3, 1, "tick"), fire(4, 1, "tick"), fire(5, 0, "tick")}
	evs := runEvents(t, cfg)
	checkEvents(t, cfg.Seed, ofType(evs, sim.EvTimer, sim.EvRule), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t3 timer n1 tick",
		"t3 rule n1 PT1",
		// t4: the timer is gone, so the second fire is skipped; n0 never armed one.
	})
}

func TestFire_LiveIsRefusedWithoutTimerOrName(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Init: [][]timerOp{nil, {{Name: "tick", After: 15}}}}, 1)
	h := start(t, cfg)
	h.refused(fire(0, 0, "tick")) // n0 has no timer
	h.apply(crash(0, 1))
	h.refused(fire(0, 1, "tick")) // crashed: its timers are gone
	if err := h.s.Apply(fire(0, 0, "")); err == nil {
		t.Fatal("a fire without a name was taken")
	}
}
