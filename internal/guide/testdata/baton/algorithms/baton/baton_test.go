package baton

import (
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Ids that are not the indexes, so an index written where an id belongs shows: index
// 0 is P7, 1 is P3 (the keeper in these tests), 2 is P5.
var ids = []int{7, 3, 5}

const iP7, iP3, iP5 = 0, 1, 2

// start builds process self with P3 as the keeper and runs its Init.
func start(t *testing.T, self int) *simtest.Fixture {
	t.Helper()
	return simtest.Start(t, Spec(), self, &sim.Setup{IDs: ids, Params: simtest.Params(t, Spec(), `{"keeper": 3}`, ids)})
}

// One test per rule, named after it: each drives one process by hand.

func TestEX1_TheKeeperStartsWithTheBaton(t *testing.T) {
	start(t, iP3).Check(simtest.Want{Rules: []string{"EX-1"}, State: `{"state":"RELEASED","keeper":3,"baton":true,"queue":[]}`})
	start(t, iP7).Check(simtest.Want{Rules: []string{"EX-1"}, State: `{"state":"RELEASED","keeper":3}`})
}

func TestEX2_AsksTheKeeper(t *testing.T) {
	f := start(t, iP7)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"EX-2"}, Sent: []string{"ASK->1"}, State: `{"state":"WANTED","keeper":3}`})
	f.Step(sim.Input{Kind: sim.Request}) // asking again while waiting changes nothing
	f.Check(simtest.Want{State: `{"state":"WANTED","keeper":3}`})
}

func TestEX3_TheKeeperLendsOrQueues(t *testing.T) {
	f := start(t, iP3)
	f.Deliver(sim.Message{Type: MsgAsk, From: iP7})
	f.Check(simtest.Want{Rules: []string{"EX-3"}, Sent: []string{"BATON->0"}, State: `{"state":"RELEASED","keeper":3,"baton":false,"queue":[]}`})
	f.Deliver(sim.Message{Type: MsgAsk, From: iP5})
	f.Check(simtest.Want{Rules: []string{"EX-3"}, State: `{"state":"RELEASED","keeper":3,"baton":false,"queue":[5]}`})
}

func TestEX4_EntersWithTheBaton(t *testing.T) {
	f := start(t, iP7)
	f.Step(sim.Input{Kind: sim.Request})
	f.Deliver(sim.Message{Type: MsgBaton, From: iP3})
	f.Check(simtest.Want{Rules: []string{"EX-4"}, Effects: []string{"enter"}, State: `{"state":"HELD","keeper":3}`})
}

// The keeper asks itself and lends itself the baton: three rules, no message.
func TestEX4_TheKeeperEntersWithoutAMessage(t *testing.T) {
	f := start(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"EX-2", "EX-3", "EX-4"}, Effects: []string{"enter"},
		State: `{"state":"HELD","keeper":3,"baton":false,"queue":[]}`})
}

func TestEX5_GivesTheBatonBack(t *testing.T) {
	f := start(t, iP7)
	f.Step(sim.Input{Kind: sim.Request})
	f.Deliver(sim.Message{Type: MsgBaton, From: iP3})
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{Rules: []string{"EX-5"}, Sent: []string{"BATON->1"}, Effects: []string{"exit"}, State: `{"state":"RELEASED","keeper":3}`})
}

func TestEX6_TheKeeperLendsToTheNextInLine(t *testing.T) {
	f := start(t, iP3)
	f.Deliver(sim.Message{Type: MsgAsk, From: iP7})
	f.Deliver(sim.Message{Type: MsgAsk, From: iP5})
	f.Deliver(sim.Message{Type: MsgBaton, From: iP7})
	f.Check(simtest.Want{Rules: []string{"EX-6"}, Sent: []string{"BATON->2"}, State: `{"state":"RELEASED","keeper":3,"baton":false,"queue":[]}`})
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func TestParseParams(t *testing.T) {
	simtest.ParseTable(t, ParseParams, ids, []simtest.ParseCase{
		{Raw: "", Want: Params{Keeper: 7}},
		{Raw: `{"keeper": 5}`, Want: Params{Keeper: 5}},
		{Raw: `{"keeper": 4}`, Err: "params.keeper: 4 is not a node id"},
		{Raw: `{"keeper": "3"}`, Err: "params.keeper: got string"},
		{Raw: `{"holder": 3}`, Err: "params.holder: unknown field (allowed: keeper)"},
	})
}

// In the kernel: every request of a seed sweep is served, one process at a time, and
// an entry costs the keeper nothing and anyone else three messages.
func TestSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		n := 2 + int(seed%6)
		cfg := sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Seed: seed, Params: DefaultParams(simtest.IDs(n)),
			Network: sim.Network{DelayMin: 1, DelayMax: 4, FIFO: seed%2 == 0}, CS: 2, Until: 2000,
			Actions: simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 100})}
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Fatalf("seed %d: %v", seed, v)
		}
		if u := simtest.Unserved(evs, n); len(u) > 0 {
			t.Fatalf("seed %d: requests never served: %v", seed, u)
		}
		if sent, most := simtest.Count(evs, sim.EvSend), 3*simtest.Count(evs, sim.EvEnter); sent > most {
			t.Fatalf("seed %d: %d messages, more than 3 an entry (%d)", seed, sent, most)
		}
	}
}
