package ring

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/ringnext"
	"github.com/teach-dist/playground/algorithms/ringnext/ringtest"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Unit tests use a ring whose ids are not the indexes, so a mix-up shows: index 0 -> P3,
// 1 -> P9, 2 -> P1, 3 -> P7, and the successor of index i is i+1 (P7's is P3).
var unitIDs = []int{3, 9, 1, 7}

const (
	iP3, iP9, iP1, iP7 = 0, 1, 2, 3
	unitMaxDelay       = 3 // ack time-out 7
)

// fixture is the shared hand-driven node; messages show as sentText writes them.
type fixture struct{ *simtest.Fixture }

func newFixture(t *testing.T, self int, params string) *fixture {
	t.Helper()
	p := simtest.Params(t, Spec(), ringtest.RuleParams(t, params), unitIDs)
	f := simtest.Start(t, Spec(), self, &sim.Setup{IDs: unitIDs, Params: p, MaxDelay: unitMaxDelay})
	f.Show = sentText
	return &fixture{f}
}

func (f *fixture) deliver(typ string, from, arg int) {
	f.Deliver(sim.Message{Type: typ, From: from, Arg: arg})
}

// sentText writes a message as "TYPE(arg)->index", or "ACK->index".
func sentText(m sim.Message) string {
	if m.Type == ringnext.MsgAck {
		return simtest.TypeTo(m)
	}
	return fmt.Sprintf("%s(%d)->%d", m.Type, m.Arg, m.To)
}

// Every rule has a test named after it; the ring elections' shared rules (ringnext's
// DT and AK) may be tested in either.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec(), ".", "../ringlist") }

func state(participant bool, leader int) string {
	return fmt.Sprintf(`{"participant":%t,"leader":%d}`, participant, leader)
}

// ackState is a node's state in ack mode; unacked lists its unacknowledged messages.
func ackState(participant bool, leader, awaiting int, unacked ...string) string {
	list := "["
	for i, m := range unacked {
		if i > 0 {
			list += ","
		}
		list += `"` + m + `"`
	}
	return fmt.Sprintf(`{"participant":%t,"leader":%d,"awaiting":%d,"unacked":%s]}`, participant, leader, awaiting, list)
}

func TestCR1_StartsNonParticipantWithTheHighestIDAsLeader(t *testing.T) {
	for self := range unitIDs {
		f := newFixture(t, self, "")
		f.Check(simtest.Want{Rules: []string{"CR-1"}, Leaders: []int{9}, State: state(false, 9)})
	}
	f := newFixture(t, iP3, `{"ack": true}`)
	f.Check(simtest.Want{Rules: []string{"CR-1"}, Leaders: []int{9}, State: ackState(false, 9, -1)})
}

func TestCR2_SendsItsOwnIDToTheSuccessor(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"CR-2"}, Sent: []string{"ELECTION(3)->1"}, State: state(true, 9)})
}

func TestCR2_TheLastInTheOrderSendsToTheFirst(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"CR-2"}, Sent: []string{"ELECTION(7)->0"}, State: state(true, 9)})
}

func TestCR2_AParticipantStartsNoSecondElection(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.deliver(MsgElection, iP7, 7) // joins by passing on 7
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{State: state(true, 9)})
}

func TestCR2_InAckModeWaitsForTheAck(t *testing.T) {
	f := newFixture(t, iP3, `{"ack": true}`)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"CR-2"}, Sent: []string{"ELECTION(3)->1"}, Effects: []string{"set ack 7"},
		State: ackState(true, 9, 9, "ELECTION(3)")})
}

func TestCR3_ForwardsALargerIDUnchanged(t *testing.T) {
	for _, participant := range []bool{false, true} {
		t.Run(fmt.Sprintf("participant=%t", participant), func(t *testing.T) {
			f := newFixture(t, iP1, "")
			if participant {
				f.Step(sim.Input{Kind: sim.Elect})
			}
			f.deliver(MsgElection, iP9, 3)
			f.Check(simtest.Want{Rules: []string{"CR-3"}, Sent: []string{"ELECTION(3)->3"}, State: state(true, 9)})
		})
	}
}

func TestCR4_ReplacesASmallerIDWithItsOwn(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.deliver(MsgElection, iP1, 1)
	f.Check(simtest.Want{Rules: []string{"CR-4"}, Sent: []string{"ELECTION(7)->0"}, State: state(true, 9)})
}

func TestCR5_AParticipantSwallowsASmallerID(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElection, iP1, 1)
	f.Check(simtest.Want{Rules: []string{"CR-5"}, State: state(true, 9)})
}

func TestCR6_ItsOwnIDBackMakesItTheLeader(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElection, iP1, 7)
	f.Check(simtest.Want{Rules: []string{"CR-6"}, Sent: []string{"ELECTED(7)->0"}, Leaders: []int{7}, State: state(false, 7)})
}

func TestCR7_RecordsTheLeaderAndPassesItOn(t *testing.T) {
	for _, participant := range []bool{false, true} {
		t.Run(fmt.Sprintf("participant=%t", participant), func(t *testing.T) {
			f := newFixture(t, iP3, "")
			if participant {
				f.Step(sim.Input{Kind: sim.Elect})
			}
			f.deliver(MsgElected, iP7, 7)
			f.Check(simtest.Want{Rules: []string{"CR-7"}, Sent: []string{"ELECTED(7)->1"}, Leaders: []int{7}, State: state(false, 7)})
		})
	}
}

func TestCR8_TheLeaderStopsItsOwnAnnouncement(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElection, iP1, 7)
	f.deliver(MsgElected, iP1, 7)
	f.Check(simtest.Want{Rules: []string{"CR-8"}, State: state(false, 7)})
}

func TestCR9_RecoveredProcessForgetsTheLeaderAndStartsAnElection(t *testing.T) {
	// The kernel builds a fresh state, then says Recover (no Init).
	f := &fixture{simtest.NewFixture(t, Spec(), iP1, &sim.Setup{IDs: unitIDs, MaxDelay: unitMaxDelay})}
	f.Show = sentText
	f.Step(sim.Input{Kind: sim.Recover})
	// Defaults: no restart time-out (it would need N); the check looks again at the
	// receiver one largest delay and one later.
	f.Check(simtest.Want{Rules: []string{"CR-9", "CR-2"}, Sent: []string{"ELECTION(1)->3"}, Effects: []string{"set check 4"},
		State: `{"participant":true,"leader":-1,"unchecked":["ELECTION(1)->7"]}`})
}

func TestAK1_AMessageWaitsBehindTheUnacknowledgedOne(t *testing.T) {
	f := newFixture(t, iP1, `{"ack": true}`)
	f.deliver(MsgElection, iP9, 3) // ELECTION(3) to P7
	f.Check(simtest.Want{Rules: []string{"AK-2", "CR-3"}, Sent: []string{"ACK->1", "ELECTION(3)->3"}, Effects: []string{"set ack 7"},
		State: ackState(true, 9, 7, "ELECTION(3)")})
	f.deliver(MsgElected, iP9, 3) // ELECTED(3) queued: nothing sent but the ACK
	f.Check(simtest.Want{Rules: []string{"AK-2", "CR-7", "AK-1"}, Sent: []string{"ACK->1"}, Leaders: []int{3},
		State: ackState(false, 3, 7, "ELECTION(3)", "ELECTED(3)")})
}

func TestAK2_AcknowledgesARingMessageBeforeHandlingIt(t *testing.T) {
	for _, typ := range []string{MsgElection, MsgElected} {
		f := newFixture(t, iP1, `{"ack": true}`)
		f.deliver(typ, iP9, 9)
		rule := map[string]string{MsgElection: "CR-3", MsgElected: "CR-7"}[typ]
		participant := typ == MsgElection
		f.Check(simtest.Want{Rules: []string{"AK-2", rule}, Sent: []string{"ACK->1", typ + "(9)->3"}, Effects: []string{"set ack 7"},
			Leaders: map[bool][]int{false: {9}}[participant], State: ackState(participant, 9, 7, map[bool]string{true: "ELECTION(9)", false: "ELECTED(9)"}[participant])})
	}
	// Without acknowledgements nothing is sent back.
	f := newFixture(t, iP1, "")
	f.deliver(MsgElection, iP9, 9)
	f.Check(simtest.Want{Rules: []string{"CR-3"}, Sent: []string{"ELECTION(9)->3"}, State: state(true, 9)})
}

func TestAK3_AnAckReleasesTheNextQueuedMessage(t *testing.T) {
	f := newFixture(t, iP7, `{"ack": true}`)
	f.Step(sim.Input{Kind: sim.Elect}) // ELECTION(7) to P3, not yet acknowledged
	f.deliver(MsgElection, iP1, 7)     // own id back: ELECTED(7) waits behind it
	f.Check(simtest.Want{Rules: []string{"AK-2", "CR-6", "AK-1"}, Sent: []string{"ACK->2"}, Leaders: []int{7},
		State: ackState(false, 7, 3, "ELECTION(7)", "ELECTED(7)")})
	f.deliver(ringnext.MsgAck, iP9, 0) // not from where the message went: ignored
	f.Check(simtest.Want{State: ackState(false, 7, 3, "ELECTION(7)", "ELECTED(7)")})
	f.deliver(ringnext.MsgAck, iP3, 0)
	f.Check(simtest.Want{Rules: []string{"AK-3"}, Sent: []string{"ELECTED(7)->0"}, Effects: []string{"cancel ack", "set ack 7"},
		State: ackState(false, 7, 3, "ELECTED(7)")})
	f.deliver(ringnext.MsgAck, iP3, 0)
	f.Check(simtest.Want{Rules: []string{"AK-3"}, Effects: []string{"cancel ack"}, State: ackState(false, 7, -1)})
	f.deliver(ringnext.MsgAck, iP3, 0) // nothing left to acknowledge
	f.Check(simtest.Want{State: ackState(false, 7, -1)})
}

func TestAK4_ATimeoutSkipsTheSilentSuccessor(t *testing.T) {
	f := newFixture(t, iP1, `{"ack": true}`)
	f.deliver(MsgElection, iP9, 3) // ELECTION(3) to P7
	f.deliver(MsgElected, iP9, 3)  // ELECTED(3) queued behind it
	f.Timer(ringnext.TimerAck)
	f.Check(simtest.Want{Rules: []string{"AK-4"}, Sent: []string{"ELECTION(3)->0"}, Effects: []string{"set ack 7"},
		State: ackState(false, 3, 3, "ELECTION(3)", "ELECTED(3)")})
	// P3 is silent too: the ELECTION that must end at P3 is dropped, not sent on, and
	// the queued ELECTED starts at the direct successor again.
	f.Timer(ringnext.TimerAck)
	f.Check(simtest.Want{Rules: []string{"AK-4"}, Sent: []string{"ELECTED(3)->3"}, Effects: []string{"set ack 7"},
		State: ackState(false, 3, 7, "ELECTED(3)")})
	f.Timer(ringnext.TimerAck)
	f.Check(simtest.Want{Rules: []string{"AK-4"}, Sent: []string{"ELECTED(3)->0"}, Effects: []string{"set ack 7"},
		State: ackState(false, 3, 3, "ELECTED(3)")})
	f.Timer(ringnext.TimerAck)
	f.Check(simtest.Want{Rules: []string{"AK-4"}, State: ackState(false, 3, -1)})
	// A time-out with nothing unacknowledged (a stale one) does nothing.
	f.Timer(ringnext.TimerAck)
	f.Check(simtest.Want{State: ackState(false, 3, -1)})
}

func TestAK4_TheLastSurvivorSendsToItself(t *testing.T) {
	f := newFixture(t, iP3, `{"ack": true}`)
	f.Step(sim.Input{Kind: sim.Elect})
	for _, to := range []int{2, 3, 0} { // P9, P1, P7 silent in turn
		f.Timer(ringnext.TimerAck)
		f.Check(simtest.Want{Rules: []string{"AK-4"}, Sent: []string{fmt.Sprintf("ELECTION(3)->%d", to)}, Effects: []string{"set ack 7"},
			State: ackState(true, 9, unitIDs[to], "ELECTION(3)")})
	}
	f.deliver(MsgElection, iP3, 3)
	f.Check(simtest.Want{Rules: []string{"AK-2", "CR-6", "AK-1"}, Sent: []string{"ACK->0"}, Leaders: []int{3},
		State: ackState(false, 3, 3, "ELECTION(3)", "ELECTED(3)")})
	f.deliver(ringnext.MsgAck, iP3, 0) // its own ACK: the ELECTED tries P9 first again
	f.Check(simtest.Want{Rules: []string{"AK-3"}, Sent: []string{"ELECTED(3)->1"}, Effects: []string{"cancel ack", "set ack 7"},
		State: ackState(false, 3, 9, "ELECTED(3)")})
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, iP3, `{"ack": true}`)
	f.Step(sim.Input{Kind: sim.Elect})
	c := f.Node.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(ringnext.MsgAck, iP9, 0)
	f.deliver(MsgElected, iP7, 7)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original: %s, want %s", after, before)
	}
	// The clone still holds the unacknowledged ELECTION and re-sends it on a time-out.
	ctx := sim.NewContext(iP3, unitIDs)
	c.Step(ctx, &sim.Input{Kind: sim.Timer, Timer: ringnext.TimerAck})
	if got := ctx.Sent(); len(got) != 1 || got[0].Type != MsgElection || got[0].Arg != 3 || got[0].To != iP1 {
		t.Fatalf("clone re-sent %+v, want ELECTION(3) to index %d", got, iP1)
	}
}

func TestParseParams(t *testing.T) {
	def := Params{Ring: ringnext.Params{Skip: "detector", Check: true}}
	simtest.ParseTable(t, ParseParams, unitIDs, []simtest.ParseCase{
		{Raw: "", Want: def},
		{Raw: "null", Want: def},
		{Raw: " {} ", Want: def},
		{Raw: `{"ack": false}`, Want: def},
		{Raw: `{"ack": true}`, Want: Params{Ring: ringnext.Params{Skip: "detector", Ack: true, Check: true}}},
		{Raw: `{"ack": true, "ackTimeout": 5}`, Want: Params{Ring: ringnext.Params{Skip: "detector", Ack: true, AckTimeout: 5, Check: true}}},
		{Raw: `{"skip": "ack", "ackTimeout": 5}`, Want: Params{Ring: ringnext.Params{Skip: "ack", AckTimeout: 5, Check: true}}},
		{Raw: `{"skip": "none"}`, Want: Params{Ring: ringnext.Params{Skip: "none", Check: true}}},
		{Raw: ringnext.Earlier, Want: Params{Ring: ringnext.Params{Skip: "none", Check: true}}},
		{Raw: ringnext.Earlier3, Want: Params{Ring: ringnext.Params{Skip: "detector", Restart: true}}},
		{Raw: `{"restart": true}`, Want: Params{Ring: ringnext.Params{Skip: "detector", Restart: true, Check: true}}},
		{Raw: `{"ackTimeout": 5}`, Err: `params.ackTimeout: only used with "skip": "ack"`},
		{Raw: `{"skip": "none", "ackTimeout": 5}`, Err: `params.ackTimeout: only used with "skip": "ack"`},
		{Raw: `{"ack": true, "ackTimeout": 0}`, Err: `params.ackTimeout: must be a positive integer`},
		{Raw: `{"ack": true, "ackTimeout": -2}`, Err: `params.ackTimeout: must be a positive integer`},
		{Raw: `{"ack": true, "ackTimeout": 2000000000}`, Err: `params.ackTimeout: must be a positive integer`},
		{Raw: `{"ack": true, "ackTimeout": 1.5}`, Err: `params.ackTimeout: got number 1.5, want a positive integer`},
		{Raw: `{"ack": "yes"}`, Err: `params.ack: got string, want true or false`},
		{Raw: `{"skip": "sometimes"}`, Err: `params.skip: "sometimes" is unknown (allowed: "detector", "ack", "none")`},
		{Raw: `{"skip": [6]}`, Err: `params.skip: got array`},
		{Raw: `{"variant": "ids"}`, Err: `params.variant: unknown field`},
		{Raw: `[1]`, Err: `params: `},
		{Raw: `{"ack": true} {}`, Err: `params: must be a single JSON object`},
		{Raw: `{"ack": true`, Err: `params: `},
	})
}

func TestNewResolvesTheAckTimeout(t *testing.T) {
	for _, tc := range []struct {
		params   any
		maxDelay int
		want     string
	}{
		{Params{}, 3, ""}, // no ack mode, no restart: no timer at all
		{Params{Ring: ringnext.Params{Ack: true}}, 3, "set ack 7"},
		{Params{Ring: ringnext.Params{Ack: true}}, 0, "set ack 1"},
		{&Params{Ring: ringnext.Params{Ack: true, AckTimeout: 4}}, 9, "set ack 4"},
	} {
		n := Spec().New(iP3, &sim.Setup{IDs: unitIDs, Params: tc.params, MaxDelay: tc.maxDelay})
		ctx := sim.NewContext(iP3, unitIDs)
		n.Step(ctx, &sim.Input{Kind: sim.Elect})
		got := ""
		for _, e := range ctx.Effects() {
			if e.Kind == sim.SetTimer {
				got = fmt.Sprintf("set %s %d", e.Timer, e.After)
			}
		}
		if got != tc.want {
			t.Errorf("params %+v, max delay %d: %q, want %q", tc.params, tc.maxDelay, got, tc.want)
		}
	}
}

// --- whole runs through the kernel ---

func config(ids []int, seed uint64, params string, acts ...sim.Action) sim.Config {
	p, err := ParseParams([]byte(params), ids)
	if err != nil {
		panic(err)
	}
	return sim.Config{Spec: Spec(), IDs: ids, Params: p, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, Until: 2000, Actions: acts}
}

func crash(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActCrash, Node: i} }
func recoverAt(at, i int) sim.Action { return sim.Action{At: at, Do: sim.ActRecover, Node: i} }
func elect(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActElect, Node: i} }

// selfDeclared lists the ids that declared themselves leader after time 0.
func selfDeclared(evs []sim.Event, ids []int) []int {
	var out []int
	for _, e := range evs {
		if e.Type == sim.EvLeader && e.T > 0 && e.Leader == ids[e.Node] {
			out = append(out, e.Leader)
		}
	}
	return out
}

func checkAgree(t *testing.T, seed uint64, evs []sim.Event, ids []int, want int) {
	t.Helper()
	if v := simtest.Violations(evs); len(v) > 0 {
		t.Errorf("seed %d: violations %v", seed, v)
	}
	if d := ringtest.Disagreement(evs, ids, want); d != "" {
		t.Errorf("seed %d: %s", seed, d)
	}
}

// oneInitiator runs an election started by index s on a random ring with no crash and
// checks the messages: ELECTION travels to the highest id (h hops) and then all round
// (N), ELECTED all round (N). It returns the total.
func oneInitiator(t *testing.T, seed uint64, ids []int, s int, params string) int {
	t.Helper()
	n := len(ids)
	hi := slices.Index(ids, slices.Max(ids))
	h := (hi - s + n) % n
	cfg := config(ids, seed, params, elect(1, s))
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 4} // not FIFO: it does not matter here
	evs := simtest.Run(t, cfg)
	checkAgree(t, seed, evs, ids, ids[hi])
	if got := selfDeclared(evs, ids); !slices.Equal(got, []int{ids[hi]}) {
		t.Errorf("seed %d ring %v, P%d starts: self-declared %v, want only P%d", seed, ids, ids[s], got, ids[hi])
	}
	for typ, want := range map[string]int{MsgElection: h + n, MsgElected: n} {
		if got := simtest.CountMsgs(evs, typ); got != want {
			t.Errorf("seed %d ring %v, P%d starts: %d %s, want %d", seed, ids, ids[s], got, typ, want)
		}
	}
	return simtest.CountMsgs(evs, MsgElection) + simtest.CountMsgs(evs, MsgElected)
}

func TestRunBestCaseTheHighestStarts2N(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		for seed := uint64(1); seed <= 5; seed++ {
			ids := ringtest.RandomRing(rand.New(rand.NewPCG(seed, uint64(n))), n)
			got := oneInitiator(t, seed, ids, slices.Index(ids, slices.Max(ids)), "")
			if want := Spec().Costs[0].Value(n); float64(got) != want || got != 2*n {
				t.Errorf("N=%d seed %d: %d messages, want 2N = %v", n, seed, got, want)
			}
		}
	}
}

func TestRunWorstCaseTheOneAfterTheHighestStarts3NMinus1(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		for seed := uint64(1); seed <= 5; seed++ {
			ids := ringtest.RandomRing(rand.New(rand.NewPCG(seed, uint64(n))), n)
			after := (slices.Index(ids, slices.Max(ids)) + 1) % n
			got := oneInitiator(t, seed, ids, after, "")
			if want := Spec().Costs[1].Value(n); float64(got) != want || got != 3*n-1 {
				t.Errorf("N=%d seed %d: %d messages, want 3N-1 = %v", n, seed, got, want)
			}
		}
	}
}

// Every process starting once in turn: on average 2N + (N-1)/2, the notes' 2N + N/2.
func TestRunAverageOverInitiators(t *testing.T) {
	for _, n := range []int{2, 4, 7, 10} {
		ids := ringtest.RandomRing(rand.New(rand.NewPCG(uint64(n), 7)), n)
		total := 0
		for s := range ids {
			total += oneInitiator(t, uint64(s), ids, s, "")
		}
		if got, want := float64(total)/float64(n), Spec().Costs[2].Value(n); got != want {
			t.Errorf("N=%d: %v messages on average, want %v", n, got, want)
		}
		if lo, hi := Spec().Costs[0].Value(n), Spec().Costs[1].Value(n); float64(total) < lo*float64(n) || float64(total) > hi*float64(n) {
			t.Errorf("N=%d: average outside [2N, 3N-1]", n)
		}
	}
}

// Acknowledgements add one ACK per ring message and change nothing else while nobody
// crashes: no time-out fires.
func TestRunAckModeWithoutCrashesOnlyAddsACKs(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 2 + r.IntN(9)
		ids := ringtest.RandomRing(r, n)
		s := r.IntN(n)
		oneInitiator(t, seed, ids, s, `{"ack": true}`)
		evs := simtest.Run(t, config(ids, seed, `{"ack": true}`, elect(1, s)))
		ring := simtest.CountMsgs(evs, MsgElection) + simtest.CountMsgs(evs, MsgElected)
		if got := simtest.CountMsgs(evs, ringnext.MsgAck); got != ring {
			t.Errorf("seed %d: %d ACKs for %d ring messages", seed, got, ring)
		}
		if got := ringtest.Timers(evs, ringnext.TimerAck); got != 0 {
			t.Errorf("seed %d: %d ack time-outs without a crash", seed, got)
		}
	}
}

// Everyone starts at once. On a ring in increasing order each id is swallowed by its
// successor (CR-5) except the highest: 2N-1 ELECTION. In decreasing order nobody
// swallows anything until the highest: each id travels up to it, N(N+1)/2 ELECTION,
// Chang-Roberts' quadratic worst case. Either way one ELECTED round, on FIFO channels:
// without them an ELECTED can overtake a slow ELECTION, which then starts a new round.
func TestRunConcurrentInitiatorsAreSuppressed(t *testing.T) {
	for _, n := range []int{3, 6, 10} {
		for _, order := range []string{"increasing", "decreasing"} {
			ids := simtest.IDs(n)
			if order == "decreasing" {
				slices.Reverse(ids)
			}
			var acts []sim.Action
			for i := range ids {
				acts = append(acts, elect(0, i))
			}
			for seed := uint64(1); seed <= 5; seed++ {
				cfg := config(ids, seed, "", acts...)
				cfg.Network.FIFO = true
				evs := simtest.Run(t, cfg)
				checkAgree(t, seed, evs, ids, n-1)
				swallowed := 0
				for i := range ids {
					for _, r := range simtest.Rules(evs, i) {
						if r == "CR-5" {
							swallowed++
						}
					}
				}
				wantElection, wantSwallowed := 2*n-1, n-1
				if order == "decreasing" {
					wantElection, wantSwallowed = n*(n+1)/2, n-1 // the highest swallows the others
				}
				if got := simtest.CountMsgs(evs, MsgElection); got != wantElection {
					t.Errorf("N=%d %s seed %d: %d ELECTION, want %d", n, order, seed, got, wantElection)
				}
				if got := simtest.CountMsgs(evs, MsgElected); got != n {
					t.Errorf("N=%d %s seed %d: %d ELECTED, want %d", n, order, seed, got, n)
				}
				if swallowed != wantSwallowed {
					t.Errorf("N=%d %s seed %d: CR-5 fired %d times, want %d", n, order, seed, swallowed, wantSwallowed)
				}
			}
		}
	}
}

// The notes' example (seed 004, "Token Ring Election Algorithm"): six processes in the
// ring order 3, 5, 0, 1, 4, 6; 6, the leader, fails; 3 notices and starts; 5 wins. The
// five living processes appear in that order and the message goes from 4 straight back
// to 3, so 6 sits between 4 and 3.
const notesExample = `{
  "version": 2,
  "algorithm": "ring",
  "title": "Chang-Roberts: 6 fails, 3 starts the election, 5 wins",
  "about": "Six processes form a one-way ring in the order 3, 5, 0, 1, 4, 6; 6 has the highest id and is the leader until it crashes. 3 notices and sends ELECTION(3) to its successor and becomes a participant (CR-2). 5 replaces the smaller 3 with its own id (CR-4); 0, 1 and 4 pass the larger 5 on unchanged (CR-3). Acknowledgements are on: 4 gets no ACK from the crashed 6, so after its time-out it presumes 6 dead and sends to the next one, 3 (AK-4). 3 forwards 5 as well, and when 5 sees its own id come back it knows nobody alive is larger (CR-6): it is the leader and sends ELECTED(5) round the ring, skipping 6 the same way. Each process records 5 (CR-7) and 5 stops the announcement when it returns (CR-8). On the live ring of N = 5 that is 6 ELECTION (one hop from 3 to 5, then a full round) and 5 ELECTED, 2N + 1 messages, plus the two lost to 6 and an ACK for each one delivered.",
  "ids": [3, 5, 0, 1, 4, 6],
  "seed": 1,
  "network": {"delay": [1, 3], "fifo": false},
  "params": {"ack": true},
  "events": [
    {"at": 0, "do": "crash", "node": 6},
    {"at": 2, "do": "elect", "node": 3}
  ],
  "until": 100
}`

func TestRunNotesExample6Fails3Starts5Wins(t *testing.T) {
	want := []string{
		"ELECTION(3) 3->5", "ELECTION(5) 5->0", "ELECTION(5) 0->1", "ELECTION(5) 1->4",
		"ELECTION(5) 4->6", "ELECTION(5) 4->3", "ELECTION(5) 3->5",
		"ELECTED(5) 5->0", "ELECTED(5) 0->1", "ELECTED(5) 1->4", "ELECTED(5) 4->6", "ELECTED(5) 4->3", "ELECTED(5) 3->5",
	}
	base := ringtest.Config(t, Spec(), notesExample)
	for seed := uint64(0); seed <= 30; seed++ {
		cfg := base
		if seed > 0 {
			cfg.Seed = seed
		}
		evs := simtest.Run(t, cfg)
		if got := ringtest.Hops(evs, Spec(), cfg.IDs, ringnext.MsgAck); !slices.Equal(got, want) {
			t.Fatalf("seed %d: ring messages\n%v\nwant\n%v", cfg.Seed, got, want)
		}
		checkAgree(t, cfg.Seed, evs, cfg.IDs, 5)
		if got := selfDeclared(evs, cfg.IDs); !slices.Equal(got, []int{5}) {
			t.Errorf("seed %d: self-declared %v, want only 5", cfg.Seed, got)
		}
		ix := func(id int) int { return slices.Index(cfg.IDs, id) }
		for id, rules := range map[int][]string{
			3: {"CR-1", "CR-2", "AK-3", "AK-2", "CR-3", "AK-3", "AK-2", "CR-7", "AK-3"},
			5: {"CR-1", "AK-2", "CR-4", "AK-3", "AK-2", "CR-6", "AK-3", "AK-2", "CR-8"},
			4: {"CR-1", "AK-2", "CR-3", "AK-4", "AK-3", "AK-2", "CR-7", "AK-4", "AK-3"},
			6: {"CR-1"},
		} {
			if got := simtest.Rules(evs, ix(id)); !slices.Equal(got, rules) {
				t.Errorf("seed %d: P%d fired %v, want %v", cfg.Seed, id, got, rules)
			}
		}
		if got := ringtest.Timers(evs, ringnext.TimerAck); got != 2 {
			t.Errorf("seed %d: %d ack time-outs, want 2 (4 waiting for 6, twice)", cfg.Seed, got)
		}
	}
}

// With "skip": "none" (the earlier default) nobody can tell that 6 crashed: 4 sends
// the ELECTION to it, the message is lost, and the election dies there. The monitor
// sees everyone still following the crashed 6 once the run is quiet.
func TestRunSkipNoneACrashedSuccessorSwallowsTheElection(t *testing.T) {
	cfg := ringtest.Config(t, Spec(), notesExample)
	p := simtest.Params(t, Spec(), ringnext.Earlier, cfg.IDs)
	cfg.Params = p
	evs := simtest.Run(t, cfg)
	want := []string{"ELECTION(3) 3->5", "ELECTION(5) 5->0", "ELECTION(5) 0->1", "ELECTION(5) 1->4", "ELECTION(5) 4->6"}
	if got := ringtest.Hops(evs, Spec(), cfg.IDs); !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	if got := simtest.Count(evs, sim.EvDrop); got != 1 {
		t.Errorf("%d drops, want the one ELECTION lost at 6", got)
	}
	v := simtest.Violations(evs)
	if len(v) != 1 || !strings.HasPrefix(v[0], sim.PropLeader+": all take P6 as leader, but P6 is crashed") {
		t.Errorf("violations %v, want the leader monitor to report the crashed P6", v)
	}
}

// Several crashed processes in a row, the highest among them: the sender skips them one
// time-out at a time, and the highest live id wins.
func TestRunSkipsSeveralCrashedInARow(t *testing.T) {
	ids := []int{2, 7, 11, 4, 9, 1, 5, 3} // 11, 4 and 9 crash: 7 must reach 1
	for seed := uint64(1); seed <= 20; seed++ {
		evs := simtest.Run(t, config(ids, seed, `{"ack": true}`, crash(0, 2), crash(0, 3), crash(0, 4), elect(1, 0)))
		checkAgree(t, seed, evs, ids, 7)
		// 7 times out on 11, 4 and 9, once for its ELECTION and once for its ELECTED.
		if got := ringtest.Timers(evs, ringnext.TimerAck); got != 6 {
			t.Errorf("seed %d: %d ack time-outs, want 6", seed, got)
		}
		// ELECTION: 2->7, 7->11, 7->4, 7->9, 7->1, 1->5, 5->3, 3->2, 2->7; ELECTED: 8.
		for typ, want := range map[string]int{MsgElection: 9, MsgElected: 8} {
			if got := simtest.CountMsgs(evs, typ); got != want {
				t.Errorf("seed %d: %d %s, want %d", seed, got, typ, want)
			}
		}
	}
}

// Everyone else has crashed: the survivor's ELECTION comes back to itself.
func TestRunTheLastSurvivorElectsItself(t *testing.T) {
	ids := []int{4, 8, 2}
	evs := simtest.Run(t, config(ids, 1, `{"ack": true}`, crash(0, 1), crash(0, 2), elect(1, 0)))
	checkAgree(t, 1, evs, ids, 4)
	// Each message tries the direct successor first: a recovered one would be found.
	want := []string{"ELECTION(4) 4->8", "ELECTION(4) 4->2", "ELECTION(4) 4->4", "ELECTED(4) 4->8", "ELECTED(4) 4->2", "ELECTED(4) 4->4"}
	if got := ringtest.Hops(evs, Spec(), ids, ringnext.MsgAck); !slices.Equal(got, want) {
		t.Errorf("messages %v, want %v", got, want)
	}
}

// A crash during the election is what plain Chang-Roberts does not survive: 5's
// ELECTION is on its way round when 5 crashes. The process before 5 finds it gone and
// drops the message (AK-4) rather than let it circle for ever, but without the restart
// (CR-10) everyone else is left a participant and swallows any smaller election: a new
// one from 0 changes nothing.
func TestRunWithoutRestartTheCandidateCrashingDuringTheElectionStallsIt(t *testing.T) {
	ids := simtest.IDs(6)
	cfg := config(ids, 1, `{"ack": true, "restart": false}`, elect(1, 1), crash(8, 5), elect(50, 0))
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1}
	cfg.Until = 200
	evs := simtest.Run(t, cfg)
	// ELECTION(5) leaves 5 at t=5 and reaches 4 at t=10, after 5 crashed.
	dropped := false
	for _, e := range evs {
		if e.Type == sim.EvRule && e.Node == 4 && e.Rule == "AK-4" {
			dropped = true
		}
		if e.Type == sim.EvSend && e.Msg.From == 4 && e.Msg.To == 0 {
			t.Errorf("t=%d: 4 sent %s to 0, want the ELECTION for the crashed 5 dropped", e.T, e.Msg.Type)
		}
	}
	if !dropped {
		t.Error("4 never gave up on the crashed 5")
	}
	if got := simtest.Rules(evs, 0); !slices.Equal(got, []string{"CR-1", "AK-2", "CR-3", "AK-3"}) {
		t.Errorf("0 fired %v: a participant must not start a second election", got)
	}
	if got := simtest.CountMsgs(evs, MsgElected); got != 0 {
		t.Errorf("%d ELECTED sent, want none", got)
	}
	v := simtest.Violations(evs)
	if len(v) != 1 || !strings.HasPrefix(v[0], sim.PropLeader+": all take P5 as leader, but P5 is crashed") {
		t.Errorf("violations %v, want the leader monitor to report the crashed P5", v)
	}
}

func TestRunRecoveredHighestTakesOver(t *testing.T) {
	ids := []int{3, 5, 0, 1, 4, 6}
	for seed := uint64(1); seed <= 20; seed++ {
		evs := simtest.Run(t, config(ids, seed, `{"ack": true}`, crash(0, 5), elect(1, 0), recoverAt(150, 5)))
		checkAgree(t, seed, evs, ids, 6)
		if got := selfDeclared(evs, ids); !slices.Equal(got, []int{5, 6}) {
			t.Errorf("seed %d: self-declared %v, want 5 then 6", seed, got)
		}
		if got := simtest.Rules(evs, 5); len(got) < 3 || !slices.Equal(got[:3], []string{"CR-1", "CR-9", "CR-2"}) {
			t.Errorf("seed %d: 6 fired %v, want CR-9 and CR-2 on recovery", seed, got)
		}
	}
}

// The seed sweep: random N, ring order, delays, FIFO or not, crashes before the
// elections (with acknowledgements, so they are skipped) and several elections at once.
// Every run must go quiet, the monitors find nothing, and every live process follows
// the highest live id.
func TestRunSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xc4a9))
		n := 2 + r.IntN(11)
		ids := ringtest.RandomRing(r, n)
		acts, up := ringtest.PromiseActions(r, n)
		params := ""
		if slices.ContainsFunc(acts, func(a sim.Action) bool { return a.Do == sim.ActCrash }) || r.IntN(2) == 0 {
			params = `{"ack": true}`
		}
		cfg := config(ids, seed, params, acts...)
		dmax := 1 + r.IntN(5)
		cfg.Network = sim.Network{DelayMin: r.IntN(dmax + 1), DelayMax: dmax, FIFO: r.IntN(2) == 0}
		cfg.Until = 20000
		s, evs := ringtest.Run(t, cfg)
		if !s.Quiescent() {
			t.Errorf("seed %d (N=%d): still busy at until=%d", seed, n, cfg.Until)
			continue
		}
		checkAgree(t, seed, evs, ids, ringtest.HighestUp(ids, up))
	}
}

// Crashes anywhere, during elections too, with recoveries: the algorithm promises no
// leader then, but no message may go round for ever: every run goes quiet.
func TestRunCrashesDuringElectionsNeverLoopForever(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x100f))
		n := 2 + r.IntN(9)
		ids := ringtest.RandomRing(r, n)
		acts := simtest.RandomActions(seed, n, sim.Election, simtest.Workload{Requests: 1 + r.IntN(6), Span: 60, Crashes: 1 + r.IntN(n), Recover: r.IntN(2) == 0})
		cfg := config(ids, seed, `{"ack": true}`, acts...)
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1 + r.IntN(4), FIFO: r.IntN(2) == 0}
		cfg.Until = 20000
		if s, _ := ringtest.Run(t, cfg); !s.Quiescent() {
			t.Errorf("seed %d (N=%d): messages still going round at until=%d", seed, n, cfg.Until)
		}
	}
}

func TestDT1_TheDetectorSkipsCrashedSuccessors(t *testing.T) {
	for _, tc := range []struct {
		name string
		down []int
		want []string
		rule []string
	}{
		{"successor up", nil, []string{"ELECTION(3)->1"}, []string{"CR-2"}},
		{"successor down", []int{iP9}, []string{"ELECTION(3)->2"}, []string{"CR-2", "DT-1"}},
		{"two down in a row", []int{iP9, iP1}, []string{"ELECTION(3)->3"}, []string{"CR-2", "DT-1"}},
		{"all others down", []int{iP9, iP1, iP7}, []string{"ELECTION(3)->0"}, []string{"CR-2", "DT-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP3, "")
			up := []bool{true, true, true, true}
			for _, i := range tc.down {
				up[i] = false
			}
			f.Ctx.SetUp(up)
			f.Step(sim.Input{Kind: sim.Elect})
			f.Check(simtest.Want{Rules: tc.rule, Sent: tc.want, State: state(true, 9)})
		})
	}
}

func TestCR10_AParticipantWithNoOutcomeRestartsTheElection(t *testing.T) {
	f := newFixture(t, iP1, `{"restart": true}`)
	f.deliver(MsgElection, iP9, 9) // CR-3: passes 9 on and waits for the outcome
	f.Check(simtest.Want{Rules: []string{"CR-3"}, Sent: []string{"ELECTION(9)->3"}, Effects: []string{"set restart 37"}, State: state(true, 9)})
	f.Timer(ringnext.TimerRestart) // 9 crashed during its election: no ELECTED came
	f.Check(simtest.Want{Rules: []string{"CR-10", "CR-2"}, Sent: []string{"ELECTION(1)->3"}, Effects: []string{"set restart 37"}, State: state(true, 9)})
	f.deliver(MsgElected, iP7, 7) // the new election's outcome stops the wait
	f.Check(simtest.Want{Rules: []string{"CR-7"}, Sent: []string{"ELECTED(7)->3"}, Effects: []string{"cancel restart"}, Leaders: []int{7}, State: state(false, 7)})
	f.Timer(ringnext.TimerRestart) // a late firing after the outcome changes nothing
	f.Check(simtest.Want{State: state(false, 7)})
}

// The defaults are the notes' version: with no params the candidate's crash during its
// own election is survived without any process knowing N. 5's ELECTION reaches 4 after
// 5 crashed: 4 finds the candidate dead (DT-1) and sends its own id instead (CR-11), and
// 4, the highest live id, wins. With "restart" (the earlier default, which needs N) the
// participants time out and restart instead (CR-10).
func TestRunByDefaultAnElectionThatDiedIsRestarted(t *testing.T) {
	ids := simtest.IDs(6)
	for _, tc := range []struct{ params, rule string }{
		{"", "CR-11"},
		{`{"restart": true, "check": false}`, "CR-10"},
	} {
		cfg := config(ids, 1, tc.params, elect(1, 1), crash(8, 5))
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1}
		evs := simtest.Run(t, cfg)
		// ELECTION(5) leaves 5 at t=5 and reaches 4 at t=9, after 5 crashed: 4 skips 5 (DT-1).
		if got := simtest.Rules(evs, 4); !slices.Contains(got, "DT-1") {
			t.Errorf("%s: 4 fired %v, want DT-1 finding the crashed 5", tc.params, got)
		}
		checkAgree(t, 1, evs, ids, 4)
		restarts := ringtest.Timers(evs, ringnext.TimerRestart)
		if (tc.rule == "CR-10") != (restarts > 0) {
			t.Errorf("%s: %d restart time-outs", tc.params, restarts)
		}
		who := 4
		if tc.rule == "CR-10" {
			who = 0
		}
		if got := simtest.Rules(evs, who); !slices.Contains(got, tc.rule) {
			t.Errorf("%s: %d fired %v, want %s", tc.params, who, got, tc.rule)
		}
	}
}

// The lecture's case: the leader (highest id) has crashed and any one process starts.
// Each way of skipping elects the highest live id, FIFO or not, over 200 seeds.
func TestRunHighestCrashedAnyStarterElectsTheHighestAlive(t *testing.T) {
	for _, params := range []string{"", `{"skip": "ack"}`} {
		t.Run(params, func(t *testing.T) {
			p := simtest.Params(t, Spec(), params, nil)
			ringtest.HighestCrashedAnyStarter(t, Spec(), p, 200, func(seed uint64) []int {
				return ringtest.RandomRing(rand.New(rand.NewPCG(seed, 14)), 6)
			})
		})
	}
}

// On a ring without crashes the default costs exactly the notes' figures: no message
// besides ELECTION and ELECTED (2N best, 3N-1 worst are checked above by initiator).
func TestRunDefaultAddsNoMessageWithoutCrashes(t *testing.T) {
	ids := []int{3, 5, 0, 1, 4, 6}
	evs := simtest.Run(t, config(ids, 1, "", elect(1, 5)))
	if got := simtest.Count(evs, sim.EvSend); got != 2*len(ids) {
		t.Errorf("%d messages, want 2N = %d", got, 2*len(ids))
	}
}

// 001's "election started by process 17", as curated: on the ring 3, 17, 4, 24, 9, 1,
// 15, 28, 17's id gives way to 24 and then 28, which goes all round and wins: 6 + 8
// ELECTION and 8 ELECTED, 22 messages for N = 8 (between 2N and 3N-1).
func TestRunNotesElectionStartedBy17(t *testing.T) {
	b, err := os.ReadFile("../../scenarios/library/ring-started-by-17.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := ringtest.Config(t, Spec(), string(b))
	evs := simtest.Run(t, cfg)
	checkAgree(t, cfg.Seed, evs, cfg.IDs, 28)
	for typ, want := range map[string]int{MsgElection: 14, MsgElected: 8} {
		if got := simtest.CountMsgs(evs, typ); got != want {
			t.Errorf("%d %s, want %d", got, typ, want)
		}
	}
	want := []string{"ELECTION(17) 17->4", "ELECTION(17) 4->24", "ELECTION(24) 24->9", "ELECTION(24) 9->1", "ELECTION(24) 1->15", "ELECTION(24) 15->28", "ELECTION(28) 28->3"}
	if got := ringtest.Hops(evs, Spec(), cfg.IDs); !slices.Equal(got[:len(want)], want) {
		t.Errorf("messages start %v, want %v", got[:len(want)], want)
	}
}

// An election can die without a crash: P7 calls one just as the announcement of the
// previous one passes it, its ELECTION(43) overtakes that ELECTED on the way (the
// channels are not FIFO) and P54, still a participant of the election being
// announced, swallows it (CR-5). P7, P43, P35, P13 and P2 joined the dead election and
// no ELECTED will pass them again. In plain Chang-Roberts, and by default (no process
// knows N, so none can time out), they stay participants for ever, and a participant
// swallows every smaller id of the elections to come; with "restart" (a time-out of 3N
// hops) they call a new one (CR-10) and everyone ends with P58. A time-out cannot tell
// this from a crash, and needs not: either way the election is dead.
func TestRunAParticipantOfAnElectionSwallowedBehindTheAnnouncementRestarts(t *testing.T) {
	ids := []int{7, 43, 35, 13, 2, 54, 26, 58}
	acts := []sim.Action{elect(3, 0), elect(9, 3), elect(13, 3), elect(19, 0), elect(21, 7), elect(24, 4), elect(28, 0)}
	stuck := []int{7, 43, 35, 13, 2}
	for _, params := range []string{`{"restart": true}`, ""} {
		cfg := config(ids, 1801, params, acts...)
		cfg.Network = sim.Network{DelayMin: 0, DelayMax: 1}
		s, evs := ringtest.Run(t, cfg)
		swallowed := false
		for _, e := range evs {
			if e.Type == sim.EvRule && e.Rule == "CR-5" && ids[e.Node] == 54 && e.T == 29 {
				swallowed = true
			}
		}
		if !swallowed {
			t.Fatalf("%s: P54 did not swallow the ELECTION at t=29: the run no longer shows the case", params)
		}
		var restarted, participants []int
		for _, e := range evs {
			if e.Type == sim.EvRule && e.Rule == "CR-10" {
				restarted = append(restarted, ids[e.Node])
			}
		}
		for i, id := range ids {
			if strings.Contains(string(sim.EncodeState(s.Node(i))), `"participant":true`) {
				participants = append(participants, id)
			}
		}
		if params != "" {
			// P2 is drawn into P13's new election before its own time-out runs out.
			if want := stuck[:4]; !slices.Equal(restarted, want) || len(participants) != 0 {
				t.Errorf("restart: restarted %v, participants at the end %v; want %v restarted and none left", restarted, participants, want)
			}
			checkAgree(t, cfg.Seed, evs, ids, 58)
			continue
		}
		if len(restarted) != 0 || !slices.Equal(participants, stuck) {
			t.Errorf("default, without restart: restarted %v, participants at the end %v; want none restarted and %v stuck", restarted, participants, stuck)
		}
	}
}

// 003: "the elected process is the largest non-crashed one". The highest id has
// crashed, one process starts, and one more crashes at any time during the election:
// the starter, the would-be winner while its ELECTED goes round, anyone. By default
// every run elects the largest live id: a process that finds the announced leader
// crashed starts a new election (CR-12), a dead candidate is replaced (CR-11), a
// message lost with a crashed process is sent again (DT-2). With the earlier defaults
// (epoch 2: a restart time-out, no check) some runs end following a dead leader.
func TestRunOneMoreCrashDuringTheElectionElectsTheLargestLiveID(t *testing.T) {
	for _, tc := range []struct {
		params string
		fail   bool
	}{
		{"", false},
		{ringnext.Earlier3, true},
	} {
		p := simtest.Params(t, Spec(), tc.params, nil)
		total, bad := 0, 0
		first := ""
		for _, n := range []int{4, 6} {
			for _, fifo := range []bool{true, false} {
				runs, failed, f := ringtest.OneMoreCrashDuringTheElection(t, Spec(), p, n, 2, fifo)
				total, bad = total+runs, bad+failed
				if first == "" {
					first = f
				}
			}
		}
		t.Logf("%q: %d of %d runs failed", tc.params, bad, total)
		if (bad > 0) != tc.fail {
			t.Errorf("%q: %d of %d runs failed, first: %s", tc.params, bad, total, first)
		}
	}
}

// checked is a node's state with check on while messages wait for their check.
func checked(participant bool, leader int, unchecked ...string) string {
	return fmt.Sprintf(`{"participant":%t,"leader":%d,"unchecked":["%s"]}`, participant, leader, strings.Join(unchecked, `","`))
}

func TestDT2_AMessageLostWithACrashedReceiverIsSentAgain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		down  bool
		rules []string
		sent  []string
		state string
	}{
		{"receiver still up", false, nil, nil, state(true, 9)},
		{"receiver crashed since", true, []string{"DT-2", "DT-1"}, []string{"ELECTION(3)->2"}, checked(true, 9, "ELECTION(3)->1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP3, `{"check": true}`)
			f.Step(sim.Input{Kind: sim.Elect})
			f.Check(simtest.Want{Rules: []string{"CR-2"}, Sent: []string{"ELECTION(3)->1"}, Effects: []string{"set check 4"}, State: checked(true, 9, "ELECTION(3)->9")})
			f.Ctx.SetUp([]bool{true, !tc.down, true, true})
			f.Timer(ringnext.TimerCheck)
			var timers []string
			if tc.down {
				timers = []string{"set check 4"}
			}
			f.Check(simtest.Want{Rules: tc.rules, Sent: tc.sent, Effects: timers, State: tc.state})
		})
	}
}

func TestCR11_ACrashedCandidateIsReplacedByTheOwnID(t *testing.T) {
	f := newFixture(t, iP3, `{"check": true}`)
	f.Ctx.SetUp([]bool{true, false, true, true}) // P9, the candidate, has crashed
	f.deliver(MsgElection, iP7, 9)
	f.Check(simtest.Want{Rules: []string{"CR-3", "DT-1", "CR-11", "DT-1"}, Sent: []string{"ELECTION(3)->2"}, Effects: []string{"set check 4"},
		State: checked(true, 9, "ELECTION(3)->1")})
}

func TestCR12_ACrashedAnnouncedLeaderStartsANewElection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		down   bool
		expect simtest.Want
	}{
		{"leader up", false, simtest.Want{Rules: []string{"CR-7"}, Sent: []string{"ELECTED(7)->3"}, Effects: []string{"set check 4"}, Leaders: []int{7},
			State: checked(false, 7, "ELECTED(7)->7")}},
		{"leader crashed", true, simtest.Want{Rules: []string{"CR-12", "CR-2", "DT-1"}, Sent: []string{"ELECTION(1)->0"}, Effects: []string{"set check 4"},
			State: checked(true, 9, "ELECTION(1)->3")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP1, `{"check": true}`)
			f.Ctx.SetUp([]bool{true, true, true, !tc.down})
			f.deliver(MsgElected, iP9, 7)
			f.Check(tc.expect)
		})
	}
}

func TestCR13_AParticipantWhoseIDCrashedSendsItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		down   bool
		expect simtest.Want
	}{
		{"the id sent on is up: CR-5", false, simtest.Want{Rules: []string{"CR-5"}, State: state(true, 9)}},
		{"the id sent on crashed", true, simtest.Want{Rules: []string{"CR-13", "DT-1"}, Sent: []string{"ELECTION(3)->2"}, Effects: []string{"set check 4"},
			State: checked(true, 9, "ELECTION(3)->1")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP3, `{"check": true}`)
			f.deliver(MsgElection, iP7, 9) // CR-3: P3 sends 9 on and is a participant
			f.Timer(ringnext.TimerCheck)   // 9 got it
			f.Ctx.SetUp([]bool{true, !tc.down, true, true})
			f.deliver(MsgElection, iP7, 1)
			f.Check(tc.expect)
		})
	}
}

func TestCR14_ACopyOfAnElectionAlreadyWonIsDiscarded(t *testing.T) {
	f := newFixture(t, iP9, `{"check": true}`)
	f.deliver(MsgElection, iP3, 9) // not a participant: it has won this one already
	f.Check(simtest.Want{Rules: []string{"CR-14"}, State: state(false, 9)})
}
