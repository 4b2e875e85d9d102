package lamport

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

// ids3 are out of index order (index 0 is P20, index 1 is P10), so an ordering by index
// instead of id, or an Encode that writes indexes, shows.
var ids3 = []int{20, 10, 30}

// fixture is the shared hand-driven node, with the node typed for the tests that read it.
type fixture struct {
	*simtest.Fixture
	n *node
}

func newFixture(t *testing.T, self int, ids []int) *fixture {
	t.Helper()
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: ids})
	sf.Show = simtest.TypeToTS // "TYPE->to@ts", to a node index
	return &fixture{Fixture: sf, n: sf.Node.(*node)}
}

func (f *fixture) deliver(typ string, from, ts int) {
	f.Deliver(sim.Message{Type: typ, From: from, TS: ts})
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func TestLI1_StartsReleasedWithAnEmptyQueue(t *testing.T) {
	for _, kind := range []sim.InputKind{sim.Init, sim.Recover} {
		f := simtest.NewFixture(t, Spec(), 1, &sim.Setup{IDs: ids3})
		f.Step(sim.Input{Kind: kind})
		f.Check(simtest.Want{Rules: []string{"LI-1"},
			State: `{"state":"RELEASED","clock":0,"ts":0,"queue":[],"latest":[0,0,0],"heard":[]}`})
	}
}

func TestLA1_StampsQueuesAndSendsTheRequest(t *testing.T) {
	f := newFixture(t, 1, ids3)
	f.deliver(MsgReply, 2, 4) // a stray message only moves the clock to 5
	f.Step(sim.Input{Kind: sim.Request})
	f.WantRules("LA-1")
	f.WantSent("REQUEST->0@6", "REQUEST->2@6")
	f.WantState(`{"state":"REQUESTED","clock":6,"ts":6,"queue":[[6,10]],"latest":[0,0,4],"heard":[]}`)

	// Asking again while waiting changes nothing.
	f.Step(sim.Input{Kind: sim.Request})
	f.WantRules()
	f.WantSent()
}

func TestLH1_QueuesTheRequestAndRepliesAtOnce(t *testing.T) {
	tests := []struct {
		name      string
		self      int
		setup     func(f *fixture)
		from, ts  int
		wantSent  []string
		wantState string
	}{
		{
			name: "Released", self: 0, from: 2, ts: 3,
			wantSent:  []string{"REPLY->2@5"},
			wantState: `{"state":"RELEASED","clock":5,"ts":0,"queue":[[3,30]],"latest":[0,0,3],"heard":[]}`,
		},
		{
			// Unlike Ricart-Agrawala, an older own request does not hold the reply back.
			name: "OwnRequestIsOlder", self: 0, from: 2, ts: 7,
			setup:     func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			wantSent:  []string{"REPLY->2@9"},
			wantState: `{"state":"REQUESTED","clock":9,"ts":1,"queue":[[1,20],[7,30]],"latest":[0,0,7],"heard":[30]}`,
		},
		{
			name: "OtherRequestIsOlder", self: 2, from: 0, ts: 1,
			setup: func(f *fixture) {
				f.deliver(MsgRelease, 1, 4) // clock 5: the own request carries 6
				f.Step(sim.Input{Kind: sim.Request})
			},
			wantSent:  []string{"REPLY->0@8"},
			wantState: `{"state":"REQUESTED","clock":8,"ts":6,"queue":[[1,20],[6,30]],"latest":[1,4,0],"heard":[]}`,
		},
		{
			// Equal timestamps: P10 (index 1) goes before P20 (index 0), by id.
			name: "EqualTimestampsOrderedByID", self: 0, from: 1, ts: 1,
			setup:     func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			wantSent:  []string{"REPLY->1@3"},
			wantState: `{"state":"REQUESTED","clock":3,"ts":1,"queue":[[1,10],[1,20]],"latest":[0,1,0],"heard":[]}`,
		},
		{
			name: "Held", self: 1, from: 2, ts: 9,
			setup: func(f *fixture) {
				f.Step(sim.Input{Kind: sim.Request})
				f.deliver(MsgReply, 0, 2)
				f.deliver(MsgReply, 2, 2)
			},
			wantSent:  []string{"REPLY->2@11"},
			wantState: `{"state":"HELD","clock":11,"ts":1,"queue":[[1,10],[9,30]],"latest":[2,0,9],"heard":[20,30]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self, ids3)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.deliver(MsgRequest, tc.from, tc.ts)
			f.WantRules("LH-1")
			f.WantSent(tc.wantSent...)
			f.WantState(tc.wantState)
		})
	}
}

func TestLH2_ReplyCountsAsALaterMessage(t *testing.T) {
	f := newFixture(t, 2, ids3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgReply, 0, 3)
	f.WantRules("LH-2")
	f.WantSent()
	f.WantState(`{"state":"REQUESTED","clock":4,"ts":1,"queue":[[1,30]],"latest":[3,0,0],"heard":[20]}`)
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{1}) {
		t.Fatalf("waiting for %v, want [1]", got)
	}
	// An older message arriving late (non-FIFO) does not lower what was heard.
	f.deliver(MsgReply, 0, 1)
	f.WantRules("LH-2")
	f.WantState(`{"state":"REQUESTED","clock":5,"ts":1,"queue":[[1,30]],"latest":[3,0,0],"heard":[20]}`)
}

func TestLH3_ReleaseRemovesTheSendersRequest(t *testing.T) {
	t.Run("Normal", func(t *testing.T) {
		f := newFixture(t, 2, ids3)
		f.deliver(MsgRequest, 0, 1)
		f.deliver(MsgRequest, 1, 2)
		f.deliver(MsgRelease, 0, 6)
		f.WantRules("LH-3")
		f.WantSent()
		f.WantState(`{"state":"RELEASED","clock":7,"ts":0,"queue":[[2,10]],"latest":[6,2,0],"heard":[]}`)
	})
	t.Run("OldestOfTwo", func(t *testing.T) {
		// Non-FIFO: P20's next request overtook the RELEASE of its previous one.
		f := newFixture(t, 2, ids3)
		f.deliver(MsgRequest, 0, 1)
		f.deliver(MsgRequest, 0, 8)
		f.deliver(MsgRelease, 0, 5)
		f.WantRules("LH-3")
		f.WantState(`{"state":"RELEASED","clock":11,"ts":0,"queue":[[8,20]],"latest":[8,0,0],"heard":[]}`)
	})
	t.Run("BeforeItsRequest", func(t *testing.T) {
		// Non-FIFO: the RELEASE overtook its own REQUEST; there is nothing to remove, and
		// the REQUEST arriving next stays queued with no RELEASE to come.
		f := newFixture(t, 2, ids3)
		f.deliver(MsgRelease, 0, 5)
		f.WantRules("LH-3")
		f.deliver(MsgRequest, 0, 1)
		f.WantState(`{"state":"RELEASED","clock":8,"ts":0,"queue":[[1,20]],"latest":[5,0,0],"heard":[]}`)
	})
}

func TestLE1_EntersAtTheHeadOnceEveryoneSpokeLater(t *testing.T) {
	tests := []struct {
		name  string
		self  int
		msgs  []sim.Message // delivered after the own request, which carries ts 1
		enter bool
	}{
		{"RepliesFromAll", 1, []sim.Message{{Type: MsgReply, From: 0, TS: 2}, {Type: MsgReply, From: 2, TS: 2}}, true},
		{"OneMissing", 1, []sim.Message{{Type: MsgReply, From: 0, TS: 2}}, false},
		{"OlderRequestAhead", 2, []sim.Message{{Type: MsgRequest, From: 0, TS: 1}, {Type: MsgReply, From: 1, TS: 2}, {Type: MsgReply, From: 0, TS: 3}}, false},
		{"OlderRequestReleased", 2, []sim.Message{{Type: MsgRequest, From: 0, TS: 1}, {Type: MsgReply, From: 1, TS: 2}, {Type: MsgRelease, From: 0, TS: 5}}, true},
		// A message with the same timestamp from a higher id is later in the total order,
		// so it counts; from a lower id it does not.
		{"EqualStampHigherIDCounts", 1, []sim.Message{{Type: MsgRequest, From: 0, TS: 1}, {Type: MsgRequest, From: 2, TS: 1}}, true},
		{"EqualStampLowerIDDoesNot", 0, []sim.Message{{Type: MsgReply, From: 2, TS: 2}, {Type: MsgRelease, From: 1, TS: 1}}, false},
		{"EqualStampLowerIDThenLater", 0, []sim.Message{{Type: MsgReply, From: 2, TS: 2}, {Type: MsgRelease, From: 1, TS: 1}, {Type: MsgReply, From: 1, TS: 2}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self, ids3)
			f.Step(sim.Input{Kind: sim.Request})
			entered := false
			for k, m := range tc.msgs {
				f.deliver(m.Type, m.From, m.TS)
				got := slices.Contains(f.Ctx.Rules(), "LE-1")
				if got != f.Has(sim.EnterCS) {
					t.Fatalf("message %d: LE-1 fired %v but entered %v", k, got, !got)
				}
				if got && k != len(tc.msgs)-1 {
					t.Fatalf("entered after message %d of %d", k+1, len(tc.msgs))
				}
				entered = entered || got
			}
			if entered != tc.enter {
				t.Fatalf("entered %v, want %v (state %s)", entered, tc.enter, sim.EncodeState(f.n))
			}
			if tc.enter && !strings.HasPrefix(string(sim.EncodeState(f.n)), `{"state":"HELD"`) {
				t.Fatalf("state %s, want HELD", sim.EncodeState(f.n))
			}
		})
	}
}

func TestLR1_ReleasesToEveryone(t *testing.T) {
	f := newFixture(t, 1, ids3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgReply, 0, 2)
	f.deliver(MsgRequest, 2, 5) // queued behind the own request, replied to at once
	f.WantRules("LH-1", "LE-1")
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules("LR-1")
	f.WantSent("RELEASE->0@8", "RELEASE->2@8")
	if e := f.Ctx.Effects(); e[1].Kind != sim.ExitCS {
		t.Fatalf("second effect %v, want ExitCS right after LR-1", e[1].Kind)
	}
	f.WantState(`{"state":"RELEASED","clock":8,"ts":0,"queue":[[5,30]],"latest":[2,0,5],"heard":[]}`)

	// Releasing outside the CS does nothing.
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules()
	f.WantSent()
}

func TestWaitingFor(t *testing.T) {
	f := newFixture(t, 2, ids3)
	if got := f.n.WaitingFor(); got != nil {
		t.Fatalf("released node waits for %v", got)
	}
	f.deliver(MsgRequest, 0, 1)
	f.Step(sim.Input{Kind: sim.Request}) // ts 4, behind P20's request
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("waits for %v, want [0 1]", got)
	}
	f.deliver(MsgReply, 1, 6)
	f.deliver(MsgReply, 0, 6) // P20 spoke later, but its older request is still ahead
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{0}) {
		t.Fatalf("waits for %v, want [0]", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, 0, ids3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgRequest, 1, 4)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(MsgRequest, 2, 1)
	f.deliver(MsgReply, 1, 9)
	f.deliver(MsgRelease, 1, 10)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

// ---- Whole runs through the kernel ----

func config(seed uint64, ids []int, fifo bool, acts []sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: ids, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 4, FIFO: fifo}, CS: 2, Until: 5000, Actions: acts}
}

// The notes' figure: 3(N-1) messages per entry, whatever the contention.
func TestMessagesPerEntryIs3NMinus1(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		for _, contention := range []string{"alone", "everyone at once"} {
			t.Run(fmt.Sprintf("N=%d/%s", n, contention), func(t *testing.T) {
				var acts []sim.Action
				if contention == "alone" {
					acts = []sim.Action{{At: 0, Do: sim.ActRequest, Node: n - 1}}
				} else {
					for i := 0; i < n; i++ {
						acts = append(acts, sim.Action{At: 0, Do: sim.ActRequest, Node: i})
					}
				}
				evs := simtest.Run(t, config(3, simtest.IDs(n), true, acts))
				if v := simtest.Violations(evs); v != nil {
					t.Fatalf("violations %v", v)
				}
				entries := simtest.Count(evs, sim.EvEnter)
				if entries != len(acts) {
					t.Fatalf("%d entries, want %d", entries, len(acts))
				}
				for _, typ := range []string{MsgRequest, MsgReply, MsgRelease} {
					if got, want := simtest.CountMsgs(evs, typ), (n-1)*entries; got != want {
						t.Errorf("%d %s for %d entries, want N-1 each = %d", got, typ, entries, want)
					}
				}
				if got, want := simtest.Count(evs, sim.EvSend), 3*(n-1)*entries; got != want {
					t.Fatalf("%d messages for %d entries, want 3(N-1) each = %d", got, entries, want)
				}
			})
		}
	}
}

// sweep runs one random configuration of the seed sweep.
func sweep(t *testing.T, seed uint64, fifo bool) (n int, cfg sim.Config, evs []sim.Event) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	n = 2 + r.IntN(9)
	// Sparse, shuffled ids so an index mistaken for an id shows.
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 3*i + r.IntN(3)
	}
	r.Shuffle(n, func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
	span := 20 + r.IntN(200)
	cfg = config(seed, ids, fifo, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: span}))
	dmin := r.IntN(3)
	cfg.Network.DelayMin, cfg.Network.DelayMax = dmin, dmin+r.IntN(8)
	cfg.CS = 1 + r.IntN(4)
	cfg.Pending = 100_000
	return n, cfg, simtest.Run(t, cfg)
}

// On FIFO channels, with random N, ids, delays and workloads: the CS stays exclusive,
// every request is granted, each entry costs 3(N-1) messages, and the grants follow
// the (timestamp, id) order of the requests. Crashes are left out: the notes say one
// failure blocks everyone.
func TestSeedSweepFIFO(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		n, cfg, evs := sweep(t, seed, true)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Fatalf("seed %d (N=%d, network %+v): violations %v", seed, n, cfg.Network, v)
		}
		if u := simtest.Unserved(evs, n); len(u) > 0 {
			t.Fatalf("seed %d (N=%d): requests never granted: %v", seed, n, u)
		}
		entries := simtest.Count(evs, sim.EvEnter)
		if entries != simtest.Count(evs, sim.EvRequest) {
			t.Fatalf("seed %d: %d requests, %d entries", seed, simtest.Count(evs, sim.EvRequest), entries)
		}
		if got, want := simtest.Count(evs, sim.EvSend), 3*(n-1)*entries; got != want {
			t.Fatalf("seed %d (N=%d): %d messages, want %d", seed, n, got, want)
		}
		if err := timestampOrder(evs, cfg.IDs); err != "" {
			t.Fatalf("seed %d (N=%d): %s", seed, n, err)
		}
	}
}

// timestampOrder checks that no process enters while an older request (timestamp,
// then id) is still waiting.
func timestampOrder(evs []sim.Event, ids []int) string {
	type stamp struct{ ts, id int }
	pending := map[int]stamp{}
	for i := range evs {
		e := &evs[i]
		switch {
		case e.Type == sim.EvSend && e.Msg.Type == MsgRequest:
			pending[e.Node] = stamp{e.Msg.TS, ids[e.Node]}
		case e.Type == sim.EvEnter:
			mine := pending[e.Node]
			for other, st := range pending {
				if other != e.Node && (st.ts < mine.ts || (st.ts == mine.ts && st.id < mine.id)) {
					return fmt.Sprintf("P%d entered with (%d,%d) while the older (%d,%d) waits", mine.id, mine.ts, mine.id, st.ts, st.id)
				}
			}
			delete(pending, e.Node)
		}
	}
	return ""
}

// hostile draws a small, slow configuration where a message often overtakes an older
// one on the same channel, and stays in the CS long enough for an overlap to show.
func hostile(seed uint64, fifo bool) sim.Config {
	r := rand.New(rand.NewPCG(seed, 2))
	n := 2 + r.IntN(3)
	cfg := config(seed, simtest.IDs(n), fifo, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 2 * n, Span: 20}))
	cfg.Network.DelayMax = 2 + r.IntN(8)
	cfg.CS = 5 + r.IntN(10)
	cfg.Pending = 100_000
	return cfg
}

// Lamport's algorithm needs FIFO channels. The same runs over non-FIFO channels break
// mutual exclusion (the monitor catches it) while over FIFO channels they never do.
func TestNonFIFOBreaksMutualExclusion(t *testing.T) {
	broken := 0
	for seed := uint64(1); seed <= 300; seed++ {
		fifo := simtest.Run(t, hostile(seed, true))
		if v := simtest.Violations(fifo); v != nil {
			t.Fatalf("seed %d, FIFO: violations %v", seed, v)
		}
		for _, v := range simtest.Violations(simtest.Run(t, hostile(seed, false))) {
			if strings.HasPrefix(v, sim.PropMutex+":") {
				broken++
				break
			}
		}
	}
	if broken == 0 {
		t.Fatal("300 non-FIFO runs and not one mutual-exclusion violation")
	}
	t.Logf("%d of 300 non-FIFO runs broke mutual exclusion", broken)
}

// ---- The curated scenario proposed for the library ----

// scenarioConfig decodes the scenario v1 fields this package's scenarios use into a
// kernel configuration, the way scenarios.Scenario.Config does (the algorithm is not
// registered here, so the real decoder cannot look it up).
func scenarioConfig(t *testing.T, js string) sim.Config {
	t.Helper()
	var sc struct {
		Version   int
		Algorithm string
		Title     string
		About     string
		Nodes     int
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
	if sc.Version != 2 || sc.Algorithm != Spec().Slug || sc.Title == "" || sc.About == "" {
		t.Fatalf("scenario header: %+v", sc)
	}
	if sc.Params != nil {
		t.Fatal("lamport takes no params")
	}
	ids := simtest.IDs(sc.Nodes)
	var acts []sim.Action
	for _, e := range sc.Events {
		do, ok := sim.ParseActionKind(e.Do)
		if !ok {
			t.Fatalf("event %q", e.Do)
		}
		acts = append(acts, sim.Action{At: e.At, Do: do, Node: slices.Index(ids, e.Node)})
	}
	return sim.Config{Spec: Spec(), IDs: ids, Seed: sc.Seed, CS: sc.CS, Until: sc.Until, Actions: acts,
		Network: sim.Network{DelayMin: sc.Network.Delay[0], DelayMax: sc.Network.Delay[1], FIFO: sc.Network.FIFO}}
}

// scenarioNonFIFO is the curated scenario "Lamport on a non-FIFO network".
const scenarioNonFIFO = `{
  "version": 2,
  "algorithm": "lamport",
  "title": "Lamport on a non-FIFO network: a reply overtakes its request",
  "about": "Lamport's algorithm assumes that messages between two processes arrive in the order they were sent. Here that is switched off. P0 asks at time 0 and P1 at time 1; both requests carry timestamp 1, so P0, the lower id, should go first. P0's REQUEST to P1 is slow, and the REPLY that P0 sends later, to answer P1, overtakes it. P1 now holds a message from everyone stamped after its request, and the only request in its queue is its own: it enters. When P0's REQUEST finally arrives, P1 queues it and answers; P0 heads its own queue, has heard from everyone, and enters too. The monitor reports two processes in the CS. Set fifo to true and the same seed runs correctly: the REPLY waits behind the REQUEST, and P0 enters first.",
  "nodes": 3,
  "seed": 29,
  "network": {"delay": [1, 6], "fifo": false},
  "cs": 10,
  "events": [
    {"at": 0, "do": "request", "node": 0},
    {"at": 1, "do": "request", "node": 1}
  ],
  "until": 60
}`

func enteredOrder(evs []sim.Event) []int {
	var out []int
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			out = append(out, e.Node)
		}
	}
	return out
}

func TestScenarioNonFIFO(t *testing.T) {
	cfg := scenarioConfig(t, scenarioNonFIFO)
	evs := simtest.Run(t, cfg)

	// On the channel P0 -> P1 the later REPLY arrives before the older REQUEST.
	var arrived []string
	for _, e := range evs {
		if e.Type == sim.EvDeliver && e.Msg.From == 0 && e.Msg.To == 1 {
			arrived = append(arrived, fmt.Sprintf("%s#%d", e.Msg.Type, e.Msg.ID))
		}
	}
	if len(arrived) < 2 || arrived[0] != "REPLY#5" || arrived[1] != "REQUEST#1" {
		t.Fatalf("P0 -> P1 delivered %v, want the REPLY (id 5) before the REQUEST (id 1)", arrived)
	}
	if got := enteredOrder(evs); !slices.Equal(got, []int{1, 0}) {
		t.Fatalf("entries %v, want P1 then P0", got)
	}
	if v := simtest.Violations(evs); !slices.Equal(v, []string{"mutual-exclusion: P0 entered the CS while P1 is in it"}) {
		t.Fatalf("violations %v, want P0 entering while P1 is in the CS", v)
	}

	// The same seed over FIFO channels: P0's older request goes first, and all is well.
	cfg.Network.FIFO = true
	evs = simtest.Run(t, cfg)
	if v := simtest.Violations(evs); v != nil {
		t.Fatalf("FIFO: violations %v", v)
	}
	if got := enteredOrder(evs); !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("FIFO: entries %v, want P0 then P1", got)
	}
}

// One crashed process blocks every requester: nobody hears from it again, and a
// recovered process starts with an empty queue.
func TestCrashBlocksEveryone(t *testing.T) {
	cfg := config(1, simtest.IDs(3), true, []sim.Action{
		{At: 0, Do: sim.ActCrash, Node: 2},
		{At: 1, Do: sim.ActRequest, Node: 0},
		{At: 30, Do: sim.ActRecover, Node: 2},
	})
	cfg.Until = 100
	evs := simtest.Run(t, cfg)
	if got := simtest.Count(evs, sim.EvEnter); got != 0 {
		t.Fatalf("%d entries, want none", got)
	}
	v := simtest.Violations(evs)
	if len(v) == 0 || !strings.HasPrefix(v[0], "deadlock: ") || !strings.Contains(v[0], "P0 still wait") {
		t.Fatalf("violations %v, want a deadlock naming P0", v)
	}
	if got := simtest.Rules(evs, 2); !slices.Equal(got, []string{"LI-1", "LI-1"}) {
		t.Fatalf("P2 fired %v, want LI-1 at start and on recovery", got)
	}
}
