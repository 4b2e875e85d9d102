package raymond

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Unit tests use ids that are not the indexes, so a mix-up shows. The default tree over
// ids 3, 9, 1, 7, 5 (indexes 0..4) is
//
//	      P3
//	     /  \
//	   P9    P1
//	  /  \
//	P7    P5
var unitIDs = []int{3, 9, 1, 7, 5}

const iP3, iP9, iP1, iP7, iP5 = 0, 1, 2, 3, 4

// fixture is the shared hand-driven node, with the node typed for WaitingFor and Clone.
type fixture struct {
	*simtest.Fixture
	n *node
}

func newFixture(t *testing.T, self int) *fixture {
	t.Helper()
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: unitIDs})
	return &fixture{Fixture: sf, n: sf.Node.(*node)} // messages show as "TYPE->index"
}

func (f *fixture) deliver(typ string, from int) {
	f.Deliver(sim.Message{Type: typ, From: from})
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func st(state string, holder int, queue string, asked bool, parent int) string {
	return fmt.Sprintf(`{"state":%q,"holder":%d,"queue":%s,"asked":%t,"parent":%d}`, state, holder, queue, asked, parent)
}

func TestRY1_EveryonePointsTowardsTheRoot(t *testing.T) {
	for _, tc := range []struct {
		self          int
		holder, paren int
	}{{iP3, 3, -1}, {iP9, 3, 3}, {iP1, 3, 3}, {iP7, 9, 9}, {iP5, 9, 9}} {
		f := newFixture(t, tc.self)
		f.Check(simtest.Want{Rules: []string{"RY-1"}, State: st(cs.Released, tc.holder, "[]", false, tc.paren)})
	}
}

func TestRY2_RequestWithoutTheTokenAsksTheHolder(t *testing.T) {
	f := newFixture(t, iP7)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"RY-2", "RY-7"}, Sent: []string{"REQUEST->1"}, State: st(cs.Requested, 9, "[7]", true, 9)})
}

func TestRY2_RequestWithTheTokenEntersAtOnce(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"RY-2", "RY-6"}, Effects: []string{"enter"}, State: st(cs.Held, 3, "[]", false, -1)})
}

func TestRY3(t *testing.T) {
	tests := []struct {
		name  string
		self  int
		setup func(f *fixture)
		from  int
		rules []string
		sent  []string
		state string
	}{
		{name: "FirstRequestIsPassedUp", self: iP9, from: iP7,
			rules: []string{"RY-3", "RY-7"}, sent: []string{"REQUEST->0"}, state: st(cs.Released, 3, "[7]", true, 3)},
		{name: "LaterRequestsOnlyQueueWhileAsked", self: iP9, from: iP5,
			setup: func(f *fixture) { f.deliver(MsgRequest, iP7) },
			rules: []string{"RY-3"}, state: st(cs.Released, 3, "[7,5]", true, 3)},
		{name: "IdleHolderSendsTheToken", self: iP3, from: iP1,
			rules: []string{"RY-3", "RY-6"}, sent: []string{"PRIVILEGE->2"}, state: st(cs.Released, 1, "[]", false, -1)},
		{name: "HolderInTheCSQueues", self: iP3, from: iP1,
			setup: func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			rules: []string{"RY-3"}, state: st(cs.Held, 3, "[1]", false, -1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.deliver(MsgRequest, tc.from)
			f.Check(simtest.Want{Rules: tc.rules, Sent: tc.sent, State: tc.state})
		})
	}
}

func TestRY4(t *testing.T) {
	t.Run("TokenForItselfEnters", func(t *testing.T) {
		f := newFixture(t, iP7)
		f.Step(sim.Input{Kind: sim.Request})
		f.deliver(MsgPrivilege, iP9)
		f.Check(simtest.Want{Rules: []string{"RY-4", "RY-6"}, Effects: []string{"enter"}, State: st(cs.Held, 7, "[]", false, 9)})
	})
	t.Run("TokenForTheHeadGoesOnAndTheRestAsksForItBack", func(t *testing.T) {
		f := newFixture(t, iP9)
		f.deliver(MsgRequest, iP7)
		f.deliver(MsgRequest, iP5)
		f.Step(sim.Input{Kind: sim.Request})
		f.deliver(MsgPrivilege, iP3)
		// P7 asked first: the token goes down to it, and P9 asks P7 for it back on
		// behalf of P5 and itself.
		f.Check(simtest.Want{Rules: []string{"RY-4", "RY-6", "RY-7"}, Sent: []string{"PRIVILEGE->3", "REQUEST->3"},
			State: st(cs.Requested, 7, "[5,9]", true, 3)})
	})
}

func TestRY5_LeavingHandsTheTokenToTheHeadOfTheQueue(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgRequest, iP1)
	f.deliver(MsgRequest, iP9)
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{Rules: []string{"RY-5", "RY-6", "RY-7"}, Sent: []string{"PRIVILEGE->2", "REQUEST->2"}, Effects: []string{"exit"},
		State: st(cs.Released, 1, "[9]", true, -1)})
}

func TestRY5_LeavingWithNobodyQueuedKeepsTheToken(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{Rules: []string{"RY-5"}, Effects: []string{"exit"}, State: st(cs.Released, 3, "[]", false, -1)})
}

func TestRY6_AssignResetsAsked(t *testing.T) {
	f := newFixture(t, iP1)
	f.Step(sim.Input{Kind: sim.Request}) // asked := true
	f.deliver(MsgPrivilege, iP3)
	f.Check(simtest.Want{Rules: []string{"RY-4", "RY-6"}, Effects: []string{"enter"}, State: st(cs.Held, 1, "[]", false, 3)})
}

func TestRY7_AsksOnlyOnceUntilTheTokenComes(t *testing.T) {
	f := newFixture(t, iP9)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"RY-2", "RY-7"}, Sent: []string{"REQUEST->0"}, State: st(cs.Requested, 3, "[9]", true, 3)})
	f.deliver(MsgRequest, iP5)
	f.Check(simtest.Want{Rules: []string{"RY-3"}, State: st(cs.Requested, 3, "[9,5]", true, 3)})
}

func TestRY8_RecoveredProcessHasNoTokenAndPointsAtItsParent(t *testing.T) {
	for _, tc := range []struct {
		self   int
		holder int
	}{{iP9, 3}, {iP3, 9}} { // the recovered root points at its first child
		sf := simtest.NewFixture(t, Spec(), tc.self, &sim.Setup{IDs: unitIDs})
		f := &fixture{Fixture: sf, n: sf.Node.(*node)}
		f.Step(sim.Input{Kind: sim.Recover})
		parent := 3
		if tc.self == iP3 {
			parent = -1
		}
		f.Check(simtest.Want{Rules: []string{"RY-8"}, State: st(cs.Released, tc.holder, "[]", false, parent)})
	}
}

func TestWaitingForTheHolder(t *testing.T) {
	f := newFixture(t, iP7)
	if got := f.n.WaitingFor(); got != nil {
		t.Fatalf("idle: waiting for %v, want nobody", got)
	}
	f.Step(sim.Input{Kind: sim.Request})
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{iP9}) {
		t.Fatalf("waiting for %v, want [P9]", got)
	}
	f.deliver(MsgPrivilege, iP9)
	if got := f.n.WaitingFor(); got != nil {
		t.Fatalf("in the CS: waiting for %v, want nobody", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, iP9)
	f.deliver(MsgRequest, iP7)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(MsgRequest, iP5)
	f.deliver(MsgPrivilege, iP3)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

func TestParseParams(t *testing.T) {
	ids := []int{3, 9, 1, 7}
	for _, tc := range []struct {
		raw     string
		want    []int // parent index per index
		wantErr string
	}{
		{"", []int{-1, 0, 0, 1}, ""},
		{"null", []int{-1, 0, 0, 1}, ""},
		{"{}", []int{-1, 0, 0, 1}, ""},
		{`{"tree": null}`, []int{-1, 0, 0, 1}, ""},
		{`{"tree": {"9": 3, "1": 9, "7": 1}}`, []int{-1, 0, 1, 2}, ""},            // a chain
		{`{"tree": {"3": 7, "9": 7, "1": 7, "7": null}}`, []int{3, 3, 3, -1}, ""}, // a star at P7
		{`{"tree": {"3": 9, "1": 9, "7": 9}}`, []int{1, -1, 1, 1}, ""},
		{`{"tree": []}`, nil, `params.tree: want an object mapping each id to its parent's id`},
		{`{"tree": 5}`, nil, `params.tree: want an object`},
		{`{"tree": {"x": 3}}`, nil, `params.tree.x: not a node id (ids: 3 9 1 7)`},
		{`{"tree": {"4": 3}}`, nil, `params.tree.4: not a node id`},
		{`{"tree": {"9": 3, "9": 1, "1": 3, "7": 3}}`, nil, `params.tree.9: listed twice`},
		{`{"tree": {"9": "3", "1": 3, "7": 3}}`, nil, `params.tree.9: got "3", want the parent's id (an integer) or null for the root`},
		{`{"tree": {"9": 3.5, "1": 3, "7": 3}}`, nil, `params.tree.9: got 3.5, want the parent's id`},
		{`{"tree": {"9": 4, "1": 3, "7": 3}}`, nil, `params.tree.9: parent 4 is not a node id (ids: 3 9 1 7)`},
		{`{"tree": {"9": 9, "1": 3, "7": 3}}`, nil, `params.tree.9: a node cannot be its own parent`},
		{`{"tree": {"9": 3, "1": 3}}`, nil, `params.tree: 2 nodes have no parent (3 7); exactly one, the root, may have none`},
		{`{"tree": {"3": 9, "9": 1, "1": 3, "7": 3}}`, nil, `params.tree: 0 nodes have no parent ()`},
		{`{"tree": {"9": 1, "1": 9, "7": 3}}`, nil, `params.tree: the parents form a cycle (9 -> 1 -> 9) instead of leading to the root 3`},
		{`{"parent": {}}`, nil, `params.parent: unknown field (allowed: tree)`},
		{`[1]`, nil, `params: got array, want an object with tree`},
		{`{"tree": {}} {}`, nil, `params: must be a single JSON object`},
		{`{"tree": {"9": 3,}}`, nil, `params: `},
	} {
		var raw []byte
		if tc.raw != "" {
			raw = []byte(tc.raw)
		}
		got, err := ParseParams(raw, ids)
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("ParseParams(%s) error = %v, want one starting %q", tc.raw, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseParams(%s): %v", tc.raw, err)
			continue
		}
		if p := got.(Params); !slices.Equal(p.Parent, tc.want) {
			t.Errorf("ParseParams(%s) = %v, want parents %v", tc.raw, p.Parent, tc.want)
		}
	}
}

// --- whole runs through the kernel ---

func config(seed uint64, n int, p any, acts ...sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Params: p, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, CS: 2, Until: 100_000, Actions: acts}
}

func request(at, i int) sim.Action { return sim.Action{At: at, Do: sim.ActRequest, Node: i} }

// depth returns the depth of node k in the balanced default tree.
func depth(k int) int { return int(math.Log2(float64(k + 1))) }

// distance between nodes a and b of the balanced default tree.
func distance(a, b int) int {
	d := 0
	for a != b {
		if depth(a) >= depth(b) {
			a = (a - 1) / 2
		} else {
			b = (b - 1) / 2
		}
		d++
	}
	return d
}

// On a light load (one request at a time) an entry costs exactly 2d messages, d the tree
// distance from the requester to the last user of the token.
func TestRun_LightLoadCostsTwiceTheTreeDistance(t *testing.T) {
	const n = 15
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		var acts []sim.Action
		var who []int
		for k := 0; k < 20; k++ {
			i := r.IntN(n)
			who = append(who, i)
			acts = append(acts, request(100*k, i))
		}
		evs := simtest.Run(t, config(seed, n, nil, acts...))
		last, k, prev := 0, 0, 0 // the root holds the token first
		for _, e := range evs {
			if e.Type != sim.EvEnter {
				continue
			}
			got := sendsBetween(evs, last, int(e.Seq))
			if want := 2 * distance(prev, who[k]); got != want {
				t.Fatalf("seed %d: entry %d by P%d after P%d cost %d messages, want 2d = %d", seed, k, who[k], prev, got, want)
			}
			last, prev = int(e.Seq), who[k]
			k++
		}
		if k != len(who) {
			t.Fatalf("seed %d: %d entries, want %d", seed, k, len(who))
		}
	}
}

func sendsBetween(evs []sim.Event, from, to int) int {
	c := 0
	for _, e := range evs[from:to] {
		if e.Type == sim.EvSend {
			c++
		}
	}
	return c
}

// The notes: O(log N) messages per entry on a balanced tree. Average over a random light
// workload: at most 2·ceil(log2 N) + 3 for N = 7, 15, 31, within the worst case 4⌊log2 N⌋,
// and growing with log N, not with N.
func TestRun_LogarithmicMessagesPerEntry(t *testing.T) {
	avg := map[int]float64{}
	for _, n := range []int{7, 15, 31, 63} {
		msgs, entries := 0, 0
		for seed := uint64(1); seed <= 10; seed++ {
			r := rand.New(rand.NewPCG(seed, uint64(n)))
			var acts []sim.Action
			for k := 0; k < 60; k++ {
				acts = append(acts, request(100*k+r.IntN(50), r.IntN(n)))
			}
			evs := simtest.Run(t, config(seed, n, nil, acts...))
			if v := simtest.Violations(evs); len(v) > 0 {
				t.Fatalf("N=%d seed %d: %v", n, seed, v)
			}
			msgs += simtest.Count(evs, sim.EvSend)
			entries += simtest.Count(evs, sim.EvEnter)
		}
		avg[n] = float64(msgs) / float64(entries)
		logN := math.Ceil(math.Log2(float64(n)))
		if limit := 2*logN + 3; avg[n] > limit {
			t.Errorf("N=%d: %.2f messages per entry, want at most 2·ceil(log2 N)+3 = %.0f", n, avg[n], limit)
		}
		if worst := Spec().Costs[1].Value(n); avg[n] > worst {
			t.Errorf("N=%d: %.2f messages per entry, more than the worst case %.0f", n, avg[n], worst)
		}
		t.Logf("N=%d: %.2f messages per entry (2·ceil(log2 N) = %.0f)", n, avg[n], 2*logN)
	}
	// Each doubling of N adds about a constant (one level deeper on both paths: about 3
	// messages): logarithmic growth. Linear growth would double the increment with
	// every doubling.
	var inc []float64
	for _, pair := range [][2]int{{7, 15}, {15, 31}, {31, 63}} {
		d := avg[pair[1]] - avg[pair[0]]
		if d < 1 || d > 5 {
			t.Errorf("messages(N=%d) - messages(N=%d) = %.2f, want a few messages per doubling", pair[1], pair[0], d)
		}
		inc = append(inc, d)
	}
	if r := slices.Max(inc) / slices.Min(inc); r > 2 {
		t.Errorf("increments per doubling of N %v vary by %.2f×: not logarithmic", inc, r)
	}
}

// Heavy load: everyone asks at once. The token visits each requester once; the cost
// per entry falls well below the light-load figure.
func TestRun_HeavyLoadIsCheaperPerEntry(t *testing.T) {
	const n = 31
	var acts []sim.Action
	for round := 0; round < 5; round++ {
		for i := 0; i < n; i++ {
			acts = append(acts, request(round*1000, i))
		}
	}
	evs := simtest.Run(t, config(1, n, nil, acts...))
	if got := simtest.Count(evs, sim.EvEnter); got != 5*n {
		t.Fatalf("%d entries, want %d", got, 5*n)
	}
	if per := float64(simtest.Count(evs, sim.EvSend)) / float64(5*n); per > 4.5 {
		t.Errorf("%.2f messages per entry under heavy load, want about 4 at most", per)
	}
}

// The tree in params is the one used: on a chain, the last node's request climbs every
// edge.
func TestRun_ChainTreeFromParams(t *testing.T) {
	p := simtest.Params(t, Spec(), `{"tree": {"1": 0, "2": 1, "3": 2, "4": 3}}`, simtest.IDs(5))
	evs := simtest.Run(t, config(1, 5, p, request(0, 4)))
	if got, want := simtest.Count(evs, sim.EvSend), 8; got != want {
		t.Fatalf("%d messages, want 2·4 = %d", got, want)
	}
	var path []int
	for _, e := range evs {
		if e.Type == sim.EvSend && e.Msg.Type == MsgRequest {
			path = append(path, e.Msg.To)
		}
	}
	if !slices.Equal(path, []int{3, 2, 1, 0}) {
		t.Fatalf("REQUEST went to %v, want up the chain 3, 2, 1, 0", path)
	}
}

// randomTree draws a random tree over n nodes: each node after the first hangs under a
// random earlier one, then the labels are shuffled.
func randomTree(r *rand.Rand, n int) Params {
	perm := r.Perm(n)
	parent := make([]int, n)
	parent[perm[0]] = -1
	for k := 1; k < n; k++ {
		parent[perm[k]] = perm[r.IntN(k)]
	}
	return Params{Parent: parent}
}

// Seed sweep: random N, trees (balanced or random), delays, FIFO-ness and workloads: the
// CS stays exclusive, every request is granted and nothing deadlocks.
func TestRun_SeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(20)
		var p any
		if r.IntN(2) == 0 {
			p = randomTree(r, n)
		}
		acts := simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 200})
		cfg := config(seed, n, p, acts...)
		cfg.Network = sim.Network{DelayMin: r.IntN(3), DelayMax: 3 + r.IntN(6), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(4)
		cfg.Until = 20_000
		cfg.Pending = 100_000
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Fatalf("seed %d (N=%d): violations %v", seed, n, v)
		}
		if u := simtest.Unserved(evs, n); len(u) > 0 {
			t.Fatalf("seed %d (N=%d): requests never granted: %v", seed, n, u)
		}
		if r, pr := simtest.CountMsgs(evs, MsgRequest), simtest.CountMsgs(evs, MsgPrivilege); r != pr {
			t.Fatalf("seed %d (N=%d): %d REQUEST but %d PRIVILEGE: every request should be answered once", seed, n, r, pr)
		}
	}
}

// The algorithm does not survive failures: a recovered process points back at its tree
// parent while the token lies elsewhere, and the pointers can form a cycle, which the
// deadlock monitor names through WaitingFor.
func TestRun_RecoveryCanLeadRequestsInACircle(t *testing.T) {
	// Default tree over 0..4 (0 root; 1 and 2 its children; 3 and 4 under 1). P3 takes the
	// token, so 1 points at 3 and 0 at 1. P1 crashes and recovers pointing at 0: then a
	// request of P0 goes to P1, which sends it back to P0.
	cfg := config(1, 5, nil, request(0, 3),
		sim.Action{At: 20, Do: sim.ActCrash, Node: 1}, sim.Action{At: 21, Do: sim.ActRecover, Node: 1},
		request(30, 0))
	cfg.Until = 300
	evs := simtest.Run(t, cfg)
	found := false
	for _, e := range evs {
		found = found || (e.Type == sim.EvViolation && e.Property == sim.PropDeadlock && strings.Contains(e.Detail, "wait-for cycle"))
	}
	if !found {
		t.Fatalf("violations %v, want a deadlock with a wait-for cycle", simtest.Violations(evs))
	}
}
