package ricartagrawala

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// fixture is the shared hand-driven node; messages show as "TYPE->to@ts".
type fixture struct{ *simtest.Fixture }

func newFixture(t *testing.T, self, n int) *fixture {
	t.Helper()
	f := simtest.Start(t, Spec(), self, &sim.Setup{IDs: simtest.IDs(n)})
	f.Show = simtest.TypeToTS
	return &fixture{f}
}

func (f *fixture) deliver(typ string, from, ts int) {
	f.Deliver(sim.Message{Type: typ, From: from, TS: ts})
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func TestRI1_StartsReleased(t *testing.T) {
	f := newFixture(t, 1, 3)
	f.WantRules("RI1")
	f.WantSent()
	f.WantState(`{"state":"RELEASED","clock":0,"ts":0,"replied":[],"deferred":[]}`)
}

func TestRA1_StampsRequestWithClock(t *testing.T) {
	f := newFixture(t, 0, 3)
	f.deliver(MsgReply, 1, 4) // a stray reply while RELEASED only moves the clock
	f.Step(sim.Input{Kind: sim.Request})
	if got := f.Ctx.Rules(); len(got) < 1 || got[0] != "RA1" {
		t.Fatalf("rules %v, want RA1 first", got)
	}
	f.WantState(`{"state":"REQUESTED","clock":6,"ts":6,"replied":[],"deferred":[]}`)
}

func TestRA2_SendsRequestToAllOthers(t *testing.T) {
	f := newFixture(t, 1, 4)
	f.Step(sim.Input{Kind: sim.Request})
	f.WantRules("RA1", "RA2")
	f.WantSent("REQUEST->0@1", "REQUEST->2@1", "REQUEST->3@1")
}

func TestRA3_WaitsForAllReplies(t *testing.T) {
	f := newFixture(t, 0, 3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgReply, 2, 5)
	f.WantRules("RA3")
	f.WantSent()
	f.WantState(`{"state":"REQUESTED","clock":6,"ts":1,"replied":[2],"deferred":[]}`)
	if got := f.Node.(sim.WaitingFor).WaitingFor(); !slices.Equal(got, []int{1}) {
		t.Fatalf("waiting for %v, want [1]", got)
	}
	f.deliver(MsgReply, 2, 7) // a duplicate reply does not count twice
	f.WantRules()
}

func TestRE1_EntersAfterNMinus1Replies(t *testing.T) {
	f := newFixture(t, 0, 3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgReply, 1, 2)
	f.deliver(MsgReply, 2, 2)
	f.WantRules("RA3", "RE1")
	f.WantEffects("enter")
	f.WantState(`{"state":"HELD","clock":4,"ts":1,"replied":[1,2],"deferred":[]}`)
}

func TestRH1(t *testing.T) {
	tests := []struct {
		name      string
		self      int
		setup     func(f *fixture)
		reqFrom   int
		reqTS     int
		wantSent  []string
		wantState string
	}{
		{
			name: "RepliesAtOnceWhenReleased", self: 0, reqFrom: 2, reqTS: 3,
			wantSent:  []string{"REPLY->2@5"},
			wantState: `{"state":"RELEASED","clock":5,"ts":0,"replied":[],"deferred":[]}`,
		},
		{
			name: "DefersWhenHeld", self: 0, reqFrom: 2, reqTS: 1,
			setup: func(f *fixture) {
				f.Step(sim.Input{Kind: sim.Request})
				f.deliver(MsgReply, 1, 1)
				f.deliver(MsgReply, 2, 1)
			},
			wantSent:  nil,
			wantState: `{"state":"HELD","clock":4,"ts":1,"replied":[1,2],"deferred":[2]}`,
		},
		{
			name: "DefersWhenOwnRequestIsOlder", self: 1, reqFrom: 2, reqTS: 5,
			setup:     func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			wantSent:  nil,
			wantState: `{"state":"REQUESTED","clock":6,"ts":1,"replied":[],"deferred":[2]}`,
		},
		{
			name: "RepliesWhenOtherRequestIsOlder", self: 1, reqFrom: 2, reqTS: 0,
			setup: func(f *fixture) {
				f.deliver(MsgReply, 0, 4) // clock 5: own request will carry 6
				f.Step(sim.Input{Kind: sim.Request})
			},
			wantSent:  []string{"REPLY->2@8"},
			wantState: `{"state":"REQUESTED","clock":8,"ts":6,"replied":[],"deferred":[]}`,
		},
		{
			name: "EqualTimestampsLowerIDWins", self: 1, reqFrom: 2, reqTS: 1,
			setup:     func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			wantSent:  nil, // (1, P1) < (1, P2): P1 defers P2
			wantState: `{"state":"REQUESTED","clock":2,"ts":1,"replied":[],"deferred":[2]}`,
		},
		{
			name: "EqualTimestampsHigherIDYields", self: 2, reqFrom: 1, reqTS: 1,
			setup:     func(f *fixture) { f.Step(sim.Input{Kind: sim.Request}) },
			wantSent:  []string{"REPLY->1@3"},
			wantState: `{"state":"REQUESTED","clock":3,"ts":1,"replied":[],"deferred":[]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.self, 3)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.deliver(MsgRequest, tc.reqFrom, tc.reqTS)
			f.WantRules("RH1")
			f.WantSent(tc.wantSent...)
			f.WantState(tc.wantState)
		})
	}
}

func TestRR1_RepliesToAllDeferredOnRelease(t *testing.T) {
	f := newFixture(t, 0, 4)
	f.Step(sim.Input{Kind: sim.Request})
	for j := 1; j < 4; j++ {
		f.deliver(MsgReply, j, 1)
	}
	f.deliver(MsgRequest, 3, 2)
	f.deliver(MsgRequest, 1, 3)
	f.Step(sim.Input{Kind: sim.Release})
	f.WantRules("RR1")
	f.WantSent("REPLY->3@7", "REPLY->1@8")
	if effects := f.Ctx.Effects(); effects[1].Kind != sim.ExitCS {
		t.Fatalf("second effect %v, want ExitCS right after RR1", effects[1].Kind)
	}
	f.WantState(`{"state":"RELEASED","clock":8,"ts":0,"replied":[],"deferred":[]}`)
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, 0, 3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgReply, 1, 1)
	c := f.Node.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(MsgReply, 2, 1)
	f.deliver(MsgRequest, 1, 9)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

func config(seed uint64, n int, acts []sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 4}, CS: 2, Until: 5000, Actions: acts}
}

// The course's figure: 2(N-1) messages per entry, whatever the contention.
func TestMessagesPerEntryIs2NMinus1(t *testing.T) {
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
				evs := simtest.Run(t, config(3, n, acts))
				entries := simtest.Count(evs, sim.EvEnter)
				if entries != len(acts) {
					t.Fatalf("%d entries, want %d", entries, len(acts))
				}
				if got, want := simtest.Count(evs, sim.EvSend), 2*(n-1)*entries; got != want {
					t.Fatalf("%d messages for %d entries, want 2(N-1) each = %d", got, entries, want)
				}
			})
		}
	}
}

// Seed sweep: random N, delays, workloads and FIFO-ness; the CS stays exclusive and
// every request is granted. Crashes are left out: the notes say one failure blocks it.
func TestSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 2 + r.IntN(9)
		cfg := config(seed, n, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 200}))
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
		if got, want := simtest.Count(evs, sim.EvSend), 2*(n-1)*simtest.Count(evs, sim.EvEnter); got != want {
			t.Fatalf("seed %d (N=%d): %d messages, want %d", seed, n, got, want)
		}
	}
}

// Grants follow timestamp order: whenever two requests overlap, the older one enters first.
func TestGrantsFollowTimestampOrder(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		n := 5
		cfg := config(seed, n, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 10, Span: 30}))
		evs := simtest.Run(t, cfg)
		type stamp struct{ ts, id int }
		reqTS := map[int]stamp{} // node -> pending request stamp
		for i := range evs {
			e := &evs[i]
			if e.Type == sim.EvSend && e.Msg.Type == MsgRequest {
				reqTS[e.Node] = stamp{e.Msg.TS, e.Node}
			}
			if e.Type == sim.EvEnter {
				mine := reqTS[e.Node]
				for other, st := range reqTS {
					if other != e.Node && (st.ts < mine.ts || (st.ts == mine.ts && st.id < mine.id)) {
						t.Fatalf("seed %d: P%d entered with (%d,%d) while older (%d,%d) waits", seed, e.Node, mine.ts, mine.id, st.ts, st.id)
					}
				}
				delete(reqTS, e.Node)
			}
		}
	}
}
