package maekawa

import (
	"encoding/json"
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

// Unit tests use the notes' N=7 sets with ids 1..7, so node index k is the notes' P(k+1)
// and an index written where an id belongs shows. Sets (by id):
// V1={1,2,3} V2={2,4,6} V3={3,5,6} V4={1,4,5} V5={2,5,7} V6={1,6,7} V7={3,4,7}.
var ids7 = []int{1, 2, 3, 4, 5, 6, 7}

// p converts the notes' process number to a node index.
func p(k int) int { return k - 1 }

// fixture is the shared hand-driven node, with the node typed for the tests that read it.
type fixture struct {
	*simtest.Fixture
	n *node
}

func newFixture(t *testing.T, self int, variant string) *fixture {
	t.Helper()
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: ids7, Params: Params{Variant: variant}, MaxDelay: 3})
	sf.Ctx.Reset(self) // tests begin with nothing recorded, Init's MI-1 included
	sf.Show = show
	return &fixture{Fixture: sf, n: sf.Node.(*node)}
}

func (f *fixture) deliver(typ string, from, ts int) {
	f.Deliver(sim.Message{Type: typ, From: from, TS: ts})
}

func (f *fixture) request() { f.Step(sim.Input{Kind: sim.Request}) }
func (f *fixture) release() { f.Step(sim.Input{Kind: sim.Release}) }

// show writes a message as "TYPE->P<id>@ts". Maekawa sets no timers: Check, which
// compares every effect, would show one.
func show(m sim.Message) string { return fmt.Sprintf("%s->P%d@%d", m.Type, ids7[m.To], m.TS) }

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func (f *fixture) waitingFor() []int {
	var out []int
	for _, j := range f.n.WaitingFor() {
		out = append(out, ids7[j])
	}
	return out
}

// about7 is what the inspector says built the fixtures' sets (the notes' N=7 sets).
const about7 = "the notes' sets for N=7 (the projective plane of order 2): K=3"

// st builds the basic variant's state JSON; df appends the deadlock-free fields.
func st(state, set string, clock, ts int, votes string, voted bool, cand, candTS int, queue string) string {
	return fmt.Sprintf(`{"state":%q,"set":%s,"construction":%q,"clock":%d,"ts":%d,"votes":%s,"voted":%t,"candidate":%d,"candidateTs":%d,"queue":%s}`,
		state, set, about7, clock, ts, votes, voted, cand, candTS, queue)
}

func df(base string, inquired bool, failed, yielded, inquiries, told string) string {
	return strings.TrimSuffix(base, "}") +
		fmt.Sprintf(`,"inquired":%t,"failed":%s,"yielded":%s,"inquiries":%s,"told":%s}`, inquired, failed, yielded, inquiries, told)
}

var (
	none  []string
	noneS = "[]"
)

func TestMI1_StartsReleasedWithItsVoteFree(t *testing.T) {
	for _, tc := range []struct {
		self    int
		variant string
		kind    sim.InputKind
		want    string
	}{
		{p(1), Basic, sim.Init, st(cs.Released, "[1,2,3]", 0, 0, noneS, false, -1, 0, noneS)},
		{p(2), Basic, sim.Init, st(cs.Released, "[2,4,6]", 0, 0, noneS, false, -1, 0, noneS)},
		{p(7), Basic, sim.Recover, st(cs.Released, "[3,4,7]", 0, 0, noneS, false, -1, 0, noneS)},
		{p(5), DeadlockFree, sim.Init, df(st(cs.Released, "[2,5,7]", 0, 0, noneS, false, -1, 0, noneS), false, noneS, noneS, noneS, noneS)},
	} {
		sf := simtest.NewFixture(t, Spec(), tc.self, &sim.Setup{IDs: ids7, Params: Params{Variant: tc.variant}})
		f := &fixture{Fixture: sf, n: sf.Node.(*node)}
		f.Step(sim.Input{Kind: tc.kind})
		f.Check(simtest.Want{Rules: []string{"MI-1"}, State: tc.want})
	}
}

func TestMA1_AsksTheOtherMembersAndVotesForItself(t *testing.T) {
	f := newFixture(t, p(2), Basic)
	f.request()
	// Its own REQUEST goes to its own voter half (MH-1) with no message, and the vote
	// it gives itself is counted at once (MA-2).
	f.Check(simtest.Want{Rules: []string{"MA-1", "MH-1", "MA-2"}, Sent: []string{"REQUEST->P4@1", "REQUEST->P6@1"},
		State: st(cs.Wanted, "[2,4,6]", 1, 1, "[2]", true, 2, 1, noneS)})
	if got := f.waitingFor(); !slices.Equal(got, []int{4, 6}) {
		t.Errorf("waiting for %v, want [4 6]", got)
	}

	// A second request while waiting changes nothing.
	f.request()
	f.Check(simtest.Want{State: st(cs.Wanted, "[2,4,6]", 1, 1, "[2]", true, 2, 1, noneS)})
}

func TestMA1_OwnRequestQueuesWhenItsVoteIsTaken(t *testing.T) {
	f := newFixture(t, p(1), Basic)
	f.deliver(MsgRequest, p(4), 5) // P1 votes for P4 (P1 is in V4)
	f.request()
	f.Check(simtest.Want{Rules: []string{"MA-1", "MH-1"}, Sent: []string{"REQUEST->P2@6", "REQUEST->P3@6"},
		State: st(cs.Wanted, "[1,2,3]", 6, 6, noneS, true, 4, 5, "[[6,1]]")})
	// It lacks P2's and P3's votes, and its own, which P4 holds.
	if got := f.waitingFor(); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("waiting for %v, want [2 3 4]", got)
	}
}

func TestMA2_CountsVotesUntilK(t *testing.T) {
	f := newFixture(t, p(1), Basic)
	f.request()
	f.deliver(MsgReply, p(3), 1)
	f.Check(simtest.Want{Rules: []string{"MA-2"}, State: st(cs.Wanted, "[1,2,3]", 1, 1, "[1,3]", true, 1, 1, noneS)})
	if f.Has(sim.EnterCS) {
		t.Error("entered with 2 of 3 votes")
	}
	if got := f.waitingFor(); !slices.Equal(got, []int{2}) {
		t.Errorf("waiting for %v, want [2]", got)
	}
}

func TestMA3_GivesBackAVoteItDidNotAskFor(t *testing.T) {
	// Not waiting: the vote belongs to a request from before a crash.
	f := newFixture(t, p(1), Basic)
	f.deliver(MsgReply, p(2), 4)
	f.Check(simtest.Want{Rules: []string{"MA-3"}, Sent: []string{"RELEASE->P2@4"}, State: st(cs.Released, "[1,2,3]", 4, 0, noneS, false, -1, 0, noneS)})

	// Waiting, but the vote is for another (older) request of its.
	f = newFixture(t, p(1), DeadlockFree)
	f.deliver(MsgRequest, p(4), 5)
	f.deliver(MsgRelease, p(4), 5)
	f.request() // ts 6
	f.deliver(MsgReply, p(3), 2)
	f.Check(simtest.Want{Rules: []string{"MA-3"}, Sent: []string{"RELEASE->P3@2"},
		State: df(st(cs.Wanted, "[1,2,3]", 6, 6, "[1]", true, 1, 6, noneS), false, noneS, noneS, noneS, noneS)})
}

// A second vote for the current request is ignored, in the CS above all: handing it
// back would free a vote in use.
func TestMA3_DuplicateVoteIsNotGivenBack(t *testing.T) {
	f := newFixture(t, p(1), Basic)
	f.request()
	f.deliver(MsgReply, p(2), 1)
	f.deliver(MsgReply, p(2), 1)
	f.Check(simtest.Want{State: st(cs.Wanted, "[1,2,3]", 1, 1, "[1,2]", true, 1, 1, noneS)})
	f.deliver(MsgReply, p(3), 1)
	f.deliver(MsgReply, p(3), 1)
	f.Check(simtest.Want{State: st(cs.Held, "[1,2,3]", 1, 1, "[1,2,3]", true, 1, 1, noneS)})
}

func TestME1_EntersWithTheWholeSetsVotes(t *testing.T) {
	f := newFixture(t, p(1), Basic)
	f.request()
	f.deliver(MsgReply, p(2), 1)
	f.deliver(MsgReply, p(3), 1)
	f.Check(simtest.Want{Rules: []string{"MA-2", "ME-1"}, Effects: []string{"enter"}, State: st(cs.Held, "[1,2,3]", 1, 1, "[1,2,3]", true, 1, 1, noneS)})
	if effs := f.Ctx.Effects(); effs[len(effs)-1].Kind != sim.EnterCS {
		t.Errorf("last effect %v, want EnterCS", effs[len(effs)-1].Kind)
	}
	if got := f.waitingFor(); got != nil {
		t.Errorf("in the CS yet waiting for %v", got)
	}
}

func TestMH1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		from  int
		ts    int
		sent  []string
		want  string
	}{
		{"free vote goes to the requester", nil, p(4), 3, []string{"REPLY->P4@3"},
			st(cs.Released, "[1,2,3]", 3, 0, noneS, true, 4, 3, noneS)},
		{"vote taken: queue without answering", func(f *fixture) { f.deliver(MsgRequest, p(6), 2) }, p(4), 3, none,
			st(cs.Released, "[1,2,3]", 3, 0, noneS, true, 6, 2, "[[3,4]]")},
		{"queue keeps arrival order, not timestamp order", func(f *fixture) {
			f.deliver(MsgRequest, p(6), 2)
			f.deliver(MsgRequest, p(2), 9)
		}, p(4), 3, none,
			st(cs.Released, "[1,2,3]", 9, 0, noneS, true, 6, 2, "[[9,2],[3,4]]")},
		{"in the CS: queue", func(f *fixture) {
			f.request()
			f.deliver(MsgReply, p(2), 1)
			f.deliver(MsgReply, p(3), 1)
		}, p(4), 3, none,
			st(cs.Held, "[1,2,3]", 3, 1, "[1,2,3]", true, 1, 1, "[[3,4]]")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p(1), Basic)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.deliver(MsgRequest, tc.from, tc.ts)
			f.Check(simtest.Want{Rules: []string{"MH-1"}, Sent: tc.sent, State: tc.want})
		})
	}
}

// The voter P1 has voted for P4's request (5, P4); requests come from P2 and P6.
func TestMH2(t *testing.T) {
	type req struct{ from, ts int }
	for _, tc := range []struct {
		name     string
		before   []req
		from, ts int
		sent     []string
		queue    string
		inquired bool
		told     string
	}{
		{"younger than the candidate: FAILED", nil, p(6), 7,
			[]string{"FAILED->P6@7"}, "[[7,6]]", false, "[6]"},
		{"older than the candidate: INQUIRE", nil, p(2), 3,
			[]string{"INQUIRE->P4@5"}, "[[3,2]]", true, noneS},
		{"equal timestamps, lower id: older, INQUIRE", nil, p(2), 5,
			[]string{"INQUIRE->P4@5"}, "[[5,2]]", true, noneS},
		{"equal timestamps, higher id: FAILED", nil, p(6), 5,
			[]string{"FAILED->P6@5"}, "[[5,6]]", false, "[6]"},
		{"older than the candidate but not the head: FAILED", []req{{p(2), 2}}, p(6), 3,
			[]string{"FAILED->P6@3"}, "[[2,2],[3,6]]", true, "[6]"},
		{"new head displaces an untold head: FAILED to it, no second INQUIRE", []req{{p(2), 3}}, p(6), 2,
			[]string{"FAILED->P2@3"}, "[[2,6],[3,2]]", true, "[2]"},
		{"new head displaces a told head: nothing to say", []req{{p(2), 8}}, p(6), 2,
			[]string{"INQUIRE->P4@5"}, "[[2,6],[8,2]]", true, "[2]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p(1), DeadlockFree)
			f.deliver(MsgRequest, p(4), 5)
			for _, r := range tc.before {
				f.deliver(MsgRequest, r.from, r.ts)
			}
			f.deliver(MsgRequest, tc.from, tc.ts)
			clock := max(5, tc.ts)
			for _, r := range tc.before {
				clock = max(clock, r.ts)
			}
			f.Check(simtest.Want{Rules: []string{"MH-1", "MH-2"}, Sent: tc.sent,
				State: df(st(cs.Released, "[1,2,3]", clock, 0, noneS, true, 4, 5, tc.queue), tc.inquired, noneS, noneS, noneS, tc.told)})
		})
	}
}

func TestMF1_RelinquishesTheVotesItWasAskedFor(t *testing.T) {
	f := newFixture(t, p(1), DeadlockFree)
	f.request() // (1, P1); P1 votes for itself
	f.deliver(MsgReply, p(2), 1)
	f.deliver(MsgInquire, p(2), 1) // not blocked yet: hold on to P2's vote
	f.Check(simtest.Want{Rules: []string{"MQ-1"},
		State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,2]", true, 1, 1, noneS), false, noneS, noneS, "[2]", noneS)})

	f.deliver(MsgFailed, p(3), 1)
	f.Check(simtest.Want{Rules: []string{"MF-1"}, Sent: []string{"RELINQUISH->P2@1"},
		State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1]", true, 1, 1, noneS), false, "[3]", "[2]", noneS, noneS)})

	// P2's vote comes back: the yield is over, P3's FAILED still stands.
	f.deliver(MsgReply, p(2), 1)
	f.Check(simtest.Want{Rules: []string{"MA-2"},
		State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,2]", true, 1, 1, noneS), false, "[3]", noneS, noneS, noneS)})
}

func TestMF1_StaleFailedIsIgnored(t *testing.T) {
	f := newFixture(t, p(1), DeadlockFree)
	f.request()
	f.deliver(MsgReply, p(3), 1)
	f.deliver(MsgFailed, p(3), 1) // overtaken by the vote that followed it
	f.Check(simtest.Want{State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,3]", true, 1, 1, noneS), false, noneS, noneS, noneS, noneS)})
	f.deliver(MsgFailed, p(2), 0) // about an earlier request
	f.Check(simtest.Want{State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,3]", true, 1, 1, noneS), false, noneS, noneS, noneS, noneS)})
}

// A process's own vote goes back and forth with no message: P4 (set {1,4,5}) votes for
// itself, the older request (1, P1) arrives, the INQUIRE to itself is held, and the
// FAILED from P5 makes it give its own vote to P1.
func TestMF1_RelinquishesItsOwnVoteWithoutMessages(t *testing.T) {
	f := newFixture(t, p(4), DeadlockFree)
	f.request()
	f.deliver(MsgRequest, p(1), 1)
	f.Check(simtest.Want{Rules: []string{"MH-1", "MH-2", "MQ-1"},
		State: df(st(cs.Wanted, "[1,4,5]", 1, 1, "[4]", true, 4, 1, "[[1,1]]"), true, noneS, noneS, "[4]", noneS)})

	f.deliver(MsgFailed, p(5), 1)
	f.Check(simtest.Want{Rules: []string{"MF-1", "MY-1"}, Sent: []string{"REPLY->P1@1"},
		State: df(st(cs.Wanted, "[1,4,5]", 1, 1, noneS, true, 1, 1, "[[1,4]]"), false, "[5]", "[4]", noneS, "[4]")})
	if got := f.waitingFor(); !slices.Equal(got, []int{1, 5}) {
		t.Errorf("waiting for %v, want [1 5]", got)
	}
}

func TestMQ1(t *testing.T) {
	for _, tc := range []struct {
		name     string
		setup    func(f *fixture)
		from, ts int
		rules    []string
		sent     []string
		want     string
	}{
		{"not blocked: hold the INQUIRE", func(f *fixture) { f.request(); f.deliver(MsgReply, p(3), 1) },
			p(3), 1, []string{"MQ-1"}, none,
			df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,3]", true, 1, 1, noneS), false, noneS, noneS, "[3]", noneS)},
		{"blocked by a FAILED: relinquish at once", func(f *fixture) {
			f.request()
			f.deliver(MsgReply, p(3), 1)
			f.deliver(MsgFailed, p(2), 1)
		}, p(3), 1, []string{"MQ-1"}, []string{"RELINQUISH->P3@1"},
			df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1]", true, 1, 1, noneS), false, "[2]", "[3]", noneS, noneS)},
		{"in the CS: ignore, the RELEASE answers", func(f *fixture) {
			f.request()
			f.deliver(MsgReply, p(2), 1)
			f.deliver(MsgReply, p(3), 1)
		}, p(3), 1, []string{"MQ-1"}, none,
			df(st(cs.Held, "[1,2,3]", 1, 1, "[1,2,3]", true, 1, 1, noneS), false, noneS, noneS, noneS, noneS)},
		{"overtook the vote: remembered", func(f *fixture) { f.request(); f.deliver(MsgFailed, p(2), 1) },
			p(3), 1, []string{"MQ-1"}, none,
			df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1]", true, 1, 1, noneS), false, "[2]", noneS, "[3]", noneS)},
		{"about an earlier request: ignored", func(f *fixture) { f.request(); f.deliver(MsgReply, p(3), 1) },
			p(3), 0, nil, none,
			df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1,3]", true, 1, 1, noneS), false, noneS, noneS, noneS, noneS)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p(1), DeadlockFree)
			tc.setup(f)
			f.deliver(MsgInquire, tc.from, tc.ts)
			f.Check(simtest.Want{Rules: tc.rules, Sent: tc.sent, State: tc.want})
		})
	}
}

// The INQUIRE that overtook a vote is answered when the vote arrives (non-FIFO).
func TestMQ1_HeldInquiryAnsweredWhenTheVoteArrives(t *testing.T) {
	f := newFixture(t, p(1), DeadlockFree)
	f.request()
	f.deliver(MsgFailed, p(2), 1)
	f.deliver(MsgInquire, p(3), 1)
	f.deliver(MsgReply, p(3), 1)
	f.Check(simtest.Want{Rules: []string{"MA-2"}, Sent: []string{"RELINQUISH->P3@1"},
		State: df(st(cs.Wanted, "[1,2,3]", 1, 1, "[1]", true, 1, 1, noneS), false, "[2]", "[3]", noneS, noneS)})
}

func TestMY1_GivesTheVoteToTheOldestRequest(t *testing.T) {
	f := newFixture(t, p(1), DeadlockFree)
	f.deliver(MsgRequest, p(4), 5)
	f.deliver(MsgRequest, p(6), 4) // INQUIRE to P4
	f.deliver(MsgRequest, p(2), 3) // FAILED to P6, the displaced head
	f.deliver(MsgRelinquish, p(4), 5)
	f.Check(simtest.Want{Rules: []string{"MY-1"}, Sent: []string{"REPLY->P2@3"},
		State: df(st(cs.Released, "[1,2,3]", 5, 0, noneS, true, 2, 3, "[[4,6],[5,4]]"), false, noneS, noneS, noneS, "[6,4]")})

	// A RELINQUISH from anyone but the candidate changes nothing.
	f.deliver(MsgRelinquish, p(6), 4)
	f.Check(simtest.Want{
		State: df(st(cs.Released, "[1,2,3]", 5, 0, noneS, true, 2, 3, "[[4,6],[5,4]]"), false, noneS, noneS, noneS, "[6,4]")})
}

func TestMR1_ReleasesTheWholeSet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		queued bool
		rules  []string
		sent   []string
		want   string
	}{
		{"nobody queued: the own vote is free again", false, []string{"MR-1", "MV-1"},
			[]string{"RELEASE->P2@1", "RELEASE->P3@1"}, st(cs.Released, "[1,2,3]", 1, 0, noneS, false, -1, 0, noneS)},
		{"a queued request gets the own vote", true, []string{"MR-1", "MV-1"},
			[]string{"RELEASE->P2@1", "RELEASE->P3@1", "REPLY->P4@3"}, st(cs.Released, "[1,2,3]", 3, 0, noneS, true, 4, 3, noneS)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p(1), Basic)
			f.request()
			f.deliver(MsgReply, p(2), 1)
			f.deliver(MsgReply, p(3), 1)
			if tc.queued {
				f.deliver(MsgRequest, p(4), 3)
			}
			f.release()
			f.Check(simtest.Want{Rules: tc.rules, Sent: tc.sent, Effects: []string{"exit"}, State: tc.want})
			if effs := f.Ctx.Effects(); len(effs) < 2 || effs[1].Kind != sim.ExitCS {
				t.Errorf("second effect %v, want ExitCS right after MR-1", effs[1].Kind)
			}
		})
	}
	f := newFixture(t, p(1), Basic)
	f.release() // not in the CS
	f.Check(simtest.Want{State: st(cs.Released, "[1,2,3]", 0, 0, noneS, false, -1, 0, noneS)})
}

func TestMV1(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fixture)
		from  int
		ts    int
		rules []string
		sent  []string
		want  string
	}{
		{"empty queue: the vote is free", nil, p(4), 5, []string{"MV-1"}, none,
			st(cs.Released, "[1,2,3]", 5, 0, noneS, false, -1, 0, noneS)},
		{"head of the queue gets the vote", func(f *fixture) {
			f.deliver(MsgRequest, p(6), 9)
			f.deliver(MsgRequest, p(2), 2)
		}, p(4), 5, []string{"MV-1"}, []string{"REPLY->P6@9"},
			st(cs.Released, "[1,2,3]", 9, 0, noneS, true, 6, 9, "[[2,2]]")},
		{"own request at the head: votes for itself, no message", func(f *fixture) { f.request() },
			p(4), 5, []string{"MV-1", "MA-2"}, none,
			st(cs.Wanted, "[1,2,3]", 6, 6, "[1]", true, 1, 6, noneS)},
		{"RELEASE from a non-candidate is ignored", func(f *fixture) { f.deliver(MsgRequest, p(6), 9) },
			p(6), 9, nil, none,
			st(cs.Released, "[1,2,3]", 9, 0, noneS, true, 4, 5, "[[9,6]]")},
		{"RELEASE for another request of the candidate is ignored", nil, p(4), 2, nil, none,
			st(cs.Released, "[1,2,3]", 5, 0, noneS, true, 4, 5, noneS)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, p(1), Basic)
			f.deliver(MsgRequest, p(4), 5)
			if tc.setup != nil {
				tc.setup(f)
			}
			f.deliver(MsgRelease, tc.from, tc.ts)
			f.Check(simtest.Want{Rules: tc.rules, Sent: tc.sent, State: tc.want})
		})
	}
}

func TestWaitingFor(t *testing.T) {
	f := newFixture(t, p(1), Basic)
	if got := f.waitingFor(); got != nil {
		t.Errorf("released: waiting for %v", got)
	}
	// A voter whose vote is out waits for the candidate only when someone is queued.
	f.deliver(MsgRequest, p(4), 1)
	if got := f.waitingFor(); got != nil {
		t.Errorf("voted, nobody queued: waiting for %v", got)
	}
	f.deliver(MsgRequest, p(6), 1)
	if got := f.waitingFor(); !slices.Equal(got, []int{4}) {
		t.Errorf("voted for P4 with P6 queued: waiting for %v, want [4]", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, p(1), DeadlockFree)
	f.request()
	f.deliver(MsgRequest, p(4), 5)
	f.deliver(MsgReply, p(2), 1)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(MsgInquire, p(2), 1)
	f.deliver(MsgFailed, p(3), 1)
	f.deliver(MsgRequest, p(6), 0)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

// ---- Voting sets and params ----

// Every construction, at every N: each set sorted and holding its owner, every two
// sets meeting; the plane's sizes at most one above ceil(sqrt(N)).
func TestBuildGivesVotingSets(t *testing.T) {
	for _, how := range []string{Plane, Grid} {
		for n := sim.MinNodes; n <= sim.MaxNodes; n++ {
			sets := Build(n, how).Sets
			for i, s := range sets {
				if !slices.Contains(s, i) || !slices.IsSorted(s) {
					t.Fatalf("%s N=%d: set %d = %v must be sorted and contain %d", how, n, i, s, i)
				}
				for j := range i {
					if !intersect(s, sets[j]) {
						t.Fatalf("%s N=%d: sets %d and %d do not intersect", how, n, i, j)
					}
				}
			}
			c := 1
			for c*c < n {
				c++
			}
			_, k := sizeRange(sets)
			if how == Plane && n >= 3 && k > c+1 {
				t.Errorf("plane N=%d: K up to %d, want at most ceil(sqrt(N))+1 = %d", n, k, c+1)
			}
			if how == Grid && n%c == 0 && n != 3 && n != 7 {
				if !EqualSize(sets) || k != n/c+c-1 {
					t.Errorf("grid N=%d: K = %d, want rows+columns-1 = %d for every set", n, k, n/c+c-1)
				}
			}
		}
	}
}

// The notes' sets for N=3 and N=7 by position (the notes' p_k is index k-1), whatever
// the construction; the planes of order 3, 5 and 7 at N=13, 31, 57; the plane extended
// elsewhere; 003's grid.
func TestBuild(t *testing.T) {
	want3 := [][]int{{0, 1}, {1, 2}, {0, 2}}
	want7 := [][]int{{0, 1, 2}, {1, 3, 5}, {2, 4, 5}, {0, 3, 4}, {1, 4, 6}, {0, 5, 6}, {2, 3, 6}}
	for _, tc := range []struct {
		n     int
		how   string
		about string
		equal bool    // the notes' properties 2 and 3 hold
		k     int     // K of the first set
		some  [][]int // the first sets, when checked
		lines int     // every two sets share exactly this many processes (0: not checked)
	}{
		{3, Plane, "the notes' sets for N=3: K=2", true, 2, want3, 1},
		{3, Grid, "the notes' sets for N=3: K=2", true, 2, want3, 1},
		{7, Plane, "the notes' sets for N=7 (the projective plane of order 2): K=3", true, 3, want7, 1},
		{7, Grid, "the notes' sets for N=7 (the projective plane of order 2): K=3", true, 3, want7, 1},
		{13, Plane, "the projective plane of order 3: K=4", true, 4, nil, 1},
		{31, Plane, "the projective plane of order 5: K=6", true, 6, nil, 1},
		{57, Plane, "the projective plane of order 7: K=8", true, 8, nil, 1},
		{5, Plane, "the notes' sets for N=3 on the first 3 processes (K=2); each of the other 2 asks one of its lines plus itself (K=3)",
			false, 2, append(slices.Clone(want3), []int{0, 1, 3}, []int{1, 2, 4}), 0},
		{9, Plane, "the notes' sets for N=7 (the projective plane of order 2) on the first 7 processes (K=3); each of the other 2 asks one of its lines plus itself (K=4)",
			false, 3, append(slices.Clone(want7), []int{0, 1, 2, 7}, []int{1, 3, 5, 8}), 0},
		{16, Plane, "the projective plane of order 3 on the first 13 processes (K=4); each of the other 3 asks one of its lines plus itself (K=5)", false, 4, nil, 0},
		{16, Grid, "a grid of 4 rows by 4 columns, a set being a row plus a column: K=7", true, 7, nil, 0},
		{36, Grid, "a grid of 6 rows by 6 columns, a set being a row plus a column: K=11", true, 11, nil, 0},
		{5, Grid, "a grid of 3 columns with a short last row, a set being a row plus a column: K from 3 to 4",
			false, 4, [][]int{{0, 1, 2, 3}, {0, 1, 2, 4}, {0, 1, 2}, {0, 3, 4}, {1, 3, 4}}, 0},
		{2, Plane, "a grid of 1 rows by 2 columns, a set being a row plus a column: K=2", true, 2, [][]int{{0, 1}, {0, 1}}, 0},
	} {
		got := Build(tc.n, tc.how)
		name := fmt.Sprintf("%s N=%d", tc.how, tc.n)
		if got.About != tc.about {
			t.Errorf("%s: about %q, want %q", name, got.About, tc.about)
		}
		if len(got.Sets) != tc.n || EqualSize(got.Sets) != tc.equal || len(got.Sets[0]) != tc.k {
			t.Errorf("%s: %d sets, equal size %v, K %d; want %d, %v, %d", name, len(got.Sets), EqualSize(got.Sets), len(got.Sets[0]), tc.n, tc.equal, tc.k)
		}
		if tc.some != nil && !slices.EqualFunc(got.Sets[:len(tc.some)], tc.some, slices.Equal) {
			t.Errorf("%s: sets %v, want %v first", name, got.Sets, tc.some)
		}
		for i := range got.Sets {
			for j := range i {
				if shared := len(both(got.Sets[i], got.Sets[j])); tc.lines > 0 && shared != tc.lines {
					t.Errorf("%s: sets %d and %d share %d processes, want %d", name, i, j, shared, tc.lines)
				}
			}
		}
	}
	if got := DefaultSets(13); !slices.EqualFunc(got, Build(13, Plane).Sets, slices.Equal) {
		t.Errorf("DefaultSets(13) is not the plane")
	}
}

func both(a, b []int) []int {
	var out []int
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestParseParams(t *testing.T) {
	ids := []int{10, 20, 30}
	simtest.ParseTable(t, ParseParams, ids, []simtest.ParseCase{
		{Raw: "", Want: Params{Variant: Basic, Construction: Plane, Sets: notes3}},
		{Raw: "null", Want: Params{Variant: Basic, Construction: Plane, Sets: notes3}},
		{Raw: " {} ", Want: Params{Variant: Basic, Construction: Plane, Sets: notes3}},
		{Raw: `{"variant":"deadlock-free"}`, Want: Params{Variant: DeadlockFree, Construction: Plane, Sets: notes3}},
		{Raw: `{"variant":"basic","sets":null}`, Want: Params{Variant: Basic, Construction: Plane, Sets: notes3}},
		{Raw: `{"construction":"grid"}`, Want: Params{Variant: Basic, Construction: Grid, Sets: notes3}},
		{Raw: `{"sets":{"10":[10,20],"20":[20,30],"30":[30,10]}}`, Want: Params{Variant: Basic, Construction: Plane, Sets: [][]int{{0, 1}, {1, 2}, {0, 2}}}},
		{Raw: `{"sets":{"30":[10,30],"10":[10],"20":[20,10]}}`, Want: Params{Variant: Basic, Construction: Plane, Sets: [][]int{{0}, {0, 1}, {0, 2}}}},
		{Raw: `{"construction":"grid","sets":{"30":[10,30],"10":[10],"20":[20,10]}}`, Want: Params{Variant: Basic, Construction: Grid, Sets: [][]int{{0}, {0, 1}, {0, 2}}}},
		{Raw: `{"construction":"square"}`, Err: `params.construction: "square" is unknown (allowed: "plane", "grid")`},
		{Raw: `{"variant":"fast"}`, Err: `params.variant: "fast" is unknown (allowed: "basic", "deadlock-free")`},
		{Raw: `{"variant":1}`, Err: `params.variant: got number, want "basic" or "deadlock-free"`},
		{Raw: `{"voters":1}`, Err: "params.voters: unknown field (allowed: variant, construction, sets)"},
		{Raw: `{"sets":[[10]]}`, Err: `params.sets: want an object {"<id>": [ids...]}`},
		{Raw: `{"sets":{"10":[10,20],"20":[20,30]}}`, Err: "params.sets: no set for node 30 (give one for every node: 10 20 30)"},
		{Raw: `{"sets":{"11":[11]}}`, Err: `params.sets.11: "11" is not a node id (ids: 10 20 30)`},
		{Raw: `{"sets":{"x":[10]}}`, Err: `params.sets.x: "x" is not a node id`},
		{Raw: `{"sets":{"10":[10],"10":[10,20]}}`, Err: "params.sets.10: given twice"},
		{Raw: `{"sets":{"10":[10,40]}}`, Err: "params.sets.10: 40 is not a node id (ids: 10 20 30)"},
		{Raw: `{"sets":{"10":[10,20,10]}}`, Err: "params.sets.10: 10 is listed twice"},
		{Raw: `{"sets":{"10":[20,30]}}`, Err: "params.sets.10: must contain 10 itself"},
		{Raw: `{"sets":{"10":"all"}}`, Err: "params.sets.10: want an array of node ids"},
		{Raw: `{"sets":{"10":[1.5]}}`, Err: "params.sets.10: want an array of node ids"},
		{Raw: `{"sets":{"10":[10,20],"20":[20],"30":[30,10]}}`, Err: "params.sets.20: shares no process with params.sets.30"},
		{Raw: `[1]`, Err: "params: got array"},
		{Raw: `{"variant":"basic"} {}`, Err: "params: must be a single JSON object"},
		{Raw: `{"variant":`, Err: "params:"},
	})
}

// Custom sets reach the nodes; without params a node gets the default sets.
func TestNewUsesTheSets(t *testing.T) {
	ids := []int{10, 20, 30}
	pp := simtest.Params(t, Spec(), `{"sets":{"10":[10],"20":[10,20],"30":[10,30]}}`, ids)
	for _, tc := range []struct {
		params any
		self   int
		want   string
	}{
		{pp, 2, "[10,30]"},
		{&Params{Sets: [][]int{{0}, {0, 1}, {0, 2}}}, 0, "[10]"},
		{nil, 2, "[10,30]"}, // the notes' V3 = {1, 3}
		{nil, 1, "[20,30]"},
	} {
		n := Spec().New(tc.self, &sim.Setup{IDs: ids, Params: tc.params})
		if got := string(sim.EncodeState(n)); !strings.Contains(got, `"set":`+tc.want) {
			t.Errorf("params %v, node %d: %s, want set %s", tc.params, tc.self, got, tc.want)
		}
	}
}

// ---- Whole runs through the kernel ----

// sparseIDs returns n distinct, shuffled, non-contiguous ids, so an index mistaken for
// an id shows.
func sparseIDs(r *rand.Rand, n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = 3*i + r.IntN(3)
	}
	r.Shuffle(n, func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
	return ids
}

func config(seed uint64, ids []int, params any, acts ...sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: ids, Params: params, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true}, CS: 2, Until: 5000, Actions: acts}
}

func req(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActRequest, Node: node} }

// entryCost sums K-1 over the entries of the run: the messages each entry needs with
// each verb (REQUEST, REPLY, RELEASE) when nobody contends.
func entryCost(evs []sim.Event, sets [][]int) int {
	c := 0
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			c += len(sets[e.Node]) - 1
		}
	}
	return c
}

// The notes: 3 sqrt(N) per entry and exit, which here is 3(K-1) because a process's
// vote for itself is no message. N=7 with the notes' sets: K=3, 6 messages.
func TestRun_ThreeKMinus1MessagesPerEntryWithoutContention(t *testing.T) {
	for _, variant := range []string{Basic, DeadlockFree} {
		for _, n := range []int{2, 3, 4, 5, 7, 9, 12, 16} {
			t.Run(fmt.Sprintf("%s/N=%d", variant, n), func(t *testing.T) {
				var acts []sim.Action
				for i := 0; i < n; i++ {
					acts = append(acts, req(20*i, i)) // each entry is over before the next request
				}
				for seed := uint64(1); seed <= 5; seed++ {
					evs := simtest.Run(t, config(seed, simtest.IDs(n), Params{Variant: variant}, acts...))
					if got := simtest.Count(evs, sim.EvEnter); got != n {
						t.Fatalf("seed %d: %d entries, want %d", seed, got, n)
					}
					per := entryCost(evs, DefaultSets(n))
					for _, typ := range []string{MsgRequest, MsgReply, MsgRelease} {
						if got := simtest.CountMsgs(evs, typ); got != per {
							t.Errorf("seed %d: %d %s, want %d (K-1 per entry)", seed, got, typ, per)
						}
					}
					total := simtest.Count(evs, sim.EvSend)
					if total != 3*per {
						t.Errorf("seed %d: %d messages, want 3(K-1) per entry = %d", seed, total, 3*per)
					}
					if want := Spec().Costs[0].Value(n) * float64(n); math.Abs(float64(total)-want) > 1e-9 {
						t.Errorf("seed %d: %d messages, the cost figure says %v for %d entries", seed, total, want, n)
					}
					if v := simtest.Violations(evs); v != nil {
						t.Errorf("seed %d: %v", seed, v)
					}
				}
			})
		}
	}
	// The figures the issue quotes: the notes' sets at N=3 and 7; the plane of order 3
	// at 13 (K=4) and, extended, at 16 (13 processes with K=4, 3 with K=5): below
	// 3 sqrt(16) = 12, where the grid (K=7) cost 18.
	for n, want := range map[int]float64{3: 3, 7: 6, 13: 9, 16: 3 * (13*3 + 3*4) / 16.0} {
		if got := Spec().Costs[0].Value(n); got != want {
			t.Errorf("cost at N=%d = %v, want %v", n, got, want)
		}
	}
}

// A custom set of one (the process alone) costs no message at all.
func TestRun_CustomSets(t *testing.T) {
	ids := []int{10, 20, 30, 40}
	pp := simtest.Params(t, Spec(), `{"sets":{"10":[10],"20":[10,20],"30":[10,30],"40":[10,40]}}`, ids)
	evs := simtest.Run(t, config(1, ids, pp, req(0, 0), req(20, 3)))
	if got, want := simtest.Count(evs, sim.EvSend), 3; got != want {
		t.Errorf("%d messages, want 0 for P10 (K=1) and 3 for P40 (K=2)", got)
	}
	for seed := uint64(1); seed <= 50; seed++ {
		acts := simtest.RandomActions(seed, 4, sim.Mutex, simtest.Workload{Requests: 12, Span: 30})
		cfg := config(seed, ids, pp, acts...)
		cfg.Network.FIFO = seed%2 == 0
		evs := simtest.Run(t, cfg)
		for _, v := range simtest.Violations(evs) {
			if strings.HasPrefix(v, sim.PropMutex) {
				t.Fatalf("seed %d: %s", seed, v)
			}
		}
	}
}

// scenario is the part of scenario v1 these tests need; decoding is strict so the JSON
// handed to the curated library is exactly what ran here.
type scenario struct {
	Version   int    `json:"version"`
	Algorithm string `json:"algorithm"`
	Title     string `json:"title"`
	About     string `json:"about"`
	Nodes     int    `json:"nodes"`
	IDs       []int  `json:"ids"`
	Seed      uint64 `json:"seed"`
	Network   struct {
		Delay [2]int `json:"delay"`
		FIFO  bool   `json:"fifo"`
	} `json:"network"`
	CS     int             `json:"cs"`
	Params json.RawMessage `json:"params"`
	Events []struct {
		At   int    `json:"at"`
		Do   string `json:"do"`
		Node int    `json:"node"`
	} `json:"events"`
	Until int `json:"until"`
}

func fromScenario(t *testing.T, js string) sim.Config {
	t.Helper()
	var sc scenario
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		t.Fatalf("scenario: %v", err)
	}
	if sc.Version != 2 || sc.Algorithm != Spec().Slug || sc.Title == "" || sc.About == "" || len(sc.IDs) != sc.Nodes {
		t.Fatalf("scenario header: %+v", sc)
	}
	params, err := ParseParams(sc.Params, sc.IDs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{Spec: Spec(), IDs: sc.IDs, Params: params, Seed: sc.Seed, CS: sc.CS, Until: sc.Until,
		Network: sim.Network{DelayMin: sc.Network.Delay[0], DelayMax: sc.Network.Delay[1], FIFO: sc.Network.FIFO}}
	for _, e := range sc.Events {
		if e.Do != "request" {
			t.Fatalf("scenario event %q: only requests here", e.Do)
		}
		cfg.Actions = append(cfg.Actions, req(e.At, slices.Index(sc.IDs, e.Node)))
	}
	return cfg
}

// Curated scenario: the notes' deadlock example.
const deadlockScenario = `{
  "version": 2,
  "algorithm": "maekawa",
  "title": "Maekawa's three-process deadlock",
  "about": "Three processes with the notes' voting sets V1 = {P1, P2}, V2 = {P2, P3}, V3 = {P3, P1}. All three ask for the CS at the same moment. Each first hands its own request to itself and, its vote being free, votes for itself (MH-1), so voted is true everywhere before any REQUEST arrives. P1's REQUEST then reaches P2, P2's reaches P3 and P3's reaches P1, and each voter can only queue it. P1 waits for P2's vote, P2 for P3's and P3 for P1's: a cycle, with nothing left in flight. The monitor reports the deadlock and names the cycle. The deadlock-free variant (params.variant) breaks it with timestamps and INQUIRE / RELINQUISH.",
  "nodes": 3,
  "ids": [1, 2, 3],
  "seed": 1,
  "network": {"delay": [1, 3], "fifo": true},
  "cs": 2,
  "params": {"variant": "basic", "sets": {"1": [1, 2], "2": [2, 3], "3": [3, 1]}},
  "events": [
    {"at": 0, "do": "request", "node": 1},
    {"at": 0, "do": "request", "node": 2},
    {"at": 0, "do": "request", "node": 3}
  ],
  "until": 50
}`

func TestScenario_ThreeProcessDeadlock(t *testing.T) {
	base := fromScenario(t, deadlockScenario)
	evs := simtest.Run(t, base)
	if got, want := simtest.Violations(evs), []string{"deadlock: wait-for cycle P1 -> P2 -> P3 -> P1"}; !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	if got := simtest.Count(evs, sim.EvEnter); got != 0 {
		t.Errorf("%d entries, want none", got)
	}
	for i := range 3 {
		// Each asked, voted for itself, counted its own vote, then queued the other's request.
		if got, want := simtest.Rules(evs, i), []string{"MI-1", "MA-1", "MH-1", "MA-2", "MH-1"}; !slices.Equal(got, want) {
			t.Errorf("P%d fired %v, want %v", i+1, got, want)
		}
	}
	// Simultaneous requests deadlock whatever the delays: every vote is cast before any
	// REQUEST can arrive.
	for seed := uint64(1); seed <= 200; seed++ {
		cfg := base
		cfg.Seed = seed
		cfg.Network = sim.Network{DelayMin: int(seed % 3), DelayMax: 3 + int(seed%7), FIFO: seed%2 == 0}
		evs := simtest.Run(t, cfg)
		if got := simtest.Violations(evs); len(got) == 0 || got[0] != "deadlock: wait-for cycle P1 -> P2 -> P3 -> P1" {
			t.Fatalf("seed %d: violations %v", seed, got)
		}
	}
	// The same workload with the deadlock-free variant: everybody enters. Not oldest
	// first, though: all stamps are 1, so P1 is oldest, but P2 keeps its own vote (no
	// older request is refused to it) while P3, told FAILED by P1, gives its own vote to
	// P2 (MF-1, MY-1). The fix promises progress, not timestamp order.
	cfg := base
	cfg.Params = Params{Variant: DeadlockFree, Sets: base.Params.(Params).Sets}
	for seed := uint64(1); seed <= 200; seed++ {
		cfg.Seed = seed
		cfg.Network = sim.Network{DelayMin: int(seed % 3), DelayMax: 3 + int(seed%7), FIFO: seed%2 == 0}
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); v != nil {
			t.Fatalf("deadlock-free, seed %d: %v", seed, v)
		}
		var order []int
		for _, e := range evs {
			if e.Type == sim.EvEnter {
				order = append(order, e.Node)
			}
		}
		if !slices.Equal(order, []int{p(2), p(1), p(3)}) {
			t.Fatalf("deadlock-free, seed %d: entry order %v, want P2 P1 P3", seed, order)
		}
		if rules := simtest.Rules(evs, p(3)); !slices.Contains(rules, "MF-1") || !slices.Contains(rules, "MY-1") {
			t.Fatalf("deadlock-free, seed %d: P3 fired %v, want it to give up its own vote (MF-1, MY-1)", seed, rules)
		}
	}
}

// Curated scenario (optional): the same three requests with the deadlock-free variant.
const deadlockFreeScenario = `{
  "version": 2,
  "algorithm": "maekawa",
  "title": "Maekawa without the deadlock: INQUIRE, RELINQUISH and FAILED",
  "about": "The notes' three-process example again, V1 = {P1, P2}, V2 = {P2, P3}, V3 = {P3, P1}, all asking at once, now with the deadlock-free variant. Requests carry Lamport timestamps; all three are stamped 1, so ties go to the lower id and P1's request is the oldest. P1 votes for itself and refuses P3's younger request with FAILED (MH-2). P3, told it must wait, gives its own vote to P2's older request (MF-1, MY-1). P2 now has both votes and enters. When it leaves, its RELEASE gives P3 its own vote back and P2 votes for P1, which enters; P1's RELEASE then hands P1's vote to P3. Everyone enters, in the order P2, P1, P3: the fix guarantees progress, not strict timestamp order. Ten messages in all: three REQUESTs, one FAILED, three REPLYs, three RELEASEs; the INQUIREs and RELINQUISH stay inside a process because each asks for its own vote.",
  "nodes": 3,
  "ids": [1, 2, 3],
  "seed": 1,
  "network": {"delay": [1, 3], "fifo": true},
  "cs": 2,
  "params": {"variant": "deadlock-free", "sets": {"1": [1, 2], "2": [2, 3], "3": [3, 1]}},
  "events": [
    {"at": 0, "do": "request", "node": 1},
    {"at": 0, "do": "request", "node": 2},
    {"at": 0, "do": "request", "node": 3}
  ],
  "until": 50
}`

func TestScenario_DeadlockFreeThreeProcesses(t *testing.T) {
	evs := simtest.Run(t, fromScenario(t, deadlockFreeScenario))
	if v := simtest.Violations(evs); v != nil {
		t.Fatalf("violations %v", v)
	}
	var order []int
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			order = append(order, e.Node)
		}
	}
	if !slices.Equal(order, []int{p(2), p(1), p(3)}) {
		t.Errorf("entry order %v, want P2 P1 P3", order)
	}
	for typ, want := range map[string]int{MsgRequest: 3, MsgFailed: 1, MsgReply: 3, MsgRelease: 3, MsgInquire: 0, MsgRelinquish: 0} {
		if got := simtest.CountMsgs(evs, typ); got != want {
			t.Errorf("%d %s, want %d", got, typ, want)
		}
	}
	if got, want := simtest.Rules(evs, p(3)), []string{"MI-1", "MA-1", "MH-1", "MA-2", "MH-1", "MH-2", "MQ-1", "MF-1", "MY-1", "MV-1", "MA-2", "MA-2", "ME-1", "MR-1", "MV-1"}; !slices.Equal(got, want) {
		t.Errorf("P3 fired %v, want %v", got, want)
	}
}

// Curated scenario: the notes' sets for N=7.
const n7Scenario = `{
  "version": 2,
  "algorithm": "maekawa",
  "title": "Maekawa with the notes' voting sets for N = 7",
  "about": "Seven processes with the sets of the notes: V1 = {1,2,3}, V2 = {2,4,6}, V3 = {3,5,6}, V4 = {1,4,5}, V5 = {2,5,7}, V6 = {1,6,7}, V7 = {3,4,7}. Every set has K = 3 members, every process sits in 3 sets, and any two sets share exactly one process. P1 asks alone: REQUEST to P2 and P3, their two REPLYs and two RELEASEs make 3(K-1) = 6 messages; its vote for itself costs none. Then P2 and P7 ask together. Their sets meet only in P4, which votes for whichever REQUEST reaches it first and queues the other until that process's RELEASE: the shared member is what keeps them from being in the CS together.",
  "nodes": 7,
  "ids": [1, 2, 3, 4, 5, 6, 7],
  "seed": 3,
  "network": {"delay": [1, 3], "fifo": true},
  "cs": 3,
  "params": {"variant": "basic"},
  "events": [
    {"at": 0, "do": "request", "node": 1},
    {"at": 20, "do": "request", "node": 2},
    {"at": 20, "do": "request", "node": 7}
  ],
  "until": 80
}`

func TestScenario_N7VotingSets(t *testing.T) {
	evs := simtest.Run(t, fromScenario(t, n7Scenario))
	if v := simtest.Violations(evs); v != nil {
		t.Fatalf("violations %v", v)
	}
	var order []int
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			order = append(order, e.Node)
		}
	}
	if len(order) != 3 || order[0] != p(1) {
		t.Fatalf("entries %v, want P1 then P2 and P7", order)
	}
	if got := simtest.Count(evs, sim.EvSend); got != 18 {
		t.Errorf("%d messages, want 3 entries x 6", got)
	}
	// P1's entry touched only its set: P2 and P3.
	for _, e := range evs {
		if e.Type == sim.EvSend && e.T < 20 && e.Msg.From != p(1) && e.Msg.To != p(1) {
			t.Errorf("message %s P%d->P%d during P1's entry", e.Msg.Type, e.Msg.From+1, e.Msg.To+1)
		}
	}
	// P4, the only common member of V2 and V7, voted for one, queued the other, and
	// voted for it on the first one's RELEASE.
	if got, want := simtest.Rules(evs, p(4)), []string{"MI-1", "MH-1", "MH-1", "MV-1", "MV-1"}; !slices.Equal(got, want) {
		t.Errorf("P4 fired %v, want %v", got, want)
	}
	var p4Votes []int
	for _, e := range evs {
		if e.Type == sim.EvSend && e.Msg.From == p(4) && e.Msg.Type == MsgReply {
			p4Votes = append(p4Votes, e.Msg.To)
		}
	}
	if !slices.Equal(p4Votes, order[1:]) {
		t.Errorf("P4 voted for %v, entries after P1 were %v", p4Votes, order[1:])
	}
}

// Seed sweep, deadlock-free variant: everybody asks at once, then more random requests;
// random N, delays and FIFO-ness. Never a deadlock nor two in the CS, every request is
// granted, and contention costs at most 5(K-1) per entry on the whole run.
func TestRun_DeadlockFreeSeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		n := 2 + r.IntN(15)
		var acts []sim.Action
		for i := range n {
			acts = append(acts, req(0, i))
		}
		acts = append(acts, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 2 * n, Span: 150})...)
		cfg := config(seed, sparseIDs(r, n), Params{Variant: DeadlockFree}, acts...)
		cfg.Network = sim.Network{DelayMin: r.IntN(3), DelayMax: 3 + r.IntN(8), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(4)
		cfg.Until = 50_000
		cfg.Pending = 1_000_000
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); v != nil {
			t.Fatalf("seed %d (N=%d, FIFO %v): violations %v", seed, n, cfg.Network.FIFO, v)
		}
		if u := simtest.Unserved(evs, n); u != nil {
			t.Fatalf("seed %d (N=%d): never granted: %v", seed, n, u)
		}
		if req, ent := simtest.Count(evs, sim.EvRequest), simtest.Count(evs, sim.EvEnter); req != ent {
			t.Fatalf("seed %d (N=%d): %d requests, %d entries", seed, n, req, ent)
		}
		if got, limit := simtest.Count(evs, sim.EvSend), 5*entryCost(evs, DefaultSets(n)); got > limit {
			t.Fatalf("seed %d (N=%d): %d messages, more than 5(K-1) per entry = %d", seed, n, got, limit)
		}
	}
}

// Seed sweep, basic variant: the CS is never shared; liveness is not promised, but a
// request left waiting always comes with a deadlock report (and only then).
func TestRun_BasicSeedSweep(t *testing.T) {
	deadlocks := 0
	for seed := uint64(1); seed <= 500; seed++ {
		r := rand.New(rand.NewPCG(seed, 12))
		n := 2 + r.IntN(12)
		acts := simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 40 * (1 + r.IntN(5))})
		cfg := config(seed, sparseIDs(r, n), nil, acts...)
		cfg.Network = sim.Network{DelayMin: r.IntN(3), DelayMax: 3 + r.IntN(6), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(4)
		cfg.Pending = 1_000_000
		evs := simtest.Run(t, cfg)
		v := simtest.Violations(evs)
		for _, x := range v {
			if !strings.HasPrefix(x, sim.PropDeadlock+": wait-for cycle ") {
				t.Fatalf("seed %d (N=%d): %s", seed, n, x)
			}
		}
		if u := simtest.Unserved(evs, n); (u != nil) != (v != nil) {
			t.Fatalf("seed %d (N=%d): unserved %v but violations %v", seed, n, u, v)
		}
		if v != nil {
			deadlocks++
		}
	}
	if deadlocks == 0 {
		t.Error("no run deadlocked: the sweep does not exercise the basic variant's weakness")
	}
}

// ---- Numbering and sizes as the notes give them ----

// With the default ids 1..N, the process the page calls Pk asks the notes' V_k (002).
func TestDefaultIDsAreTheNotesNumbering(t *testing.T) {
	for _, tc := range []struct {
		n    int
		sets map[int]string // id -> its voting set, by ids, as the notes write it
	}{
		{3, map[int]string{1: "[1,2]", 2: "[2,3]", 3: "[1,3]"}},
		{7, map[int]string{1: "[1,2,3]", 2: "[2,4,6]", 3: "[3,5,6]", 4: "[1,4,5]", 5: "[2,5,7]", 6: "[1,6,7]", 7: "[3,4,7]"}},
	} {
		ids := Spec().Defaults.IDs(tc.n)
		if want := tc.n; ids[0] != 1 || ids[len(ids)-1] != want {
			t.Fatalf("default ids for N=%d: %v, want 1..%d", tc.n, ids, tc.n)
		}
		pp, err := Spec().ParseParams(nil, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			got := string(sim.EncodeState(Spec().New(i, &sim.Setup{IDs: ids, Params: pp})))
			if want := `"set":` + tc.sets[id]; !strings.Contains(got, want) {
				t.Errorf("N=%d, P%d: %s, want V%d %s", tc.n, id, got, id, want)
			}
		}
	}
}

// An old link (ids 0..N-1, no params) pins Spec().Earlier's params: the sets it ran with,
// the notes' by position at N=3 and 7 and the row+column grid elsewhere, come back.
func TestEarlierDefaultsKeepTheOldSets(t *testing.T) {
	if len(Spec().Earlier) != 1 || !Spec().Earlier[0].IDsFrom0 || Spec().Earlier[0].Epoch != 2 {
		t.Fatalf("Earlier = %+v, want one epoch-2 entry with IDsFrom0", Spec().Earlier)
	}
	for _, n := range []int{2, 3, 5, 7, 9, 16, 36} {
		pp, err := Spec().ParseParams([]byte(Spec().Earlier[0].Params), simtest.IDs(n))
		if err != nil {
			t.Fatal(err)
		}
		want := grid(n).Sets
		switch n {
		case 3:
			want = notes3
		case 7:
			want = notes7
		}
		if got := pp.(Params).Sets; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("N=%d: %v, want the earlier default %v", n, got, want)
		}
	}
}

// The check: at N=16 an entry alone costs about 3 sqrt(N) = 12 messages (9 for
// the plane's 13 processes, 12 for the 3 beyond it), not the grid's 3(K-1) = 18 with
// K = 2 sqrt(N) - 1 = 7.
func TestN16CostsAbout3SqrtN(t *testing.T) {
	ids := Spec().Defaults.IDs(16)
	for _, tc := range []struct {
		params   string
		min, max int
	}{
		{`{}`, 9, 12},
		{`{"construction":"grid"}`, 18, 18},
	} {
		pp, err := Spec().ParseParams([]byte(tc.params), ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ids {
			evs := simtest.Run(t, config(1, ids, pp, req(0, i)))
			if got := simtest.Count(evs, sim.EvSend); got < tc.min || got > tc.max || simtest.Count(evs, sim.EvEnter) != 1 {
				t.Errorf("%s: P%d's entry cost %d messages, want %d to %d", tc.params, ids[i], got, tc.min, tc.max)
			}
		}
	}
}

// Every process's inspector names what built this run's sets and their K (a teacher's
// request: "label honestly which construction is used and its K"), whatever the N and the
// params: the notes' sets, a plane, the plane extended, the grid, or sets given.
func TestInspectorNamesTheConstructionAndK(t *testing.T) {
	for _, tc := range []struct {
		n      int
		params string
		want   string
	}{
		{3, ``, "the notes' sets for N=3: K=2"},
		{7, ``, "the notes' sets for N=7 (the projective plane of order 2): K=3"},
		{13, ``, "the projective plane of order 3: K=4"},
		{16, ``, "the projective plane of order 3 on the first 13 processes (K=4); each of the other 3 asks one of its lines plus itself (K=5)"},
		{16, `{"construction":"grid"}`, "a grid of 4 rows by 4 columns, a set being a row plus a column: K=7"},
		{3, `{"sets":{"1":[1,2],"2":[2,3],"3":[3,1]}}`, "the notes' sets for N=3: K=2"}, // the notes' own, given
		{3, `{"sets":{"1":[1],"2":[1,2],"3":[1,3]}}`, "voting sets chosen for this run, not built: K from 1 to 2"},
		{3, `{"sets":{"1":[1,2,3],"2":[1,2,3],"3":[1,2,3]}}`, "voting sets chosen for this run, not built: K=3"},
	} {
		ids := Spec().Defaults.IDs(tc.n)
		pp, err := Spec().ParseParams([]byte(tc.params), ids)
		if err != nil {
			t.Fatalf("N=%d %s: %v", tc.n, tc.params, err)
		}
		for i := range ids {
			var st struct{ Construction string }
			if err := json.Unmarshal(sim.EncodeState(Spec().New(i, &sim.Setup{IDs: ids, Params: pp})), &st); err != nil {
				t.Fatal(err)
			}
			if st.Construction != tc.want {
				t.Errorf("N=%d %s, P%d: construction %q, want %q", tc.n, tc.params, ids[i], st.Construction, tc.want)
			}
		}
	}
}
