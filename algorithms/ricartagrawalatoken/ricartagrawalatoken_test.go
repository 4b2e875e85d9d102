package ricartagrawalatoken

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// ids5 differ from the indexes, so a holder id mistaken for an index shows.
var ids5 = []int{10, 20, 30, 40, 50}

// fixture is the shared hand-driven node, with the node typed for the tests that read it.
type fixture struct {
	*simtest.Fixture
	n *node
}

// newFixture builds node self among ids5 with the token first at holder (an id).
func newFixture(t *testing.T, self, holder int) *fixture {
	t.Helper()
	p := simtest.Params(t, Spec(), fmt.Sprintf(`{"holder":%d}`, holder), ids5)
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: ids5, Params: p})
	sf.Show = show
	return &fixture{Fixture: sf, n: sf.Node.(*node)}
}

func (f *fixture) request(from, ts int) {
	f.Deliver(sim.Message{Type: MsgRequest, From: from, TS: ts})
}

func (f *fixture) token(from, ts int, vec ...int) {
	f.Deliver(sim.Message{Type: MsgToken, From: from, TS: ts, Vec: vec})
}

// show writes a message as "TYPE->to@ts" plus the token vector, to a node index.
func show(m sim.Message) string {
	s := simtest.TypeToTS(m)
	if m.Vec != nil {
		s += fmt.Sprint(m.Vec)
	}
	return s
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func TestRI1_OnlyTheChosenHolderStartsWithTheToken(t *testing.T) {
	for _, tc := range []struct {
		self, holder int
		want         string
	}{
		{2, 30, TokenPresent},
		{0, 30, NoToken},
		{4, 30, NoToken},
		{0, 10, TokenPresent},
	} {
		f := newFixture(t, tc.self, tc.holder)
		f.WantRules("RI1", "RI2")
		f.WantSent()
		if !strings.HasPrefix(string(sim.EncodeState(f.n)), `{"state":"`+tc.want+`"`) {
			t.Errorf("P%d with holder P%d: state %s, want %s", ids5[tc.self], tc.holder, sim.EncodeState(f.n), tc.want)
		}
	}
}

// The kernel rebuilds a recovered node from scratch; the first holder must not come
// back with a second token.
func TestRI1_RecoveredHolderHasNoToken(t *testing.T) {
	f := simtest.NewFixture(t, Spec(), 0, &sim.Setup{IDs: ids5, Params: simtest.Params(t, Spec(), "", ids5)})
	f.Step(sim.Input{Kind: sim.Recover})
	f.WantRules("RI1", "RI2")
	f.WantState(`{"state":"NO-TOKEN","clock":0,"waiting":false,"request":[0,0,0,0,0],"token":[]}`)
}

func TestRI2_EveryTimestampStartsAtZero(t *testing.T) {
	f := newFixture(t, 1, 20)
	f.WantState(`{"state":"TOKEN-PRESENT","clock":0,"waiting":false,"request":[0,0,0,0,0],"token":[0,0,0,0,0]}`)
	f = newFixture(t, 3, 20)
	f.WantState(`{"state":"NO-TOKEN","clock":0,"waiting":false,"request":[0,0,0,0,0],"token":[]}`)
}

func TestRA1_AsksForTheTokenOrEntersWithIt(t *testing.T) {
	t.Run("WithoutTheTokenAsksEveryone", func(t *testing.T) {
		f := newFixture(t, 2, 10)
		f.request(4, 6) // clock 7: the request carries 8
		f.Step(sim.Input{Kind: sim.Request})
		f.WantRules("RA1")
		f.WantSent("REQUEST->0@8", "REQUEST->1@8", "REQUEST->3@8", "REQUEST->4@8")
		if f.Has(sim.EnterCS) {
			t.Fatal("entered without the token")
		}
		f.WantState(`{"state":"NO-TOKEN","clock":8,"waiting":true,"request":[0,0,0,0,6],"token":[]}`)

		// Asking again while waiting sends nothing more.
		f.Step(sim.Input{Kind: sim.Request})
		f.WantRules()
		f.WantSent()
	})
	t.Run("EntersWhenTheTokenArrives", func(t *testing.T) {
		f := newFixture(t, 2, 10)
		f.Step(sim.Input{Kind: sim.Request})
		f.token(0, 3, 3, 0, 0, 0, 0)
		f.WantRules("RA1")
		f.WantSent()
		if !f.Has(sim.EnterCS) {
			t.Fatal("did not enter with the token")
		}
		f.WantState(`{"state":"TOKEN-HELD","clock":4,"waiting":false,"request":[0,0,0,0,0],"token":[3,0,0,0,0]}`)
	})
	t.Run("WithTheTokenEntersAtOnce", func(t *testing.T) {
		f := newFixture(t, 3, 40)
		f.Step(sim.Input{Kind: sim.Request})
		f.WantRules("RA1")
		f.WantSent() // 0 messages: the token is already here
		if !f.Has(sim.EnterCS) {
			t.Fatal("did not enter")
		}
		f.WantState(`{"state":"TOKEN-HELD","clock":0,"waiting":false,"request":[0,0,0,0,0],"token":[0,0,0,0,0]}`)

		// Asking again inside the CS does nothing.
		f.Step(sim.Input{Kind: sim.Request})
		f.WantRules()
	})
}

func TestRH1_KeepsTheNewestRequestTimestamp(t *testing.T) {
	f := newFixture(t, 0, 20)
	f.request(3, 5)
	f.WantRules("RH1")
	f.WantSent()
	f.WantState(`{"state":"NO-TOKEN","clock":6,"waiting":false,"request":[0,0,0,5,0],"token":[]}`)
	// An older request arriving late (non-FIFO) does not lower the entry.
	f.request(3, 2)
	f.WantRules("RH1")
	f.WantState(`{"state":"NO-TOKEN","clock":7,"waiting":false,"request":[0,0,0,5,0],"token":[]}`)
}

func TestRH2_AnUnusedTokenIsPassedAtOnce(t *testing.T) {
	t.Run("TokenPresent", func(t *testing.T) {
		f := newFixture(t, 1, 20)
		f.request(3, 4)
		f.WantRules("RH1", "RH2", "RR2")
		f.WantSent("TOKEN->3@5[0 5 0 0 0]")
		f.WantState(`{"state":"NO-TOKEN","clock":5,"waiting":false,"request":[0,0,0,4,0],"token":[]}`)
	})
	t.Run("TokenHeldKeepsIt", func(t *testing.T) {
		f := newFixture(t, 1, 20)
		f.Step(sim.Input{Kind: sim.Request})
		f.request(3, 4)
		f.WantRules("RH1")
		f.WantSent()
		f.WantState(`{"state":"TOKEN-HELD","clock":5,"waiting":false,"request":[0,0,0,4,0],"token":[0,0,0,0,0]}`)
	})
	t.Run("NoTokenOnlyRecords", func(t *testing.T) {
		f := newFixture(t, 2, 20)
		f.request(3, 4)
		f.WantRules("RH1")
		f.WantSent()
	})
}

func TestRR1_LeavingKeepsTheTokenWhenNobodyWaits(t *testing.T) {
	f := newFixture(t, 1, 20)
	f.Step(sim.Input{Kind: sim.Request})
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules("RR1", "RR2")
	f.WantSent()
	if !f.Has(sim.ExitCS) {
		t.Fatal("no exit")
	}
	f.WantState(`{"state":"TOKEN-PRESENT","clock":0,"waiting":false,"request":[0,0,0,0,0],"token":[0,0,0,0,0]}`)

	// Outside the CS, a release does nothing.
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules()

	// Kept, the token is used again without a message.
	f.Step(sim.Input{Kind: sim.Request})
	f.WantRules("RA1")
	f.WantSent()
	if !f.Has(sim.EnterCS) {
		t.Fatal("did not re-enter with the kept token")
	}
}

// RR2 searches i+1, i+2, ..., n, 1, ..., i-1 for request[k] > token[k].
func TestRR2_PassesToTheNextWaitingProcessInRoundRobin(t *testing.T) {
	tests := []struct {
		name     string
		self     int   // index of the holder leaving the CS
		requests []int // request timestamps heard, by index
		token    []int // token[] as it arrived, by index
		want     string
	}{
		{"NextAfterSelf", 2, []int{1, 0, 0, 5, 3}, []int{0, 0, 0, 0, 0}, "TOKEN->3@"},
		{"WrapsAround", 3, []int{0, 4, 6, 0, 0}, []int{0, 0, 0, 0, 0}, "TOKEN->1@"},
		// P50 asked later than P10 (timestamp 9 against 2) yet comes first after P30.
		{"OrderNotTimestamps", 2, []int{2, 0, 0, 0, 9}, []int{0, 0, 0, 0, 0}, "TOKEN->4@"},
		// P40's request (3) is no newer than its last turn (7): it was served; skip it.
		{"ServedRequestIsSkipped", 2, []int{7, 0, 0, 3, 9}, []int{2, 4, 0, 7, 0}, "TOKEN->4@"},
		{"EqualIsNotPending", 0, []int{0, 4, 0, 0, 0}, []int{0, 4, 0, 0, 0}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self, 10)
			f.Step(sim.Input{Kind: sim.Request})
			if tc.self != 0 {
				f.token(0, 0, tc.token...)
			} else {
				copy(f.n.token, tc.token)
			}
			for k, ts := range tc.requests {
				if ts > 0 {
					f.request(k, ts)
				}
			}
			clock := f.n.clock
			f.Step(sim.Input{Kind: sim.Release})
			f.WantRules("RR1", "RR2")
			if tc.want == "" {
				f.WantSent()
				if f.n.state != TokenPresent {
					t.Fatalf("state %s, want TOKEN-PRESENT", f.n.state)
				}
				return
			}
			sent := f.Ctx.Sent()
			if len(sent) != 1 || !strings.HasPrefix(fmt.Sprintf("%s->%d@", sent[0].Type, sent[0].To), tc.want) {
				t.Fatalf("sent %v, want %s", sent, tc.want)
			}
			// The token leaves stamped with the holder's clock in its own slot.
			wantVec := slices.Clone(tc.token)
			wantVec[tc.self] = clock
			if sent[0].TS != clock || !slices.Equal(sent[0].Vec, wantVec) {
				t.Fatalf("token sent as ts %d %v, want ts %d %v", sent[0].TS, sent[0].Vec, clock, wantVec)
			}
			if f.n.state != NoToken || f.n.token != nil {
				t.Fatalf("after passing: state %s, token %v", f.n.state, f.n.token)
			}
		})
	}
}

// A token that reaches a process which no longer waits (it asked, crashed and came back)
// is kept, and passed on if someone waits.
func TestRR2_UnaskedTokenIsPassedOn(t *testing.T) {
	f := newFixture(t, 2, 10)
	f.request(4, 3)
	f.token(0, 1, 1, 0, 0, 0, 0)
	f.WantRules("RR2")
	f.WantSent("TOKEN->4@5[1 0 5 0 0]")
	if f.Has(sim.EnterCS) {
		t.Fatal("entered without asking")
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, 0, 10)
	f.Step(sim.Input{Kind: sim.Request})
	f.request(2, 3)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.request(3, 9)
	f.Step(sim.Input{Kind: sim.Release})
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

func TestParseParams(t *testing.T) {
	ids := []int{3, 1, 4}
	simtest.ParseTable(t, ParseParams, ids, []simtest.ParseCase{
		{Raw: "", Want: Params{Holder: 1}},
		{Raw: "null", Want: Params{Holder: 1}},
		{Raw: " {} ", Want: Params{Holder: 1}},
		{Raw: `{"holder":4}`, Want: Params{Holder: 4}},
		{Raw: `{"holder":2}`, Err: "params.holder: 2 is not a node id (ids: 3 1 4)"},
		{Raw: `{"holder":"3"}`, Err: "params.holder: got string, want a node id"},
		{Raw: `{"holder":1.5}`, Err: "params.holder: got number 1.5"},
		{Raw: `{"coordinator":1}`, Err: `params.coordinator: unknown field (allowed: holder)`},
		{Raw: `[1]`, Err: "params: got array"},
		{Raw: `{"holder":1} {}`, Err: "params: must be a single JSON object"},
		{Raw: `{"holder":`, Err: "params:"},
	})
	if _, err := ParseParams(nil, nil); err == nil || !strings.HasPrefix(err.Error(), "params.holder:") {
		t.Errorf("ParseParams with no ids: %v", err)
	}
}

// New without params gives the token to the lowest id.
func TestNewWithoutParams(t *testing.T) {
	ids := []int{7, 2, 9}
	for i, want := range []string{NoToken, TokenPresent, NoToken} {
		n := Spec().New(i, &sim.Setup{IDs: ids}).(*node)
		n.Step(sim.NewContext(i, ids), &sim.Input{Kind: sim.Init})
		if n.state != want {
			t.Errorf("P%d: %s, want %s", ids[i], n.state, want)
		}
	}
}

// ---- Whole runs through the kernel ----

func req(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActRequest, Node: node} }

func config(seed uint64, ids []int, holder int, acts []sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: ids, Params: Params{Holder: holder}, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 4}, CS: 2, Until: 5000, Actions: acts}
}

// The notes' figure: N messages per entry (N-1 requests and the token), none when the
// requester already holds the token.
func TestMessagesPerEntryIsN(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			// One at a time (each entry is over within 2*4+2 time units): every entry by a
			// process without the token costs N; the holder's own entries cost 0.
			var acts []sim.Action
			for k := 0; k < 2*n; k++ {
				acts = append(acts, req(20*k, (k*7+1)%n))
			}
			evs := simtest.Run(t, config(1, simtest.IDs(n), 0, acts))
			if v := simtest.Violations(evs); v != nil {
				t.Fatalf("violations %v", v)
			}
			paying := 0 // requests made without the token
			holder := 0
			for _, a := range acts {
				if a.Node != holder {
					paying++
					holder = a.Node
				}
			}
			if got := simtest.Count(evs, sim.EvEnter); got != len(acts) {
				t.Fatalf("%d entries, want %d", got, len(acts))
			}
			if got, want := simtest.Count(evs, sim.EvSend), n*paying; got != want {
				t.Fatalf("%d messages for %d entries without the token, want N each = %d", got, paying, want)
			}
			if got := simtest.CountMsgs(evs, MsgToken); got != paying {
				t.Fatalf("%d TOKEN, want %d", got, paying)
			}
		})
	}

	// The holder alone: no message at all.
	evs := simtest.Run(t, config(1, simtest.IDs(4), 2, []sim.Action{req(0, 2), req(10, 2), req(20, 2)}))
	if e, m := simtest.Count(evs, sim.EvEnter), simtest.Count(evs, sim.EvSend); e != 3 || m != 0 {
		t.Fatalf("holder alone: %d entries, %d messages; want 3 and 0", e, m)
	}

	// Everyone at once, the holder too: N for each of the N-1 others, 0 for the holder.
	for _, n := range []int{2, 5, 9} {
		var acts []sim.Action
		for i := 0; i < n; i++ {
			acts = append(acts, req(0, i))
		}
		evs := simtest.Run(t, config(1, simtest.IDs(n), 0, acts))
		if e, m := simtest.Count(evs, sim.EvEnter), simtest.Count(evs, sim.EvSend); e != n || m != n*(n-1) {
			t.Fatalf("N=%d everyone at once: %d entries, %d messages; want %d and %d", n, e, m, n, n*(n-1))
		}
	}
}

// randomIDs returns n sparse, shuffled ids, so an index mistaken for an id shows.
func randomIDs(r *rand.Rand, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 3*i + r.IntN(3)
	}
	r.Shuffle(n, func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
	return ids
}

// checkRun asserts a crash-free run: exclusive, every request granted, and the cost
// figure exactly: N-1 REQUEST and one TOKEN for every entry made without the token.
func checkRun(t *testing.T, seed uint64, cfg sim.Config, evs []sim.Event) {
	t.Helper()
	n := len(cfg.IDs)
	if v := simtest.Violations(evs); len(v) > 0 {
		t.Fatalf("seed %d (N=%d, network %+v, holder %v): violations %v", seed, n, cfg.Network, cfg.Params, v)
	}
	if u := simtest.Unserved(evs, n); len(u) > 0 {
		t.Fatalf("seed %d (N=%d): requests never granted: %v", seed, n, u)
	}
	if r, e := simtest.Count(evs, sim.EvRequest), simtest.Count(evs, sim.EvEnter); r != e {
		t.Fatalf("seed %d: %d requests, %d entries", seed, r, e)
	}
	tokens := simtest.CountMsgs(evs, MsgToken)
	if got, want := simtest.CountMsgs(evs, MsgRequest), (n-1)*tokens; got != want {
		t.Fatalf("seed %d (N=%d): %d REQUEST for %d TOKEN, want N-1 per token = %d", seed, n, got, tokens, want)
	}
}

// Seed sweep: random N, ids, holder, delays, FIFO-ness and workloads.
func TestSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(9)
		ids := randomIDs(r, n)
		span := 10 + r.IntN(200)
		cfg := config(seed, ids, ids[r.IntN(n)], simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: span}))
		dmin := r.IntN(3)
		cfg.Network = sim.Network{DelayMin: dmin, DelayMax: dmin + r.IntN(8), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(4)
		cfg.Pending = 100_000
		checkRun(t, seed, cfg, simtest.Run(t, cfg))
	}
}

// The notes: the failure of a process other than the token holder does not stop the
// others. Processes that never ask (and so never get the token) crash at random times;
// every request of the live ones is still granted.
func TestSeedSweepIdleCrashes(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 3 + r.IntN(8)
		ids := simtest.IDs(n)
		holder := r.IntN(n)
		var idle []int
		for i := 0; i < n; i++ {
			if i != holder && len(idle) < n-2 && r.IntN(3) == 0 {
				idle = append(idle, i)
			}
		}
		var acts []sim.Action
		for k := 0; k < 3*n; k++ {
			i := r.IntN(n)
			if !slices.Contains(idle, i) {
				acts = append(acts, req(r.IntN(150), i))
			}
		}
		for _, i := range idle {
			acts = append(acts, sim.Action{At: r.IntN(150), Do: sim.ActCrash, Node: i})
		}
		cfg := config(seed, ids, holder, acts)
		cfg.Network.FIFO = r.IntN(2) == 0
		cfg.Pending = 100_000
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Fatalf("seed %d (N=%d, crashed %v): violations %v", seed, n, idle, v)
		}
		if u := simtest.Unserved(evs, n); len(u) > 0 {
			t.Fatalf("seed %d (N=%d, crashed %v): requests never granted: %v", seed, n, idle, u)
		}
	}
}

// The holder's crash loses the token: every later request waits for ever, and the
// monitors say so. Recovering does not bring the token back.
func TestHolderCrashLosesTheToken(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		cfg := config(seed, simtest.IDs(4), 0, []sim.Action{
			req(0, 1),                           // the token moves to P1
			{At: 20, Do: sim.ActCrash, Node: 1}, // and dies with it
			req(25, 2), req(26, 3),
			{At: 30, Do: sim.ActRecover, Node: 1},
			req(40, 1),
		})
		cfg.Until = 500
		evs := simtest.Run(t, cfg)
		if got := simtest.Count(evs, sim.EvEnter); got != 1 {
			t.Fatalf("seed %d: %d entries, want only P1's", seed, got)
		}
		if u := simtest.Unserved(evs, 4); len(u) != 3 {
			t.Fatalf("seed %d: unserved %v, want P1 (recovered), P2 and P3", seed, u)
		}
		v := simtest.Violations(evs)
		if !slices.ContainsFunc(v, func(s string) bool {
			return strings.HasPrefix(s, "deadlock: ") && strings.Contains(s, "P1, P2, P3 still wait")
		}) {
			t.Fatalf("seed %d: violations %v, want a deadlock naming P1, P2 and P3", seed, v)
		}
	}
}

// Round robin bounds the wait: once every process has heard a waiting process's
// request, no process enters twice before it. (Before that, a holder that has not yet
// heard the request may rightly pass the token elsewhere.)
func TestRoundRobinPreventsStarvation(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		n := 5
		var acts []sim.Action
		for k := 0; k < 8; k++ { // everyone asks again and again, a little apart
			for i := 0; i < n; i++ {
				acts = append(acts, req(k*3+i%3, i))
			}
		}
		cfg := config(seed, simtest.IDs(n), 0, acts)
		cfg.Network.FIFO = seed%2 == 0
		evs := simtest.Run(t, cfg)
		heard := map[int]int{}            // waiter -> deliveries of its current REQUEST
		entered := map[int]map[int]bool{} // waiter -> who entered since all heard it
		for _, e := range evs {
			switch {
			case e.Type == sim.EvRequest:
				heard[e.Node] = 0
				delete(entered, e.Node)
			case e.Type == sim.EvDeliver && e.Msg.Type == MsgRequest:
				w := e.Msg.From
				if heard[w]++; heard[w] == n-1 {
					entered[w] = map[int]bool{}
				}
			case e.Type == sim.EvEnter:
				delete(heard, e.Node)
				delete(entered, e.Node)
				for w, seen := range entered {
					if seen[e.Node] {
						t.Fatalf("seed %d: P%d entered twice while every process knew P%d waited", seed, e.Node, w)
					}
					seen[e.Node] = true
				}
			}
		}
	}
}

// ---- The curated scenario proposed for the library ----

// scenarioConfig decodes the scenario v1 fields used here into a kernel configuration,
// the way scenarios.Scenario.Config does (the algorithm is not registered here, so the
// real decoder cannot look it up).
func scenarioConfig(t *testing.T, js string) sim.Config {
	t.Helper()
	var sc struct {
		Version   int
		Algorithm string
		Title     string
		About     string
		Nodes     int
		IDs       []int
		Seed      uint64
		Network   struct {
			Delay []int
			FIFO  bool
		}
		CS     int
		Params json.RawMessage
		Events []struct {
			At   int
			Do   string
			Node int
		}
		Until int
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(js)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		t.Fatal(err)
	}
	if sc.Version != 2 || sc.Algorithm != Spec().Slug || sc.Title == "" || sc.About == "" || len(sc.IDs) != sc.Nodes {
		t.Fatalf("scenario header: %+v", sc)
	}
	p, err := Spec().ParseParams(sc.Params, sc.IDs)
	if err != nil {
		t.Fatal(err)
	}
	var acts []sim.Action
	for _, e := range sc.Events {
		do, ok := sim.ParseActionKind(e.Do)
		i := slices.Index(sc.IDs, e.Node)
		if !ok || i < 0 {
			t.Fatalf("event %+v", e)
		}
		acts = append(acts, sim.Action{At: e.At, Do: do, Node: i})
	}
	return sim.Config{Spec: Spec(), IDs: sc.IDs, Params: p, Seed: sc.Seed, CS: sc.CS, Until: sc.Until, Actions: acts,
		Network: sim.Network{DelayMin: sc.Network.Delay[0], DelayMax: sc.Network.Delay[1], FIFO: sc.Network.FIFO}}
}

// scenarioWhoGetsTheToken is the curated scenario for the notes' question "to whom
// should it pass the token?" (the holder's clock shows 11).
const scenarioWhoGetsTheToken = `{
  "version": 2,
  "algorithm": "ricart-agrawala-token",
  "title": "Ricart-Agrawala token: to whom is the token passed?",
  "about": "Five processes P1 to P5; P1 starts with the token. P2, then P4, then P3 use the CS in turn, and each, when it passes the token on, writes its clock into its own slot of token[]. While P3 is inside, P1, P2 and P5 ask for the token, in that order (timestamps 7, 7 and 9). P3 leaves with its clock at 11 and must choose. It does not pick the oldest request: it searches round-robin from the process after itself. P4 comes first, and request[4] holds 3, but token[4] is 7: that request was served on P4's last turn, so P4 is not waiting. Next is P5, whose request (9) is newer than token[5] (0): P5 gets the token, with 11 now in token[3]. P5 then searches from P1 and passes to P1, and P1 to P2. Every waiting process is served within one round, which is why the search goes round-robin: nobody can starve.",
  "nodes": 5,
  "ids": [1, 2, 3, 4, 5],
  "seed": 1,
  "network": {"delay": [1, 1], "fifo": true},
  "cs": 5,
  "params": {"holder": 1},
  "events": [
    {"at": 0, "do": "request", "node": 2},
    {"at": 2, "do": "request", "node": 4},
    {"at": 7, "do": "request", "node": 3},
    {"at": 14, "do": "request", "node": 1},
    {"at": 15, "do": "request", "node": 2},
    {"at": 16, "do": "request", "node": 5}
  ],
  "until": 60
}`

func TestScenarioWhoGetsTheToken(t *testing.T) {
	cfg := scenarioConfig(t, scenarioWhoGetsTheToken)
	var rec sim.Recorder
	s, err := sim.New(cfg, rec.Sink())
	if err != nil {
		t.Fatal(err)
	}
	const p3 = 2   // index of P3
	var last *node // P3's state after its last step inside the CS
	for {
		ok, err := s.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if s.InCS(p3) {
			last = s.Node(p3).Clone().(*node)
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	// What P3 sees as it leaves: the notes' clock of 11, P4's served request, three waiters.
	if last == nil || last.clock != 11 || !slices.Equal(last.request, []int{7, 7, 0, 3, 9}) || !slices.Equal(last.token, []int{2, 4, 0, 7, 0}) {
		t.Fatalf("P3 as it leaves the CS: %+v", last)
	}
	evs := rec.Events
	if v := simtest.Violations(evs); v != nil {
		t.Fatalf("violations %v", v)
	}
	var passes []string
	var entries []int
	for _, e := range evs {
		switch {
		case e.Type == sim.EvSend && e.Msg.Type == MsgToken:
			passes = append(passes, fmt.Sprintf("P%d->P%d@%d%v", cfg.IDs[e.Msg.From], cfg.IDs[e.Msg.To], e.Msg.TS, e.Msg.Vec))
		case e.Type == sim.EvEnter:
			entries = append(entries, cfg.IDs[e.Node])
		}
	}
	want := []string{
		"P1->P2@2[2 0 0 0 0]",
		"P2->P4@4[2 4 0 0 0]",
		"P4->P3@7[2 4 0 7 0]",
		"P3->P5@11[2 4 11 7 0]", // the notes' moment: clock 11, P4 skipped, P5 before P1 and P2
		"P5->P1@12[2 4 11 7 12]",
		"P1->P2@13[13 4 11 7 12]",
	}
	if !slices.Equal(passes, want) {
		t.Fatalf("token passes:\n got %v\nwant %v", passes, want)
	}
	if !slices.Equal(entries, []int{2, 4, 3, 5, 1, 2}) {
		t.Fatalf("entries %v", entries)
	}
}
