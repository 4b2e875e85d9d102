package ringlist

import (
	"encoding/json"
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

func (f *fixture) deliver(typ string, from, arg int, list ...int) {
	f.Deliver(sim.Message{Type: typ, From: from, Arg: arg, Vec: list})
}

// sentText writes a message as "ELECT[list]->index", "ELECTED(k)[list]->index" or
// "ACK->index".
func sentText(m sim.Message) string {
	switch m.Type {
	case ringnext.MsgAck:
		return simtest.TypeTo(m)
	case MsgElected:
		return fmt.Sprintf("ELECTED(%d)%v->%d", m.Arg, m.Vec, m.To)
	}
	return fmt.Sprintf("%s%v->%d", m.Type, m.Vec, m.To)
}

// Every rule has a test named after it; the ring elections' shared rules (ringnext's
// DT and AK) may be tested in either.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec(), ".", "../ring") }

func state(participant bool, active string, leader int) string {
	return fmt.Sprintf(`{"participant":%t,"active":%s,"leader":%d}`, participant, active, leader)
}

// ackState is a node's state in ack mode; unacked lists its unacknowledged messages.
func ackState(participant bool, active string, leader, awaiting int, unacked ...string) string {
	list := "["
	for i, m := range unacked {
		if i > 0 {
			list += ","
		}
		list += `"` + m + `"`
	}
	return fmt.Sprintf(`{"participant":%t,"active":%s,"leader":%d,"awaiting":%d,"unacked":%s]}`, participant, active, leader, awaiting, list)
}

const ids = `{"variant": "ids"}`

func TestAL1_StartsWithAnEmptyActiveListAndTheHighestIDAsLeader(t *testing.T) {
	for _, params := range []string{"", ids} {
		for self := range unitIDs {
			f := newFixture(t, self, params)
			f.Check(simtest.Want{Rules: []string{"AL-1"}, Leaders: []int{9}, State: state(false, "[]", 9)})
		}
	}
	f := newFixture(t, iP3, `{"ack": true}`)
	f.Check(simtest.Want{Rules: []string{"AL-1"}, Leaders: []int{9}, State: ackState(false, "[]", 9, -1)})
}

// --- variant list ---

func TestAL2_SendsAnElectHoldingItsOwnID(t *testing.T) {
	f := newFixture(t, iP7, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"AL-2"}, Sent: []string{"ELECT[7]->0"}, State: state(true, "[7]", 9)})
	// Noticing again starts a fresh ELECT: it costs messages, never correctness.
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"AL-2"}, Sent: []string{"ELECT[7]->0"}, State: state(true, "[7]", 9)})
}

func TestAL3_AddsItsIDAndPassesTheListOn(t *testing.T) {
	f := newFixture(t, iP1, "")
	f.deliver(MsgElect, iP9, 0, 3, 9)
	f.Check(simtest.Want{Rules: []string{"AL-3"}, Sent: []string{"ELECT[3 9 1]->3"}, State: state(true, "[3,9,1]", 9)})
	// A second election going round at the same time collects it too.
	f.deliver(MsgElect, iP9, 0, 9)
	f.Check(simtest.Want{Rules: []string{"AL-3"}, Sent: []string{"ELECT[9 1]->3"}, State: state(true, "[9,1]", 9)})
}

func TestAL4_ItsIDBackMeansTheListIsCompleteAndTheHighestIsAnnounced(t *testing.T) {
	f := newFixture(t, iP1, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElect, iP9, 0, 1, 7, 3)
	f.Check(simtest.Want{Rules: []string{"AL-4"}, Sent: []string{"ELECTED(7)[1 7 3]->3"}, Leaders: []int{7},
		State: state(false, "[1,7,3]", 7)})
}

// The ELECT came back to P3 without passing its initiator P7 and P9: the list's first
// ids were passed over on the way back, so they are down; P3 announces from its own id.
func TestAL4_IDsAheadOfItsOwnWereSkippedAsCrashed(t *testing.T) {
	f := newFixture(t, iP3, "")
	f.deliver(MsgElect, iP1, 0, 7, 9, 3, 1)
	f.Check(simtest.Want{Rules: []string{"AL-4"}, Sent: []string{"ELECTED(3)[3 1]->1"}, Leaders: []int{3},
		State: state(false, "[3,1]", 3)})
}

func TestAL5_RecordsTheLeaderAndTheListAndPassesThemOn(t *testing.T) {
	for _, participant := range []bool{false, true} {
		t.Run(fmt.Sprintf("participant=%t", participant), func(t *testing.T) {
			f := newFixture(t, iP9, "")
			if participant {
				f.deliver(MsgElect, iP3, 0, 1, 7, 3)
			}
			f.deliver(MsgElected, iP3, 7, 1, 7, 3)
			f.Check(simtest.Want{Rules: []string{"AL-5"}, Sent: []string{"ELECTED(7)[1 7 3]->2"}, Leaders: []int{7},
				State: state(false, "[1,7,3]", 7)})
		})
	}
}

func TestAL6_TheAnnouncerStopsItsOwnAnnouncement(t *testing.T) {
	f := newFixture(t, iP1, "")
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElect, iP9, 0, 1, 7, 3, 9)
	f.deliver(MsgElected, iP9, 9, 1, 7, 3, 9)
	f.Check(simtest.Want{Rules: []string{"AL-6"}, State: state(false, "[1,7,3,9]", 9)})
}

// --- variant ids ---

func TestAL7_StartsItsActiveListAndSendsItsID(t *testing.T) {
	f := newFixture(t, iP7, ids)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"AL-7"}, Sent: []string{"ELECT[7]->0"}, State: state(true, "[7]", 9)})
	// A participant is already in an election: noticing again does nothing.
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{State: state(true, "[7]", 9)})
}

// The notes' example: P3 receives elect(2) first, makes its list [2,3], and sends
// elect(3) followed by elect(2).
func TestAL8_TheFirstElectSeenStartsTheListAndSendsItsOwnIDFirst(t *testing.T) {
	f := newFixture(t, iP3, ids)
	f.deliver(MsgElect, iP7, 0, 7)
	f.Check(simtest.Want{Rules: []string{"AL-8"}, Sent: []string{"ELECT[3]->1", "ELECT[7]->1"}, State: state(true, "[7,3]", 9)})
}

func TestAL9_AParticipantAddsTheIDAndPassesItOn(t *testing.T) {
	f := newFixture(t, iP3, ids)
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElect, iP7, 0, 9)
	f.Check(simtest.Want{Rules: []string{"AL-9"}, Sent: []string{"ELECT[9]->1"}, State: state(true, "[3,9]", 9)})
	f.deliver(MsgElect, iP7, 0, 9) // a duplicate is passed on but listed once
	f.Check(simtest.Want{Rules: []string{"AL-9"}, Sent: []string{"ELECT[9]->1"}, State: state(true, "[3,9]", 9)})
}

func TestAL10_ItsOwnIDBackCompletesTheListAndPicksTheHighest(t *testing.T) {
	f := newFixture(t, iP3, ids)
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElect, iP7, 0, 1)
	f.deliver(MsgElect, iP7, 0, 7)
	f.deliver(MsgElect, iP7, 0, 3)
	f.Check(simtest.Want{Rules: []string{"AL-10"}, Sent: []string{"ELECTED(7)[]->1"}, Leaders: []int{7}, State: state(false, "[3,1,7]", 7)})
	// Its id once more, after the decision: a leftover, dropped.
	f.deliver(MsgElect, iP7, 0, 3)
	f.Check(simtest.Want{Rules: []string{"AL-10"}, State: state(false, "[3,1,7]", 7)})
}

func TestAL10_WithoutAnnounceNobodyIsTold(t *testing.T) {
	f := newFixture(t, iP3, `{"variant": "ids", "announce": false}`)
	f.Step(sim.Input{Kind: sim.Elect})
	f.deliver(MsgElect, iP7, 0, 7)
	f.deliver(MsgElect, iP7, 0, 3)
	f.Check(simtest.Want{Rules: []string{"AL-10"}, Leaders: []int{7}, State: state(false, "[3,7]", 7)})
}

func TestAL12_AnAnnouncementIsTakenUntilTheProcessDecidesThenDiscarded(t *testing.T) {
	f := newFixture(t, iP3, ids)
	f.Step(sim.Input{Kind: sim.Elect})
	// Still a participant: it takes the leader but waits for its own id, and passes nothing on.
	f.deliver(MsgElected, iP7, 1)
	f.Check(simtest.Want{Rules: []string{"AL-12"}, Leaders: []int{1}, State: state(true, "[3]", 1)})
	f.deliver(MsgElect, iP7, 0, 1)
	f.deliver(MsgElect, iP7, 0, 3)
	f.Check(simtest.Want{Rules: []string{"AL-10"}, Sent: []string{"ELECTED(3)[]->1"}, Leaders: []int{3}, State: state(false, "[3,1]", 3)})
	// Decided: a later announcement is discarded.
	f.deliver(MsgElected, iP7, 3)
	f.Check(simtest.Want{Rules: []string{"AL-12"}, State: state(false, "[3,1]", 3)})
}

func TestAL13_AParticipantWithNoLeaderRestartsTheElection(t *testing.T) {
	for _, tc := range []struct{ params, rule, timer string }{{`{"restart": true}`, "AL-2", "set restart 37"}, {`{"variant": "ids", "restart": true}`, "AL-7", "set restart 148"}} {
		f := newFixture(t, iP1, tc.params)
		f.Step(sim.Input{Kind: sim.Elect})
		f.Check(simtest.Want{Rules: []string{tc.rule}, Sent: []string{"ELECT[1]->3"}, Effects: []string{tc.timer}, State: state(true, "[1]", 9)})
		f.Timer(ringnext.TimerRestart)
		f.Check(simtest.Want{Rules: []string{"AL-13", tc.rule}, Sent: []string{"ELECT[1]->3"}, Effects: []string{tc.timer}, State: state(true, "[1]", 9)})
	}
}

func TestAL11_RecoveredProcessForgetsTheLeaderAndStartsAnElection(t *testing.T) {
	for _, tc := range []struct{ params, rule string }{{`{"check": false}`, "AL-2"}, {`{"variant": "ids"}`, "AL-7"}} {
		p, _ := ParseParams([]byte(tc.params), unitIDs)
		// The kernel builds a fresh state, then says Recover (no Init).
		f := &fixture{simtest.NewFixture(t, Spec(), iP1, &sim.Setup{IDs: unitIDs, Params: p, MaxDelay: unitMaxDelay})}
		f.Show = sentText
		f.Step(sim.Input{Kind: sim.Recover})
		f.Check(simtest.Want{Rules: []string{"AL-11", tc.rule}, Sent: []string{"ELECT[1]->3"}, State: state(true, "[1]", -1)})
	}
}

// --- acknowledgements (shared with the ring election, see ringnext) ---

func TestAK2_AcknowledgesAnElectBeforeHandlingIt(t *testing.T) {
	f := newFixture(t, iP1, `{"ack": true}`)
	f.deliver(MsgElect, iP9, 0, 9)
	f.Check(simtest.Want{Rules: []string{"AK-2", "AL-3"}, Sent: []string{"ACK->1", "ELECT[9 1]->3"}, Effects: []string{"set ack 7"},
		State: ackState(true, "[9,1]", 9, 7, "ELECT[9,1]")})
}

// AL-8 sends two messages: the second waits for the first one's ACK (AK-1), and leaves
// when it comes (AK-3).
func TestAK1_TheSecondElectWaitsForTheFirstOnesAck(t *testing.T) {
	f := newFixture(t, iP3, `{"variant": "ids", "ack": true}`)
	f.deliver(MsgElect, iP7, 0, 7)
	f.Check(simtest.Want{Rules: []string{"AK-2", "AL-8", "AK-1"}, Sent: []string{"ACK->3", "ELECT[3]->1"}, Effects: []string{"set ack 7"},
		State: ackState(true, "[7,3]", 9, 9, "ELECT[3]", "ELECT[7]")})
}

func TestAK3_AnAckReleasesTheQueuedElect(t *testing.T) {
	f := newFixture(t, iP3, `{"variant": "ids", "ack": true}`)
	f.deliver(MsgElect, iP7, 0, 7)
	f.deliver(ringnext.MsgAck, iP9, 0)
	f.Check(simtest.Want{Rules: []string{"AK-3"}, Sent: []string{"ELECT[7]->1"}, Effects: []string{"cancel ack", "set ack 7"},
		State: ackState(true, "[7,3]", 9, 9, "ELECT[7]")})
	f.deliver(ringnext.MsgAck, iP9, 0)
	f.Check(simtest.Want{Rules: []string{"AK-3"}, Effects: []string{"cancel ack"}, State: ackState(true, "[7,3]", 9, -1)})
}

// A message that must end at the silent process is dropped: an ids-variant ELECT
// carrying its id, an ELECTED it announced. A list-variant ELECT never is: the next
// process in its list stops it.
func TestAK4_DropsWhatMustEndAtTheSilentProcess(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		msg          func(f *fixture)
		sent         []string
	}{
		{"ids ELECT", `{"variant": "ids", "ack": true}`, func(f *fixture) { f.deliver(MsgElect, iP3, 0, 1) }, []string{"ELECT[9]->3"}},
		{"ELECTED", `{"ack": true}`, func(f *fixture) { f.deliver(MsgElected, iP3, 7, 1, 7) }, nil},
		{"list ELECT", `{"ack": true}`, func(f *fixture) { f.deliver(MsgElect, iP3, 0, 1, 3) }, []string{"ELECT[1 3 9]->3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, iP9, tc.params) // its successor is P1
			tc.msg(f)
			f.Timer(ringnext.TimerAck) // P1 silent
			if got := f.Ctx.Rules(); !slices.Equal(got, []string{"AK-4"}) {
				t.Errorf("rules = %v, want AK-4", got)
			}
			var sent []string
			for _, m := range f.Ctx.Sent() {
				sent = append(sent, fmt.Sprintf("%s%v->%d", m.Type, m.Vec, m.To))
			}
			if !slices.Equal(sent, tc.sent) {
				t.Errorf("sent = %v, want %v", sent, tc.sent)
			}
		})
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, iP1, `{"ack": true}`)
	f.deliver(MsgElect, iP9, 0, 9)
	c := f.Node.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(ringnext.MsgAck, iP7, 0)
	f.deliver(MsgElected, iP9, 9, 9, 1, 7)
	f.deliver(MsgElect, iP9, 0, 3, 9)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original: %s, want %s", after, before)
	}
	if !slices.Equal(c.(*node).active, []int{9, 1}) {
		t.Fatalf("clone's active list %v, want [9 1]", c.(*node).active)
	}
}

const earlier_ = earlier

func TestParseParams(t *testing.T) {
	list := DefaultParams(nil)
	idsV := list
	idsV.Variant = VariantIDs
	acked := func(p Params, timeout int) Params {
		p.Ring.Ack, p.Ring.AckTimeout = true, timeout
		return p
	}
	earlier := list
	earlier.Announce, earlier.Ring.Skip, earlier.Ring.Restart = false, ringnext.SkipNone, false
	simtest.ParseTable(t, ParseParams, unitIDs, []simtest.ParseCase{
		{Raw: "", Want: list},
		{Raw: "null", Want: list},
		{Raw: " {} ", Want: list},
		{Raw: `{"variant": "list"}`, Want: list},
		{Raw: `{"variant": "ids"}`, Want: idsV},
		{Raw: `{"variant": "ids", "ack": true}`, Want: acked(idsV, 0)},
		{Raw: `{"ack": true, "ackTimeout": 9}`, Want: acked(list, 9)},
		{Raw: `{"variant": "bully"}`, Err: `params.variant: "bully" is unknown (allowed: "list", "ids")`},
		{Raw: `{"variant": 2}`, Err: `params.variant: got number, want "list" or "ids"`},
		{Raw: earlier_, Want: earlier},
		{Raw: `{"announce": false, "variant": "ids"}`, Want: Params{Variant: VariantIDs, Ring: list.Ring}},
		{Raw: `{"announce": "no"}`, Err: `params.announce: got string, want true or false`},
		{Raw: `{"ackTimeout": 9}`, Err: `params.ackTimeout: only used with "skip": "ack"`},
		{Raw: `{"ack": true, "ackTimeout": 0}`, Err: `params.ackTimeout: must be a positive integer`},
		{Raw: `{"ack": 1}`, Err: `params.ack: got number, want true or false`},
		{Raw: `{"skip": [1]}`, Err: `params.skip: got array`},
		{Raw: `{"nope": 1}`, Err: `params.nope: unknown field (allowed: variant, announce, skip, ack, ackTimeout, restart, check)`},
		{Raw: `"ids"`, Err: `params: `},
		{Raw: `{} {}`, Err: `params: must be a single JSON object`},
	})
}

// --- whole runs through the kernel ---

func config(ids []int, seed uint64, params string, acts ...sim.Action) sim.Config {
	p, err := ParseParams([]byte(params), ids)
	if err != nil {
		panic(err)
	}
	return sim.Config{Spec: Spec(), IDs: ids, Params: p, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true}, Until: 2000, Actions: acts}
}

func crash(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActCrash, Node: i} }
func recoverAt(at, i int) sim.Action { return sim.Action{At: at, Do: sim.ActRecover, Node: i} }
func elect(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActElect, Node: i} }

func checkAgree(t *testing.T, seed uint64, evs []sim.Event, ids []int, want int) {
	t.Helper()
	if v := simtest.Violations(evs); len(v) > 0 {
		t.Errorf("seed %d: violations %v", seed, v)
	}
	if d := ringtest.Disagreement(evs, ids, want); d != "" {
		t.Errorf("seed %d: %s", seed, d)
	}
}

// rotate lists the ring from index from.
func rotate(ids []int, from int) []int {
	return append(slices.Clone(ids[from:]), ids[:from]...)
}

// One initiator, no crash: N ELECT (the list grows by one id a hop) and N ELECTED that
// carry the whole ring, listed from the initiator.
func TestRunListVariantOneInitiatorCosts2N(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 16} {
		for seed := uint64(1); seed <= 4; seed++ {
			r := rand.New(rand.NewPCG(seed, uint64(n)))
			ids := ringtest.RandomRing(r, n)
			s := r.IntN(n)
			cfg := config(ids, seed, "", elect(1, s))
			cfg.Network.FIFO = seed%2 == 0 // it does not matter
			evs := simtest.Run(t, cfg)
			checkAgree(t, seed, evs, ids, slices.Max(ids))
			if got, want := simtest.Count(evs, sim.EvSend), Spec().Costs[0].Value(n); float64(got) != want || got != 2*n {
				t.Errorf("N=%d seed %d: %d messages, want 2N = %v", n, seed, got, want)
			}
			ring := rotate(ids, s)
			k := 0
			for _, e := range evs {
				if e.Type != sim.EvSend {
					continue
				}
				want := ring
				if e.Msg.Type == MsgElect {
					want = ring[:k+1] // ELECT number k holds k+1 ids
				}
				if !slices.Equal(e.Msg.Vec, want) {
					t.Errorf("N=%d seed %d: %s carries %v, want %v", n, seed, e.Msg.Type, e.Msg.Vec, want)
				}
				k++
			}
		}
	}
}

// k initiators at once: every ELECT and every ELECTED goes all round, 2kN in all, and
// all announce the same highest id.
func TestRunListVariantKInitiators2kN(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		n := 2 + r.IntN(9)
		ids := ringtest.RandomRing(r, n)
		starters := r.Perm(n)[:1+r.IntN(n)]
		var acts []sim.Action
		for _, i := range starters {
			acts = append(acts, elect(r.IntN(4), i))
		}
		cfg := config(ids, seed, "", acts...)
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 5}
		evs := simtest.Run(t, cfg)
		checkAgree(t, seed, evs, ids, slices.Max(ids))
		k := len(starters)
		for typ, want := range map[string]int{MsgElect: k * n, MsgElected: k * n} {
			if got := simtest.CountMsgs(evs, typ); got != want {
				t.Errorf("seed %d (N=%d, k=%d): %d %s, want kN = %d", seed, n, k, got, typ, want)
			}
		}
	}
}

// Every process's own id goes all round once, however many start: N² ELECT, and each
// process announces its own decision to the next one: N ELECTED.
func TestRunIDsVariantCostsNSquared(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		n := 2 + r.IntN(9)
		ids := ringtest.RandomRing(r, n)
		var acts []sim.Action
		for _, i := range r.Perm(n)[:1+r.IntN(3)%n] {
			acts = append(acts, elect(r.IntN(4), i))
		}
		evs := simtest.Run(t, config(ids, seed, ids1, acts...))
		checkAgree(t, seed, evs, ids, slices.Max(ids))
		if got, want := simtest.CountMsgs(evs, MsgElect), Spec().Costs[3].Value(n); float64(got) != want || got != n*n {
			t.Errorf("seed %d (N=%d): %d ELECT, want N² = %v", seed, n, got, want)
		}
		if got := simtest.CountMsgs(evs, MsgElected); got != n {
			t.Errorf("seed %d: %d ELECTED, want one per process, %d", seed, got, n)
		}
	}
}

const ids1 = `{"variant": "ids"}`

// notesExample1 is the curated scenario of 004's example ("Ring Algorithm: Example1"):
// P1..P4 in a ring, P4 the coordinator; P1 and P4 crash; P2 notices; P3 wins.
func notesExample1(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../scenarios/library/ring-list-p1-p4-crashed.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The curated scenario follows 004 message by message: P3 sends Elect(3) then Elect(2)
// past the crashed P4 and P1; P2 forwards Elect(3), then gets its own Elect(2) back and
// decides first; P3 decides when Elect(3) is back; both send Elected(P3).
func TestRunNotesExample1FollowsTheNotesMessageByMessage(t *testing.T) {
	cfg := ringtest.Config(t, Spec(), notesExample1(t))
	evs := simtest.Run(t, cfg)
	want := []string{
		"ELECT([2]) 2->3",
		"ELECT([3]) 3->2", "ELECT([2]) 3->2",
		"ELECT([3]) 2->3",
		"ELECTED(3 []) 2->3",
		"ELECTED(3 []) 3->2",
	}
	if got := ringtest.Hops(evs, Spec(), cfg.IDs); !slices.Equal(got, want) {
		t.Fatalf("messages\n%v\nwant\n%v", got, want)
	}
	checkAgree(t, cfg.Seed, evs, cfg.IDs, 3)
	var deciders []int
	for _, e := range evs {
		if e.Type == sim.EvLeader && e.T > 0 {
			deciders = append(deciders, cfg.IDs[e.Node])
		}
	}
	if !slices.Equal(deciders, []int{2, 3}) {
		t.Errorf("decided in the order %v, want P2 then P3 as in 004", deciders)
	}
	for id, rules := range map[int][]string{
		2: {"AL-1", "AL-7", "AL-9", "AL-10", "AL-12"},
		3: {"AL-1", "AL-8", "DT-1", "DT-1", "AL-10", "DT-1", "AL-12"},
	} {
		if got := simtest.Rules(evs, slices.Index(cfg.IDs, id)); !slices.Equal(got, rules) {
			t.Errorf("P%d fired %v, want %v", id, got, rules)
		}
	}
	// The active lists the notes give: [2, 3] at both.
	s, _ := ringtest.Run(t, cfg)
	for _, id := range []int{2, 3} {
		if got, want := string(sim.EncodeState(s.Node(slices.Index(cfg.IDs, id)))), state(false, "[2,3]", 3); got != want {
			t.Errorf("P%d ends in %s, want %s", id, got, want)
		}
	}
}

// The curated run's captions quote 004's example sentence by sentence, in the note's
// order, each at the event it tells: the note's words, not a paraphrase.
func TestRunNotesExample1CaptionsQuote004InOrder(t *testing.T) {
	text := notesExample1(t)
	var sc struct {
		Captions []struct {
			Seq  int    `json:"seq"`
			Text string `json:"text"`
		} `json:"captions"`
	}
	if err := json.Unmarshal([]byte(text), &sc); err != nil {
		t.Fatal(err)
	}
	cfg := ringtest.Config(t, Spec(), text)
	evs := simtest.Run(t, cfg)
	// 004, "Ring Algorithm: Example1", in order, and the event each sentence tells.
	for k, want := range []struct {
		quote string
		at    string // the event at the caption's seq: type, process, rule or message
	}{
		{"P4 is coordinator. Suppose P1 and P4 crash", "crash P4 "},
		{`P2 detects that coordinator P4 is not responding. P2 sets its active list to [ ], sends "Elect(2)" to P3 and sets its active list to [2]`, "rule P2 AL-7"},
		{`P3 receives "Elect(2)". It is the first message seen, i.e. P3 is not yet a participant, so P3 sets its active list to [2, 3]`, "rule P3 AL-8"},
		{`P3 sends "Elect(3)" towards P4 and then sends "Elect(2)" towards P4`, "send P3 ELECT"},
		{`P2 adds 3 to its active list, [2, 3], and forwards "Elect(3)" to P3`, "rule P2 AL-9"},
		{`P2 receives the "Elect(2)" message: it chooses P3 as the highest process in its list [2, 3] and sends an "Elected(P3)" message`, "rule P2 AL-10"},
		{`P3 receives the "Elect(3)" message: it chooses P3 as the highest process in its list [2, 3] and sends an "Elected(P3)" message`, "rule P3 AL-10"},
	} {
		if k >= len(sc.Captions) {
			t.Fatalf("%d captions, want one quoting %q", len(sc.Captions), want.quote)
		}
		c := sc.Captions[k]
		if !strings.Contains(c.Text, want.quote) {
			t.Errorf("caption %d %q does not quote 004: %q", k, c.Text, want.quote)
		}
		e := evs[c.Seq]
		if got := fmt.Sprintf("%s P%d %s%s", e.Type, cfg.IDs[e.Node], e.Rule, e.Msg.Type); got != want.at {
			t.Errorf("caption %d is at seq %d, a %s; want a %s", k, c.Seq, got, want.at)
		}
	}
}

// The earlier version of the ids variant, still reachable through its params: no
// ELECTED, acknowledgements to skip the crashed processes.
func TestRunNotesExample1EarlierVersionWithAcks(t *testing.T) {
	// P3's elect(2) waits for elect(3)'s ACK (stop and wait), so P2 has already passed
	// elect(3) on when elect(2) leaves P3: both go towards P4 and on to P2, in order.
	want := []string{
		"ELECT([2]) 2->3",
		"ELECT([3]) 3->4", "ELECT([3]) 3->1", "ELECT([3]) 3->2",
		"ELECT([3]) 2->3",
		"ELECT([2]) 3->4", "ELECT([2]) 3->1", "ELECT([2]) 3->2",
	}
	base := ringtest.Config(t, Spec(), notesExample1(t))
	p := simtest.Params(t, Spec(), `{"variant": "ids", "ack": true, "announce": false, "restart": false}`, base.IDs)
	base.Params = p
	base.Network = sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true}
	for seed := uint64(0); seed <= 30; seed++ {
		cfg := base
		if seed > 0 {
			cfg.Seed = seed
		}
		evs := simtest.Run(t, cfg)
		if got := ringtest.Hops(evs, Spec(), cfg.IDs, ringnext.MsgAck); !slices.Equal(got, want) {
			t.Fatalf("seed %d: messages\n%v\nwant\n%v", cfg.Seed, got, want)
		}
		checkAgree(t, cfg.Seed, evs, cfg.IDs, 3)
		for id, rules := range map[int][]string{
			2: {"AL-1", "AL-7", "AK-3", "AK-2", "AL-9", "AK-3", "AK-2", "AL-10"},
			// P3's elect(3) is back (AL-10) while its elect(2) is still skipping P4 and P1.
			3: {"AL-1", "AK-2", "AL-8", "AK-1", "AK-4", "AK-4", "AK-3", "AK-2", "AL-10", "AK-4", "AK-4", "AK-3"},
		} {
			if got := simtest.Rules(evs, slices.Index(cfg.IDs, id)); !slices.Equal(got, rules) {
				t.Errorf("seed %d: P%d fired %v, want %v", cfg.Seed, id, got, rules)
			}
		}
	}
	// The active lists the notes give: [2, 3] at both.
	s, _ := ringtest.Run(t, base)
	for _, id := range []int{2, 3} {
		if got, want := string(sim.EncodeState(s.Node(slices.Index(base.IDs, id)))), ackState(false, "[2,3]", 3, -1); got != want {
			t.Errorf("P%d ends in %s, want %s", id, got, want)
		}
	}
}

// The same failure in the list variant: one ELECT collects [2, 3], comes back to P2,
// and P2 announces P3 with an ELECTED that goes round once: 2N messages for the N = 2
// live processes, plus those lost to P4 and P1.
func TestRunNotesExample1InTheListVariant(t *testing.T) {
	cfg := ringtest.Config(t, Spec(), notesExample1(t))
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true}
	cfg.Params = Params{Variant: VariantList, Ring: ringnext.Params{Ack: true}}
	evs := simtest.Run(t, cfg)
	want := []string{
		"ELECT([2]) 2->3", "ELECT([2 3]) 3->4", "ELECT([2 3]) 3->1", "ELECT([2 3]) 3->2",
		"ELECTED(3 [2 3]) 2->3", "ELECTED(3 [2 3]) 3->4", "ELECTED(3 [2 3]) 3->1", "ELECTED(3 [2 3]) 3->2",
	}
	if got := ringtest.Hops(evs, Spec(), cfg.IDs, ringnext.MsgAck); !slices.Equal(got, want) {
		t.Fatalf("messages\n%v\nwant\n%v", got, want)
	}
	checkAgree(t, cfg.Seed, evs, cfg.IDs, 3)
}

// The notes' step-by-step example (seed 004, "Token Ring Election Algorithm"): six
// processes in the ring order 3, 5, 0, 1, 4, 6; 6, the leader, fails; 3 starts; every
// process adds its id; back at 3 the list is 3, 5, 0, 1, 4, and 3 announces 5.
const notesTokenRingExample = `{
  "version": 2,
  "algorithm": "ring-list",
  "title": "Ring election with a growing list: 6 fails, 3 starts, 5 wins",
  "about": "Six processes form a one-way ring in the order 3, 5, 0, 1, 4, 6, and 6, the highest, is the leader until it crashes. 3 notices that 6 does not respond and sends an ELECT holding its own id to the next process (AL-2). 5, 0, 1 and 4 each add their id and pass the message on (AL-3): the list grows to 3, 5, 0, 1, 4. Acknowledgements are on: 4 gets no ACK from the crashed 6, so after the time-out it skips it and sends to 3 (AK-4). 3 finds its own id in the list: the message has been all round and the list holds every live process (AL-4). It picks the highest, 5, and sends ELECTED(5) with the list round the ring; every process records 5 as leader and keeps the list (AL-5), and 3 stops the announcement when it comes back (AL-6). Counting ELECT and ELECTED only: N = 5 of each, 2N, plus the two lost to 6.",
  "ids": [3, 5, 0, 1, 4, 6],
  "seed": 1,
  "network": {"delay": [1, 3], "fifo": true},
  "params": {"ack": true},
  "events": [
    {"at": 0, "do": "crash", "node": 6},
    {"at": 2, "do": "elect", "node": 3}
  ],
  "until": 100
}`

func TestRunNotesTokenRingExample3Starts5Wins(t *testing.T) {
	list := "[3 5 0 1 4]"
	want := []string{
		"ELECT([3]) 3->5", "ELECT([3 5]) 5->0", "ELECT([3 5 0]) 0->1", "ELECT([3 5 0 1]) 1->4",
		"ELECT(" + list + ") 4->6", "ELECT(" + list + ") 4->3",
		"ELECTED(5 " + list + ") 3->5", "ELECTED(5 " + list + ") 5->0", "ELECTED(5 " + list + ") 0->1",
		"ELECTED(5 " + list + ") 1->4", "ELECTED(5 " + list + ") 4->6", "ELECTED(5 " + list + ") 4->3",
	}
	base := ringtest.Config(t, Spec(), notesTokenRingExample)
	for seed := uint64(0); seed <= 30; seed++ {
		cfg := base
		if seed > 0 {
			cfg.Seed = seed
			cfg.Network.FIFO = seed%2 == 0 // one message at a time: FIFO does not matter
		}
		s, evs := ringtest.Run(t, cfg)
		if got := ringtest.Hops(evs, Spec(), cfg.IDs, ringnext.MsgAck); !slices.Equal(got, want) {
			t.Fatalf("seed %d: messages\n%v\nwant\n%v", cfg.Seed, got, want)
		}
		checkAgree(t, cfg.Seed, evs, cfg.IDs, 5)
		for i, id := range cfg.IDs {
			if id == 6 {
				continue
			}
			if got, want := string(sim.EncodeState(s.Node(i))), ackState(false, "[3,5,0,1,4]", 5, -1); got != want {
				t.Errorf("seed %d: P%d ends in %s, want %s", cfg.Seed, id, got, want)
			}
		}
		for id, rules := range map[int][]string{
			3: {"AL-1", "AL-2", "AK-3", "AK-2", "AL-4", "AK-3", "AK-2", "AL-6"},
			5: {"AL-1", "AK-2", "AL-3", "AK-3", "AK-2", "AL-5", "AK-3"},
			4: {"AL-1", "AK-2", "AL-3", "AK-4", "AK-3", "AK-2", "AL-5", "AK-4", "AK-3"},
		} {
			if got := simtest.Rules(evs, slices.Index(cfg.IDs, id)); !slices.Equal(got, rules) {
				t.Errorf("seed %d: P%d fired %v, want %v", cfg.Seed, id, got, rules)
			}
		}
	}
}

// With the earlier defaults (no skipping) the ELECT sent to the crashed 6 is simply
// lost: the election dies and everyone still follows 6, which the monitor reports.
func TestRunSkipNoneACrashedSuccessorSwallowsTheElection(t *testing.T) {
	cfg := ringtest.Config(t, Spec(), notesTokenRingExample)
	p := simtest.Params(t, Spec(), earlier, cfg.IDs)
	cfg.Params = p
	evs := simtest.Run(t, cfg)
	if got, want := simtest.CountMsgs(evs, MsgElect), 5; got != want {
		t.Errorf("%d ELECT, want %d (the last lost at 6)", got, want)
	}
	if got := simtest.CountMsgs(evs, MsgElected); got != 0 {
		t.Errorf("%d ELECTED, want none", got)
	}
	v := simtest.Violations(evs)
	if len(v) != 1 || !strings.HasPrefix(v[0], sim.PropLeader+": all take P6 as leader, but P6 is crashed") {
		t.Errorf("violations %v, want the leader monitor to report the crashed P6", v)
	}
}

// The ids variant relies on FIFO channels: a process decides when its own id comes
// back, assuming every other id passed it before. Without FIFO (and without the ACKs,
// which send one message at a time) an id can arrive too late and two processes end up
// with different leaders. The list variant never does.
func TestRunIDsVariantNeedsFIFO(t *testing.T) {
	broken := 0
	for seed := uint64(1); seed <= 100; seed++ {
		ids := ringtest.RandomRing(rand.New(rand.NewPCG(seed, 11)), 6)
		for _, tc := range []struct {
			params string
			fifo   bool
		}{{ids1, false}, {ids1, true}, {`{"variant": "ids", "ack": true}`, false}, {"", false}} {
			var acts []sim.Action
			for i := range ids {
				acts = append(acts, elect(0, i))
			}
			cfg := config(ids, seed, tc.params, acts...)
			cfg.Network = sim.Network{DelayMin: 1, DelayMax: 12, FIFO: tc.fifo}
			evs := simtest.Run(t, cfg)
			bad := len(simtest.Violations(evs)) > 0 || ringtest.Disagreement(evs, ids, slices.Max(ids)) != ""
			if tc.params == ids1 && !tc.fifo {
				if bad {
					broken++
				}
				continue
			}
			if bad {
				t.Errorf("seed %d %s fifo=%t: violations %v", seed, tc.params, tc.fifo, simtest.Violations(evs))
			}
		}
	}
	if broken == 0 {
		t.Error("the ids variant never went wrong without FIFO; want some runs with the wrong leader")
	}
	t.Logf("the ids variant without FIFO went wrong in %d runs out of 100", broken)
}

func TestRunRecoveredHighestTakesOver(t *testing.T) {
	ring := []int{3, 5, 0, 1, 4, 6}
	for _, params := range []string{`{"ack": true}`, `{"variant": "ids", "ack": true}`} {
		for seed := uint64(1); seed <= 10; seed++ {
			evs := simtest.Run(t, config(ring, seed, params, crash(0, 5), elect(1, 0), recoverAt(150, 5)))
			checkAgree(t, seed, evs, ring, 6)
			if got := simtest.Rules(evs, 5); len(got) < 2 || got[1] != "AL-11" {
				t.Errorf("%s seed %d: 6 fired %v, want AL-11 on recovery", params, seed, got)
			}
		}
	}
}

// The seed sweep, for both variants: random N, ring order, delays, crashes before the
// elections (skipped with acknowledgements), recoveries once things settle, several
// elections at once. Every run goes quiet, the monitors find nothing, and every live
// process follows the highest live id. The ids variant gets FIFO channels, or ACKs.
func TestRunSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x1157))
		n := 2 + r.IntN(11)
		ring := ringtest.RandomRing(r, n)
		acts, up := ringtest.PromiseActions(r, n)
		variant := []string{VariantList, VariantIDs}[r.IntN(2)]
		crashes := slices.ContainsFunc(acts, func(a sim.Action) bool { return a.Do == sim.ActCrash })
		ack := crashes || r.IntN(2) == 0
		dmax := 1 + r.IntN(5)
		nw := sim.Network{DelayMin: r.IntN(dmax + 1), DelayMax: dmax, FIFO: r.IntN(2) == 0}
		if variant == VariantIDs && !ack {
			nw.FIFO = true
		}
		cfg := config(ring, seed, fmt.Sprintf(`{"variant": %q, "ack": %t}`, variant, ack), acts...)
		cfg.Network = nw
		cfg.Until = 20000
		s, evs := ringtest.Run(t, cfg)
		if !s.Quiescent() {
			t.Errorf("seed %d (N=%d, %s): still busy at until=%d", seed, n, variant, cfg.Until)
			continue
		}
		checkAgree(t, seed, evs, ring, ringtest.HighestUp(ring, up))
	}
}

// Crashes anywhere, during elections too, with recoveries: no leader is promised then,
// but in the list variant no message may go round for ever: every run goes quiet.
func TestRunCrashesDuringElectionsNeverLoopForever(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x100f))
		n := 2 + r.IntN(9)
		ring := ringtest.RandomRing(r, n)
		acts := simtest.RandomActions(seed, n, sim.Election, simtest.Workload{Requests: 1 + r.IntN(6), Span: 60, Crashes: 1 + r.IntN(n), Recover: r.IntN(2) == 0})
		cfg := config(ring, seed, `{"ack": true}`, acts...)
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1 + r.IntN(4), FIFO: r.IntN(2) == 0}
		cfg.Until = 20000
		if s, _ := ringtest.Run(t, cfg); !s.Quiescent() {
			t.Errorf("seed %d (N=%d): messages still going round at until=%d", seed, n, cfg.Until)
		}
	}
}

// The ids variant has no election numbers: 14 crashes in the middle of an election
// (and 17 crashed and came back before it), so late ELECTs reach processes that have
// already decided, each takes one for a new election (AL-8), and the rounds never stop.
func TestRunIDsVariantCrashDuringElectionNeverSettles(t *testing.T) {
	ring := []int{29, 17, 37, 14}
	acts := []sim.Action{crash(3, 1), recoverAt(10, 1), elect(11, 1), crash(11, 3), elect(26, 1), recoverAt(38, 3), elect(41, 1)}
	for _, variant := range []string{VariantIDs, VariantList} {
		cfg := config(ring, 12, fmt.Sprintf(`{"variant": %q, "ack": true}`, variant), acts...)
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1}
		cfg.Until = 20000
		s, evs := ringtest.Run(t, cfg)
		if variant == VariantList {
			if !s.Quiescent() {
				t.Errorf("the list variant is still busy at %d", cfg.Until)
			}
			checkAgree(t, 12, evs, ring, 37)
			continue
		}
		if s.Quiescent() {
			t.Errorf("the ids variant went quiet; its rules say a crash can keep it going for ever")
		}
		if last := evs[len(evs)-2]; last.T < 19000 {
			t.Errorf("the ids variant's last event is at t=%d, want ELECTs still flowing near %d", last.T, cfg.Until)
		}
	}
}

// The lecture's case: the leader (highest id) has crashed and any one process starts.
// Each variant and way of skipping elects the highest live id, FIFO or not (the ids
// variant needs FIFO or acknowledgements), over 200 seeds.
func TestRunHighestCrashedAnyStarterElectsTheHighestAlive(t *testing.T) {
	for _, params := range []string{"", `{"skip": "ack"}`, `{"variant": "ids", "skip": "ack"}`} {
		t.Run(params, func(t *testing.T) {
			p := simtest.Params(t, Spec(), params, nil)
			ringtest.HighestCrashedAnyStarter(t, Spec(), p, 200, func(seed uint64) []int {
				return ringtest.RandomRing(rand.New(rand.NewPCG(seed, 14)), 6)
			})
		})
	}
}

// On a ring without crashes the default costs exactly the notes' 2N: no message besides
// ELECT and ELECTED.
func TestRunDefaultAddsNoMessageWithoutCrashes(t *testing.T) {
	ids := []int{3, 5, 0, 1, 4, 6}
	evs := simtest.Run(t, config(ids, 1, "", elect(1, 5)))
	if got := simtest.Count(evs, sim.EvSend); got != 2*len(ids) {
		t.Errorf("%d messages, want 2N = %d", got, 2*len(ids))
	}
}

// By default a participant survives a crash during its election without knowing N: the
// ELECT [0 1 2] is on its way to 3 when 3 crashes, and is lost with it; 2 looks again
// one largest delay later, finds 3 crashed and sends the ELECT past it (DT-2), and 5
// wins. With "restart" (which needs N) 0, 1 and 2 hear no outcome and restart (AL-13).
func TestRunByDefaultAnElectionThatDiedIsRestarted(t *testing.T) {
	ids := simtest.IDs(6)
	for _, tc := range []struct {
		params  string
		restart bool
	}{{"", false}, {`{"restart": true, "check": false}`, true}} {
		cfg := config(ids, 1, tc.params, elect(1, 0), crash(4, 3))
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 1, FIFO: true}
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); len(v) > 0 {
			t.Errorf("%s: violations %v", tc.params, v)
		}
		if d := ringtest.Disagreement(evs, ids, 5); d != "" {
			t.Errorf("%s: %s", tc.params, d)
		}
		if got := ringtest.Timers(evs, ringnext.TimerRestart) > 0; got != tc.restart {
			t.Errorf("%s: restarted %t, want %t", tc.params, got, tc.restart)
		}
		if got := slices.Contains(simtest.Rules(evs, 2), "DT-2"); got == tc.restart {
			t.Errorf("%s: 2 sent again (DT-2) %t, want %t", tc.params, got, !tc.restart)
		}
	}
}

// 003: "the elected process is the largest non-crashed one". The highest id has
// crashed, one process starts, and one more crashes at any time during the election:
// by default every run elects the largest live id (a leader picked or announced that
// has crashed starts a new election, AL-14; a message lost with a crashed process is
// sent again, DT-2). With the earlier defaults (epoch 2) some runs end following a
// dead leader.
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

func TestAL14_ACrashedLeaderStartsANewElection(t *testing.T) {
	t.Run("announced", func(t *testing.T) {
		f := newFixture(t, iP1, `{"check": true}`)
		f.Ctx.SetUp([]bool{true, false, true, true}) // P9 crashed after it was picked
		f.deliver(MsgElected, iP9, 9, 7, 3, 9)
		f.Check(simtest.Want{Rules: []string{"AL-14", "AL-2"}, Sent: []string{"ELECT[1]->3"}, Effects: []string{"set check 4"},
			State: `{"participant":true,"active":[1],"leader":9,"unchecked":["ELECT[1]->7"]}`})
	})
	t.Run("picked", func(t *testing.T) {
		f := newFixture(t, iP7, `{"check": true}`)
		f.Ctx.SetUp([]bool{true, false, true, true})
		f.deliver(MsgElect, iP1, 0, 7, 3, 9, 1) // back at P7, whose highest id, 9, has crashed
		f.Check(simtest.Want{Rules: []string{"AL-4", "AL-14", "AL-2"}, Sent: []string{"ELECT[7]->0"}, Effects: []string{"set check 4"},
			State: `{"participant":true,"active":[7],"leader":9,"unchecked":["ELECT[7]->3"]}`})
	})
}
