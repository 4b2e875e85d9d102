package algorithms

// This file is the worked example of docs/adding-an-algorithm.md: a complete, tiny
// algorithm added the way the guide says, through the same contract as the registered
// ones, with one test per rule and a run in the kernel. If the contract changes and
// the guide goes stale, this file stops compiling or its tests fail.
//
// The algorithm, "baton": one baton, kept by a keeper process, is the right to enter
// the CS. A process asks the keeper for it, gets it, and gives it back on leaving; the
// keeper lends it out in the order it was asked.

import (
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Message types.
const (
	msgAsk   = "ASK"
	msgBaton = "BATON"
)

// keeperParam declares the one setting; its Default drives DefaultParams too.
var keeperParam = sim.Param{Name: "keeper", Kind: sim.ParamNode, Default: sim.FirstID,
	Doc: "the process that keeps the baton and lends it out"}

// batonParams are the settings, tagged with their params field names.
type batonParams struct {
	Keeper int `param:"keeper"`
}

func defaultBatonParams(ids []int) batonParams {
	return batonParams{Keeper: params.DefaultID(keeperParam, ids)}
}

// Example registers the algorithm. Labels are the project's own scheme (EX-1 ...), so
// nobody takes them for the notes' labels.
var Example = sim.Spec{
	Slug:    "baton",
	Title:   "Baton (example)",
	Family:  sim.Mutex,
	Summary: "A keeper lends one baton out in the order it was asked; whoever has the baton may enter.",
	Rules: []sim.Rule{
		{Label: "EX-1", Group: "Initialisation", Lines: []string{
			"state := RELEASED",
			"if i is the keeper: baton := here; queue := empty"},
			Says: "starts outside the CS; the keeper starts with the baton"},
		{Label: "EX-2", Group: "Asking for the CS", Lines: []string{
			"state := WANTED",
			"send ASK to the keeper   // the keeper asks itself, no message"},
			Says: "wants the CS and asks the keeper for the baton"},
		{Label: "EX-3", Group: "Keeper: ASK from j", Lines: []string{
			"append j to queue",
			"if baton = here: LEND"},
			Says: "the keeper queues the asker and lends the baton if it has it"},
		{Label: "EX-4", Group: "Receiving BATON", Lines: []string{
			"state := HELD; enter the CS"},
			Says: "has the baton and enters the CS"},
		{Label: "EX-5", Group: "Leaving the CS", Lines: []string{
			"state := RELEASED",
			"send BATON to the keeper   // the keeper keeps it, no message"},
			Says: "leaves the CS and gives the baton back"},
		{Label: "EX-6", Group: "Keeper: BATON back", Lines: []string{
			"baton := here; LEND",
			"LEND: if queue is not empty: baton := away; send BATON to the head of queue"},
			Says: "the keeper has the baton back and lends it to the next in line"},
	},
	Vars: []sim.Var{
		{Name: "state", Doc: "RELEASED, WANTED or HELD"},
		{Name: "keeper", Doc: "id of the keeper"},
		{Name: "queue", Doc: "keeper only: ids waiting for the baton, first asked first"},
	},
	Messages: []sim.MessageType{
		{Name: msgAsk, Label: "ASK", Doc: "asks the keeper for the baton"},
		{Name: msgBaton, Label: "BATON", Doc: "the baton: lent by the keeper, or given back to it"},
	},
	Costs: []sim.Cost{
		{Name: "messages per CS entry", Formula: "3 (ASK, BATON, BATON back); 0 for the keeper",
			Value: func(int) float64 { return 3 }},
	},
	Defaults:    sim.Defaults{Nodes: 4, Delay: [2]int{1, 3}, CS: 2, Until: 200},
	Params:      []sim.Param{keeperParam},
	Stage:       sim.Stage{Mark: "keeper", MarkLabel: "keeper"},
	ParseParams: params.Parser([]sim.Param{keeperParam}, defaultBatonParams),
	New: func(self int, setup *sim.Setup) sim.Node {
		p := params.Of(setup, defaultBatonParams(setup.IDs))
		return &baton{self: self, ids: setup.IDs, keeper: params.Holder(setup.IDs, p.Keeper, keeperParam)}
	},
}

type baton struct {
	self, keeper int   // indexes
	ids          []int // shared, never written
	state        string
	here         bool  // keeper only: the baton is here
	queue        []int // keeper only: indexes
}

func (n *baton) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init, sim.Recover:
		ctx.Rule("EX-1")
		n.state, n.here, n.queue = cs.Released, n.self == n.keeper, nil
	case sim.Request:
		if n.state == cs.Released {
			ctx.Rule("EX-2")
			n.state = cs.Wanted
			n.send(ctx, n.keeper, msgAsk)
		}
	case sim.Release:
		if n.state == cs.Held {
			ctx.Rule("EX-5")
			n.state = cs.Released
			ctx.Exit()
			n.send(ctx, n.keeper, msgBaton)
		}
	case sim.Deliver:
		n.receive(ctx, in.Msg.Type, in.Msg.From)
	}
}

// send delivers to itself at once, since a process sends the network nothing for
// itself.
func (n *baton) send(ctx *sim.Context, to int, typ string) {
	if to == n.self {
		n.receive(ctx, typ, n.self)
		return
	}
	ctx.Send(to, sim.Message{Type: typ})
}

// receive handles a message from node from (itself, for what it sends itself). A
// baton from the keeper to a process that wants it is a loan; any other baton reaching
// the keeper is one given back.
func (n *baton) receive(ctx *sim.Context, typ string, from int) {
	switch {
	case typ == msgAsk:
		ctx.Rule("EX-3")
		n.queue = append(n.queue, from)
		n.lend(ctx)
	case typ == msgBaton && from == n.keeper && n.state == cs.Wanted:
		ctx.Rule("EX-4")
		n.state = cs.Held
		ctx.Enter()
	case typ == msgBaton && n.self == n.keeper:
		ctx.Rule("EX-6")
		n.here = true
		n.lend(ctx)
	}
}

func (n *baton) lend(ctx *sim.Context) {
	if !n.here || len(n.queue) == 0 {
		return
	}
	j := n.queue[0]
	n.queue, n.here = slices.Delete(n.queue, 0, 1), false
	n.send(ctx, j, msgBaton)
}

func (n *baton) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
}

func (n *baton) Encode(w *sim.StateWriter) {
	w.Str("state", n.state)
	w.Int("keeper", n.ids[n.keeper])
	if n.self == n.keeper {
		w.Ints("queue", nodeid.All(n.ids, n.queue))
	}
}

// One test per rule: each drives one process by hand and checks the rules fired, the
// messages sent and the state.

var batonIDs = []int{7, 3, 5}

func startBaton(t *testing.T, self int) *simtest.Fixture {
	t.Helper()
	p, err := Example.ParseParams([]byte(`{"keeper": 3}`), batonIDs)
	if err != nil {
		t.Fatal(err)
	}
	return simtest.Start(t, &Example, self, &sim.Setup{IDs: batonIDs, Params: p})
}

func TestEX1_KeeperStartsWithTheBaton(t *testing.T) {
	f := startBaton(t, 1)
	f.WantRules("EX-1")
	f.WantState(`{"state":"RELEASED","keeper":3,"queue":[]}`)
	startBaton(t, 0).WantState(`{"state":"RELEASED","keeper":3}`)
}

func TestEX2_AsksTheKeeper(t *testing.T) {
	f := startBaton(t, 0)
	f.Step(sim.Input{Kind: sim.Request})
	f.WantRules("EX-2")
	f.WantSent("ASK->1")
	f.WantState(`{"state":"WANTED","keeper":3}`)
}

func TestEX3_KeeperLendsOrQueues(t *testing.T) {
	f := startBaton(t, 1)
	f.Deliver(sim.Message{Type: msgAsk, From: 0})
	f.WantRules("EX-3")
	f.WantSent("BATON->0")
	f.Deliver(sim.Message{Type: msgAsk, From: 2})
	f.WantRules("EX-3")
	f.WantSent()
	f.WantState(`{"state":"RELEASED","keeper":3,"queue":[5]}`)
}

func TestEX4_EntersWithTheBaton(t *testing.T) {
	f := startBaton(t, 0)
	f.Step(sim.Input{Kind: sim.Request})
	f.Deliver(sim.Message{Type: msgBaton, From: 1})
	f.WantRules("EX-4")
	f.WantEffects("enter")
}

func TestEX5_GivesTheBatonBack(t *testing.T) {
	f := startBaton(t, 0)
	f.Step(sim.Input{Kind: sim.Request})
	f.Deliver(sim.Message{Type: msgBaton, From: 1})
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules("EX-5")
	f.WantSent("BATON->1")
	f.WantState(`{"state":"RELEASED","keeper":3}`)
}

func TestEX6_KeeperLendsToTheNextInLine(t *testing.T) {
	f := startBaton(t, 1)
	f.Deliver(sim.Message{Type: msgAsk, From: 0})
	f.Deliver(sim.Message{Type: msgAsk, From: 2})
	f.Deliver(sim.Message{Type: msgBaton, From: 0})
	f.WantRules("EX-6")
	f.WantSent("BATON->2")
	f.WantState(`{"state":"RELEASED","keeper":3,"queue":[]}`)
}

// Every rule has a test above; the guide asks for it and this keeps it so.
func TestExampleRulesAllTested(t *testing.T) { simtest.EveryRuleHasATest(t, &Example) }

// The kernel runs it like any registered algorithm: every request is served, one
// process at a time, and the trace names its rules.
func TestExampleRunsInTheKernel(t *testing.T) {
	p, err := Example.ParseParams(nil, batonIDs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Spec: &Example, IDs: batonIDs, Params: p, Seed: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, CS: 2, Until: 200}
	for i := range batonIDs {
		cfg.Actions = append(cfg.Actions, sim.Action{At: 1, Do: sim.ActRequest, Node: i})
	}
	evs := simtest.Run(t, cfg)
	if v := simtest.Violations(evs); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	if got := simtest.Count(evs, sim.EvEnter); got != len(batonIDs) {
		t.Errorf("%d entries, want %d", got, len(batonIDs))
	}
	if got := simtest.CountMsgs(evs, msgAsk); got != len(batonIDs)-1 {
		t.Errorf("%d ASK messages, want %d (the keeper asks itself)", got, len(batonIDs)-1)
	}
	// Left out, the keeper is the first id: node index 0 asks itself and lends itself
	// the baton without a message.
	if got := simtest.Rules(evs, 0); !slices.Equal(got[:4], []string{"EX-1", "EX-2", "EX-3", "EX-4"}) {
		t.Errorf("the keeper's first rules are %v, want EX-1 EX-2 EX-3 EX-4", got)
	}
}
