package suzukikasami

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Unit tests use ids that are not the indexes, so a mix-up shows:
// index 0 -> P3, 1 -> P9, 2 -> P1, 3 -> P7. P3 (the first id) holds the token by default.
var unitIDs = []int{3, 9, 1, 7}

const iP3, iP9, iP1, iP7 = 0, 1, 2, 3

// fixture is the shared hand-driven node, with the node typed for the tests that set
// its fields.
type fixture struct {
	*simtest.Fixture
	n *node
}

func newFixture(t *testing.T, self int, params string) *fixture {
	t.Helper()
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: unitIDs, Params: simtest.Params(t, Spec(), params, unitIDs)})
	sf.Show = show
	return &fixture{Fixture: sf, n: sf.Node.(*node)}
}

func (f *fixture) request(from, sn int) {
	f.Deliver(sim.Message{Type: MsgRequest, From: from, Arg: sn})
}

// token delivers a TOKEN with LN (ids order) and Q (ids).
func (f *fixture) token(from int, ln, q []int) {
	f.Deliver(sim.Message{Type: MsgToken, From: from, Vec: ln, Queue: q})
}

// show writes a message as "REQUEST->index(sn)" or "TOKEN->index LN=[..] Q=[..]".
func show(m sim.Message) string {
	if m.Type == MsgRequest {
		return fmt.Sprintf("REQUEST->%d(%d)", m.To, m.Arg)
	}
	return fmt.Sprintf("TOKEN->%d LN=%v Q=%v", m.To, m.Vec, m.Queue)
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func st(state string, token bool, rn, ln, q string) string {
	return fmt.Sprintf(`{"state":%q,"token":%t,"RN":%s,"LN":%s,"Q":%s}`, state, token, rn, ln, q)
}

func TestSK1_OneProcessStartsWithTheToken(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.Check(simtest.Want{Rules: []string{"SK-1"}, State: st(cs.Released, true, "[0,0,0,0]", "[0,0,0,0]", "[]")})
	g := newFixture(t, iP9, "")
	g.Check(simtest.Want{Rules: []string{"SK-1"}, State: st(cs.Released, false, "[0,0,0,0]", "[]", "[]")})
	h := newFixture(t, iP7, `{"holder": 7}`)
	h.Check(simtest.Want{Rules: []string{"SK-1"}, State: st(cs.Released, true, "[0,0,0,0]", "[0,0,0,0]", "[]")})
}

func TestSK2_RequestBroadcastsTheNextNumber(t *testing.T) {
	f := newFixture(t, iP1, "")
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"SK-2"}, Sent: []string{"REQUEST->0(1)", "REQUEST->1(1)", "REQUEST->3(1)"},
		State: st(cs.Requested, false, "[0,0,1,0]", "[]", "[]")})
}

func TestSK2_HolderEntersWithoutAMessage(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"SK-2"}, Effects: []string{"enter"}, State: st(cs.Held, true, "[0,0,0,0]", "[0,0,0,0]", "[]")})
}

func TestSK3(t *testing.T) {
	tests := []struct {
		name  string
		self  int
		setup func(f *fixture)
		from  int
		sn    int
		sent  []string
		state string
	}{
		{name: "NonHolderOnlyRecords", self: iP9, from: iP1, sn: 1,
			state: st(cs.Released, false, "[0,0,1,0]", "[]", "[]")},
		{name: "IdleHolderSendsTheToken", self: iP3, from: iP1, sn: 1,
			sent:  []string{"TOKEN->2 LN=[0 0 0 0] Q=[]"},
			state: st(cs.Released, false, "[0,0,1,0]", "[]", "[]")},
		{name: "HolderInTheCSKeepsIt", self: iP3, from: iP1, sn: 1,
			setup: func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			state: st(cs.Held, true, "[0,0,1,0]", "[0,0,0,0]", "[]")},
		{name: "OutdatedRequestIsIgnored", self: iP3, from: iP1, sn: 2,
			setup: func(f *fixture) {
				// P1's request 3 has been served (LN[P1] = 3) and the token came back:
				// request 2 arrives late, overtaken.
				f.n.ln[iP1], f.n.rn[iP1] = 3, 3
			},
			state: st(cs.Released, true, "[0,0,3,0]", "[0,0,3,0]", "[]")},
		{name: "KeepsTheHighestNumber", self: iP9, from: iP1, sn: 1,
			setup: func(f *fixture) { f.request(iP1, 4) },
			state: st(cs.Released, false, "[0,0,4,0]", "[]", "[]")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self, "")
			if tc.setup != nil {
				tc.setup(f)
			}
			f.request(tc.from, tc.sn)
			f.Check(simtest.Want{Rules: []string{"SK-3"}, Sent: tc.sent, State: tc.state})
		})
	}
}

func TestSK4_TokenLetsTheRequesterIn(t *testing.T) {
	f := newFixture(t, iP1, "")
	f.Step(sim.Input{Kind: sim.Request})
	f.token(iP3, []int{2, 0, 0, 1}, []int{7})
	f.Check(simtest.Want{Rules: []string{"SK-4"}, Effects: []string{"enter"}, State: st(cs.Held, true, "[0,0,1,0]", "[2,0,0,1]", "[7]")})
}

func TestSK5(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *fixture)
		sent  []string
		state string
	}{
		{name: "NobodyWaitsKeepsTheToken",
			state: st(cs.Released, true, "[0,0,1,0]", "[0,0,1,0]", "[]")},
		{name: "QueuesOutstandingRequestsFromTheNextProcessOnAndPassesToTheHead",
			setup: func(f *fixture) {
				f.request(iP3, 1) // index 0: after P7 in the round from P1
				f.request(iP7, 1) // index 3: first after P1
				f.request(iP9, 1)
			},
			// From P1 (index 2) the round visits 3 (P7), 0 (P3), 1 (P9).
			sent:  []string{"TOKEN->3 LN=[0 0 1 0] Q=[3 9]"},
			state: st(cs.Released, false, "[1,1,1,1]", "[]", "[]")},
		{name: "AlreadyQueuedAndServedAreSkipped",
			setup: func(f *fixture) {
				f.n.q = []int{iP9}
				f.n.ln[iP3] = 1
				f.request(iP3, 1) // served already: LN = RN
				f.request(iP9, 1) // queued already
				f.request(iP7, 1)
			},
			sent:  []string{"TOKEN->1 LN=[1 0 1 0] Q=[7]"},
			state: st(cs.Released, false, "[1,1,1,1]", "[]", "[]")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP1, "")
			f.Step(sim.Input{Kind: sim.Request})
			f.token(iP3, []int{0, 0, 0, 0}, nil)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.Step(sim.Input{Kind: sim.Release})
			f.Check(simtest.Want{Rules: []string{"SK-5"}, Sent: tc.sent, Effects: []string{"exit"}, State: tc.state})
		})
	}
}

func TestSK6_RecoveredProcessHasNoTokenAndPassesOneOn(t *testing.T) {
	// The kernel rebuilds a crashed node with New, then gives it Recover.
	sf := simtest.NewFixture(t, Spec(), iP3, &sim.Setup{IDs: unitIDs})
	sf.Show = show
	f := &fixture{Fixture: sf, n: sf.Node.(*node)}
	f.Step(sim.Input{Kind: sim.Recover})
	f.Check(simtest.Want{Rules: []string{"SK-6"}, State: st(cs.Released, false, "[0,0,0,0]", "[]", "[]")})
	// A token sent to its earlier incarnation goes on to the head of the queue.
	f.token(iP9, []int{1, 1, 0, 0}, []int{1, 7})
	f.Check(simtest.Want{Rules: []string{"SK-6"}, Sent: []string{"TOKEN->2 LN=[1 1 0 0] Q=[7]"}, State: st(cs.Released, false, "[0,0,0,0]", "[]", "[]")})
	// ... or stays when nobody is queued.
	f.token(iP9, []int{1, 1, 0, 0}, nil)
	f.Check(simtest.Want{Rules: []string{"SK-6"}, State: st(cs.Released, true, "[0,0,0,0]", "[1,1,0,0]", "[]")})
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.Step(sim.Input{Kind: sim.Request})
	f.request(iP9, 1)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.request(iP1, 1)
	f.Step(sim.Input{Kind: sim.Release})
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

func TestTokenIsCopiedOnReceipt(t *testing.T) {
	f := newFixture(t, iP9, "")
	f.Step(sim.Input{Kind: sim.Request})
	ln, q := []int{0, 0, 0, 0}, []int{7}
	f.token(iP3, ln, q)
	ln[0], q[0] = 42, 3 // the message's slices change after delivery
	if got := f.State(); got != st(cs.Held, true, "[0,1,0,0]", "[0,0,0,0]", "[7]") {
		t.Fatalf("the node shares the message's slices: %s", got)
	}
}

func TestParseParams(t *testing.T) {
	simtest.ParseTable(t, ParseParams, unitIDs, []simtest.ParseCase{
		{Raw: "", Want: Params{Holder: 3}},
		{Raw: "null", Want: Params{Holder: 3}},
		{Raw: "{}", Want: Params{Holder: 3}},
		{Raw: `{"holder": 1}`, Want: Params{Holder: 1}},
		{Raw: `{"holder": 2}`, Err: "params.holder: 2 is not a node id (ids: 3 9 1 7)"},
		{Raw: `{"holder": "1"}`, Err: "params.holder: got string, want a node id"},
		{Raw: `{"holder": 1.5}`, Err: "params.holder: got number 1.5, want a node id"},
		{Raw: `{"coordinator": 1}`, Err: "params.coordinator: unknown field (allowed: holder)"},
		{Raw: `[1]`, Err: "params: got array"},
		{Raw: `{"holder": 1} 2`, Err: "params: must be a single JSON object"},
		{Raw: `{"holder":`, Err: "params: "},
	})
}

// --- whole runs through the kernel ---

func config(seed uint64, ids []int, params string, acts ...sim.Action) sim.Config {
	p, err := ParseParams([]byte(params), ids)
	if err != nil {
		panic(err)
	}
	return sim.Config{Spec: Spec(), IDs: ids, Params: p, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 4}, CS: 2, Until: 5000, Actions: acts}
}

func request(at, i int) sim.Action { return sim.Action{At: at, Do: sim.ActRequest, Node: i} }

// The notes' figure: N messages per entry, (N-1) REQUEST and one TOKEN; 0 when the
// requester already holds the token.
func TestRun_NMessagesPerEntryZeroWithTheToken(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			// The holder asks (0 messages), then everyone else, one at a time.
			acts := []sim.Action{request(0, 0)}
			for i := 1; i < n; i++ {
				acts = append(acts, request(100*i, i))
			}
			evs := simtest.Run(t, config(1, simtest.IDs(n), "", acts...))
			if got := simtest.Count(evs, sim.EvEnter); got != n {
				t.Fatalf("%d entries, want %d", got, n)
			}
			var perEntry []int
			last := 0
			for _, e := range evs {
				if e.Type == sim.EvEnter {
					perEntry = append(perEntry, sendsBetween(evs, last, int(e.Seq)))
					last = int(e.Seq)
				}
			}
			want := []int{0}
			for i := 1; i < n; i++ {
				want = append(want, int(Spec().Costs[0].Value(n)))
			}
			if !slices.Equal(perEntry, want) {
				t.Fatalf("messages per entry %v, want %v", perEntry, want)
			}
		})
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

// Under contention too: every broadcast costs N-1 REQUEST and brings exactly one TOKEN.
func TestRun_NMessagesPerEntryUnderContention(t *testing.T) {
	for _, n := range []int{3, 6, 10} {
		var acts []sim.Action
		for i := 0; i < n; i++ {
			acts = append(acts, request(0, i))
		}
		evs := simtest.Run(t, config(2, simtest.IDs(n), "", acts...))
		if got := simtest.Count(evs, sim.EvEnter); got != n {
			t.Fatalf("N=%d: %d entries, want %d", n, got, n)
		}
		// The holder (P0) enters without a message; the N-1 others broadcast.
		if r, tok := simtest.CountMsgs(evs, MsgRequest), simtest.CountMsgs(evs, MsgToken); r != (n-1)*(n-1) || tok != n-1 {
			t.Fatalf("N=%d: %d REQUEST and %d TOKEN, want (N-1)^2 = %d and N-1 = %d", n, r, tok, (n-1)*(n-1), n-1)
		}
	}
}

// The queue in the token serves the waiting processes in the order the holder queued
// them: from the next process on, round the ids.
func TestRun_TokenQueueServesInRoundOrder(t *testing.T) {
	// P2 holds the token and is in the CS (cs 0 keeps it there) while 0, 4 and 3 ask.
	cfg := config(1, simtest.IDs(5), `{"holder": 2}`, request(0, 2), request(1, 0), request(2, 4), request(3, 3),
		sim.Action{At: 40, Do: sim.ActRelease, Node: 2})
	cfg.CS = 0
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1}
	for _, a := range []int{0, 4, 3} {
		cfg.Actions = append(cfg.Actions, sim.Action{At: 60 + 20*a, Do: sim.ActRelease, Node: a})
	}
	evs := simtest.Run(t, cfg)
	var order []int
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			order = append(order, e.Node)
		}
	}
	if want := []int{2, 3, 4, 0}; !slices.Equal(order, want) {
		t.Fatalf("entries %v, want %v (the round from P2: 3, 4, 0)", order, want)
	}
	// The first TOKEN carries the rest of the queue as ids.
	for _, e := range evs {
		if e.Type == sim.EvSend && e.Msg.Type == MsgToken {
			if !slices.Equal(e.Msg.Queue, []int{4, 0}) || !slices.Equal(e.Msg.Vec, []int{0, 0, 0, 0, 0}) {
				t.Fatalf("first TOKEN LN=%v Q=%v, want LN=[0 0 0 0 0] Q=[4 0]", e.Msg.Vec, e.Msg.Queue)
			}
			break
		}
	}
}

// Seed sweep: random N, ids, holders, delays, FIFO-ness and workloads; the CS stays
// exclusive, every request is granted, and the messages are exactly N per entry that
// needed a broadcast, 0 for the others.
func TestRun_SeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(11)
		ids := r.Perm(2 * n)[:n]
		acts := simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 200})
		cfg := config(seed, ids, fmt.Sprintf(`{"holder": %d}`, ids[r.IntN(n)]), acts...)
		cfg.Network = sim.Network{DelayMin: r.IntN(3), DelayMax: 3 + r.IntN(6), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(4)
		cfg.Pending = 100_000
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Fatalf("seed %d (N=%d): violations %v", seed, n, v)
		}
		if u := simtest.Unserved(evs, n); len(u) > 0 {
			t.Fatalf("seed %d (N=%d): requests never granted: %v", seed, n, u)
		}
		broadcasts := simtest.CountMsgs(evs, MsgRequest) / (n - 1)
		if simtest.CountMsgs(evs, MsgRequest) != broadcasts*(n-1) || simtest.CountMsgs(evs, MsgToken) != broadcasts {
			t.Fatalf("seed %d (N=%d): %d REQUEST and %d TOKEN: want N-1 REQUEST and one TOKEN per broadcast",
				seed, n, simtest.CountMsgs(evs, MsgRequest), simtest.CountMsgs(evs, MsgToken))
		}
		free := simtest.Count(evs, sim.EvEnter) - broadcasts
		if got, want := simtest.Count(evs, sim.EvSend), n*broadcasts; got != want || free < 0 {
			t.Fatalf("seed %d (N=%d): %d messages for %d entries (%d with the token at hand): want N per broadcast = %d",
				seed, n, got, simtest.Count(evs, sim.EvEnter), free, want)
		}
	}
}

// The algorithm has no answer to failures: a crashed holder takes the token with it.
func TestRun_CrashedHolderStopsEveryone(t *testing.T) {
	cfg := config(1, simtest.IDs(4), "", sim.Action{At: 0, Do: sim.ActCrash, Node: 0}, request(5, 1), request(6, 2))
	cfg.Until, cfg.Pending = 200, 50
	evs := simtest.Run(t, cfg)
	if simtest.Count(evs, sim.EvEnter) != 0 {
		t.Fatal("someone entered without the token")
	}
	found := false
	for _, e := range evs {
		found = found || (e.Type == sim.EvViolation && e.Property == sim.PropPending)
	}
	if !found {
		t.Fatalf("violations %v, want pending", simtest.Violations(evs))
	}
}
