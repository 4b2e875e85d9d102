package bully

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms/heartbeat"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Unit tests use ids that are not the indexes, so a mix-up shows:
// index 0 -> P3, 1 -> P9, 2 -> P1, 3 -> P7. With MaxDelay 3 the time-outs are 7 and 15.
var unitIDs = []int{3, 9, 1, 7}

const (
	iP3, iP9, iP1, iP7 = 0, 1, 2, 3
	unitAnswerT        = 7
	unitCoordT         = 15
)

// unit builds node self without running Init (a test gives it Init or Recover);
// messages show as "TYPE->index", plus "(arg)" for COORDINATOR.
func unit(t *testing.T, self int) *simtest.Fixture {
	t.Helper()
	f := simtest.NewFixture(t, Spec(), self, &sim.Setup{IDs: unitIDs, MaxDelay: 3})
	f.Show = func(m sim.Message) string {
		if m.Type == MsgCoordinator {
			return fmt.Sprintf("%s(%d)", simtest.TypeTo(m), m.Arg)
		}
		return simtest.TypeTo(m)
	}
	return f
}

// started returns node self after Init, with its effects cleared.
func started(t *testing.T, self int) *simtest.Fixture {
	t.Helper()
	f := unit(t, self)
	f.Step(sim.Input{Kind: sim.Init})
	f.Ctx.Reset(self)
	return f
}

func deliver(from, to int, typ string, arg int) sim.Input {
	return sim.Input{Kind: sim.Deliver, Msg: sim.Message{Type: typ, From: from, To: to, Arg: arg}}
}

// Every rule has a test named after it; the failure detector's FD rules are tested
// beside it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec(), ".", "../heartbeat") }

func state(st, waiting string, leader int, answered string) string {
	return fmt.Sprintf(`{"state":%q,"waiting":%q,"leader":%d,"answered":%s}`, st, waiting, leader, answered)
}

func TestBU1_StartsOffWithTheHighestIDAsLeader(t *testing.T) {
	for self := range unitIDs {
		f := unit(t, self)
		f.Step(sim.Input{Kind: sim.Init})
		f.Check(simtest.Want{Rules: []string{"BU-1"}, Leaders: []int{9}, State: state(Off, WaitNone, 9, "[]")})
	}
}

func TestRE1_SendsElectionToEveryHigherID(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{
		Rules:   []string{"RE1"},
		Sent:    []string{"ELECTION->1", "ELECTION->3"}, // P9 and P7, not P1
		Effects: []string{"set answer 7"},
		State:   state(On, WaitAnswer, 9, "[]"),
	})
}

func TestRE1_ElectWhileAnElectionIsOnDoesNothing(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{State: state(On, WaitAnswer, 9, "[]")})
}

func TestRE1_NoAnswerBeforeTimeoutMakesItCoordinator(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerAnswer})
	f.Check(simtest.Want{
		Rules:   []string{"RE1"},
		Sent:    []string{"COORDINATOR->2(3)"}, // only P1 is lower than P3
		Leaders: []int{3},
		State:   state(Off, WaitNone, 3, "[]"),
	})
}

func TestRE1_HighestIDWaitsOutTheTimeoutThenAnnouncesToAll(t *testing.T) {
	f := started(t, iP9)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Check(simtest.Want{Rules: []string{"RE1"}, Effects: []string{"set answer 7"}, State: state(On, WaitAnswer, 9, "[]")})
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerAnswer})
	f.Check(simtest.Want{
		Rules:   []string{"RE1"},
		Sent:    []string{"COORDINATOR->0(9)", "COORDINATOR->2(9)", "COORDINATOR->3(9)"},
		Leaders: []int{9},
		State:   state(Off, WaitNone, 9, "[]"),
	})
}

func TestRE1_NoCoordinatorBeforeTimeoutRestartsTheElection(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(deliver(iP9, iP3, MsgAnswer, 0))
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerCoordinator})
	f.Check(simtest.Want{
		Rules:   []string{"RE1"},
		Sent:    []string{"ELECTION->1", "ELECTION->3"},
		Effects: []string{"set answer 7"},
		State:   state(On, WaitAnswer, 9, "[]"), // the old answers no longer count
	})
}

func TestRE1_TimersThatNoLongerApplyAreIgnored(t *testing.T) {
	f := started(t, iP3)
	for _, name := range []string{TimerAnswer, TimerCoordinator} {
		f.Step(sim.Input{Kind: sim.Timer, Timer: name}) // no election on
		f.Check(simtest.Want{State: state(Off, WaitNone, 9, "[]")})
	}
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerCoordinator}) // still waiting for answers
	f.Check(simtest.Want{State: state(On, WaitAnswer, 9, "[]")})
}

func TestBU2_FirstAnswerSwitchesToWaitingForTheCoordinator(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(deliver(iP7, iP3, MsgAnswer, 0))
	f.Check(simtest.Want{
		Rules:   []string{"BU-2"},
		Effects: []string{"cancel answer", fmt.Sprintf("set coordinator %d", unitCoordT)},
		State:   state(On, WaitCoordinator, 9, "[7]"),
	})
	// A second answer is noted but does not restart the coordinator time-out.
	f.Step(deliver(iP9, iP3, MsgAnswer, 0))
	f.Check(simtest.Want{Rules: []string{"BU-2"}, State: state(On, WaitCoordinator, 9, "[9,7]")})
	// The same process answering twice counts once.
	f.Step(deliver(iP9, iP3, MsgAnswer, 0))
	f.Check(simtest.Want{State: state(On, WaitCoordinator, 9, "[9,7]")})
}

func TestBU2_LateAnswerAfterTheElectionIsIgnored(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerAnswer}) // won: too short a time-out
	f.Step(deliver(iP9, iP3, MsgAnswer, 0))
	f.Check(simtest.Want{State: state(Off, WaitNone, 3, "[]")})
}

func TestRH1_AnswersElectionFromLowerID(t *testing.T) {
	for _, tc := range []struct {
		name      string
		self, src int
	}{{"P7 from P3", iP7, iP3}, {"P9 from P1", iP9, iP1}, {"P3 from P1", iP3, iP1}} {
		t.Run(tc.name, func(t *testing.T) {
			f := started(t, tc.self)
			f.Step(deliver(tc.src, tc.self, MsgElection, 0))
			if got := f.Ctx.Rules(); len(got) == 0 || got[0] != "RH1" {
				t.Fatalf("rules = %v, want RH1 first", got)
			}
			if got := f.Sent(); len(got) == 0 || got[0] != fmt.Sprintf("ANSWER->%d", tc.src) {
				t.Errorf("sent = %v, want an ANSWER to index %d first", got, tc.src)
			}
		})
	}
}

func TestRH2_StartsOwnElectionWhenOff(t *testing.T) {
	f := started(t, iP7)
	f.Step(deliver(iP3, iP7, MsgElection, 0))
	f.Check(simtest.Want{
		Rules:   []string{"RH1", "RH2", "RE1"},
		Sent:    []string{"ANSWER->0", "ELECTION->1"}, // then asks P9, the only higher id
		Effects: []string{"set answer 7"},
		State:   state(On, WaitAnswer, 9, "[]"),
	})
}

func TestRH2_DoesNotStartASecondElectionWhenOn(t *testing.T) {
	f := started(t, iP7)
	f.Step(deliver(iP3, iP7, MsgElection, 0))
	f.Step(deliver(iP1, iP7, MsgElection, 0))
	f.Check(simtest.Want{
		Rules: []string{"RH1", "RH2"},
		Sent:  []string{"ANSWER->2"},
		State: state(On, WaitAnswer, 9, "[]"),
	})
}

func TestBU3_RecordsAHigherCoordinatorAndEndsTheElection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(f *simtest.Fixture)
		timers []string
	}{
		{"no election on", func(*simtest.Fixture) {}, nil},
		{"waiting for answers", func(f *simtest.Fixture) {
			f.Step(sim.Input{Kind: sim.Elect})
		}, []string{"cancel answer"}},
		{"waiting for the coordinator", func(f *simtest.Fixture) {
			f.Step(sim.Input{Kind: sim.Elect})
			f.Step(deliver(iP9, iP3, MsgAnswer, 0))
		}, []string{"cancel coordinator"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := started(t, iP3)
			tc.setup(f)
			f.Step(deliver(iP7, iP3, MsgCoordinator, 7))
			f.Check(simtest.Want{
				Rules:   []string{"BU-3"},
				Effects: tc.timers,
				Leaders: []int{7},
				State:   state(Off, WaitNone, 7, "[]"),
			})
		})
	}
}

func TestBU4_LowerCoordinatorMakesAHigherProcessCallAnElection(t *testing.T) {
	f := started(t, iP7)
	f.Step(deliver(iP3, iP7, MsgCoordinator, 3))
	f.Check(simtest.Want{
		Rules:   []string{"BU-4", "RE1"},
		Sent:    []string{"ELECTION->1"},
		Effects: []string{"set answer 7"},
		State:   state(On, WaitAnswer, 9, "[]"), // P3 is not recorded
	})
	// Already in an election: that election will settle it.
	f.Step(deliver(iP1, iP7, MsgCoordinator, 1))
	f.Check(simtest.Want{Rules: []string{"BU-4"}, State: state(On, WaitAnswer, 9, "[]")})
}

func TestBU5_RecoveredProcessForgetsTheLeaderAndCallsAnElection(t *testing.T) {
	f := unit(t, iP3) // the kernel builds a fresh state, then says Recover
	f.Step(sim.Input{Kind: sim.Recover})
	f.Check(simtest.Want{
		Rules:   []string{"BU-5", "RE1"},
		Sent:    []string{"ELECTION->1", "ELECTION->3"},
		Effects: []string{"set answer 7"},
		State:   state(On, WaitAnswer, -1, "[]"),
	})
}

func TestBU5_RecoveredHighestIDTakesOver(t *testing.T) {
	f := unit(t, iP9)
	f.Step(sim.Input{Kind: sim.Recover})
	f.Check(simtest.Want{Rules: []string{"BU-5", "RE1"}, Effects: []string{"set answer 7"}, State: state(On, WaitAnswer, -1, "[]")})
	f.Step(sim.Input{Kind: sim.Timer, Timer: TimerAnswer})
	f.Check(simtest.Want{
		Rules:   []string{"RE1"},
		Sent:    []string{"COORDINATOR->0(9)", "COORDINATOR->2(9)", "COORDINATOR->3(9)"},
		Leaders: []int{9},
		State:   state(Off, WaitNone, 9, "[]"),
	})
}

func TestCloneIsDeep(t *testing.T) {
	f := started(t, iP3)
	f.Step(sim.Input{Kind: sim.Elect})
	c := f.Node.Clone()
	f.Step(deliver(iP9, iP3, MsgAnswer, 0))
	if got, want := string(sim.EncodeState(c)), state(On, WaitAnswer, 9, "[]"); got != want {
		t.Errorf("clone changed with the original: %s, want %s", got, want)
	}
}

func TestTimeoutsFromParamsAndNetwork(t *testing.T) {
	for _, tc := range []struct {
		p          any
		maxDelay   int
		wantA, wnC int
	}{
		{nil, 3, 7, 15},
		{Params{}, 0, 1, 3},
		{Params{AnswerTimeout: 1}, 5, 1, 13},
		{&Params{AnswerTimeout: 4, CoordinatorTimeout: 9}, 5, 4, 9},
	} {
		n := Spec().New(0, &sim.Setup{IDs: unitIDs, Params: tc.p, MaxDelay: tc.maxDelay}).(*node)
		if n.answerT != tc.wantA || n.coordT != tc.wnC {
			t.Errorf("params %+v, max delay %d: time-outs %d, %d; want %d, %d", tc.p, tc.maxDelay, n.answerT, n.coordT, tc.wantA, tc.wnC)
		}
	}
}

func TestParseParams(t *testing.T) {
	simtest.ParseTable(t, ParseParams, unitIDs, []simtest.ParseCase{
		{Raw: "", Want: Params{}},
		{Raw: "null", Want: Params{}},
		{Raw: " {} ", Want: Params{}},
		{Raw: `{"answerTimeout": 5}`, Want: Params{AnswerTimeout: 5}},
		{Raw: `{"answerTimeout": 5, "coordinatorTimeout": 20}`, Want: Params{AnswerTimeout: 5, CoordinatorTimeout: 20}},
		{Raw: `{"coordinatorTimeout": 12}`, Want: Params{CoordinatorTimeout: 12}},
		{Raw: `{"timeout": 5}`, Err: `params.timeout: unknown field`},
		{Raw: `{"answerTimeout": -1}`, Err: `params.answerTimeout: must be a positive integer`},
		{Raw: `{"answerTimeout": 0}`, Err: `params.answerTimeout: must be a positive integer`},
		{Raw: `{"coordinatorTimeout": -3}`, Err: `params.coordinatorTimeout: must be a positive integer`},
		{Raw: `{"answerTimeout": 2000000000}`, Err: `params.answerTimeout: must be a positive integer`},
		{Raw: `{"answerTimeout": "5"}`, Err: `params.answerTimeout: got string, want a positive integer`},
		{Raw: `{"coordinatorTimeout": 1.5}`, Err: `params.coordinatorTimeout: got number 1.5, want a positive integer`},
		{Raw: `{"heartbeat": {"period": 4}}`, Want: Params{Heartbeat: heartbeat.Params{Period: 4}}},
		{Raw: `{"heartbeat": {"period": 6, "delay": 1}}`, Want: Params{Heartbeat: heartbeat.Params{Period: 6, Delay: 1}}},
		{Raw: `{"heartbeat": {"period": 6, "timeout": 3}}`, Want: Params{Heartbeat: heartbeat.Params{Period: 6, Timeout: 3}}},
		{Raw: `{"heartbeat": {"period": 6, "delay": 1, "timeout": 3}}`, Err: `params.heartbeat.timeout: replaces T+D`},
		{Raw: `{"heartbeat": {"delay": 2}}`, Err: `params.heartbeat.period: the detector is off`},
		{Raw: `[1]`, Err: `params: `},
		{Raw: `{"answerTimeout": 5} {}`, Err: `params: must be a single JSON object`},
		{Raw: `{"answerTimeout": 5`, Err: `params: `},
	})
}

// --- whole runs through the kernel ---

type runResult struct {
	evs       []sim.Event
	quiescent bool
}

// run runs cfg to the end, failing with the seed on an error.
func run(t *testing.T, cfg sim.Config) runResult {
	t.Helper()
	s, evs := simtest.RunSim(t, cfg)
	return runResult{evs: evs, quiescent: s.Quiescent()}
}

func config(n int, seed uint64, acts ...sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, Until: 500, Actions: acts}
}

func crash(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActCrash, Node: i} }
func recoverAt(at, i int) sim.Action { return sim.Action{At: at, Do: sim.ActRecover, Node: i} }
func elect(at, i int) sim.Action     { return sim.Action{At: at, Do: sim.ActElect, Node: i} }

// finalLeaders returns, per node index, the last leader recorded since the node last
// came up, -1 for none, and whether it is alive at the end.
func finalLeaders(evs []sim.Event, n int) (leader []int, alive []bool) {
	leader, alive = make([]int, n), make([]bool, n)
	for i := range leader {
		leader[i], alive[i] = -1, true
	}
	for _, e := range evs {
		switch e.Type {
		case sim.EvLeader:
			leader[e.Node] = e.Leader
		case sim.EvCrash:
			alive[e.Node], leader[e.Node] = false, -1
		case sim.EvRecover:
			alive[e.Node] = true
		}
	}
	return leader, alive
}

// selfDeclared lists the ids that declared themselves leader after time 0 (at time 0
// everyone records the initial coordinator, itself included).
func selfDeclared(evs []sim.Event, ids []int) []int {
	var out []int
	for _, e := range evs {
		if e.Type == sim.EvLeader && e.T > 0 && e.Leader == ids[e.Node] {
			out = append(out, e.Leader)
		}
	}
	return out
}

func checkAllFollow(t *testing.T, seed uint64, evs []sim.Event, n, want int) {
	t.Helper()
	if v := simtest.Violations(evs); len(v) > 0 {
		t.Errorf("seed %d: violations %v", seed, v)
	}
	leader, alive := finalLeaders(evs, n)
	for i := range leader {
		if alive[i] && leader[i] != want {
			t.Errorf("seed %d: P%d ends with leader %d, want %d", seed, i, leader[i], want)
		}
	}
}

// msgsFrom counts the messages of one type sent by node index from.
func msgsFrom(evs []sim.Event, typ string, from int) int {
	c := 0
	for _, e := range evs {
		if e.Type == sim.EvSend && e.Msg.Type == typ && e.Msg.From == from {
			c++
		}
	}
	return c
}

// The notes' example: P7 (the coordinator) has crashed, P4 notices; P5 and P6 answer and
// take over, P6 tells P5 to stop and wins.
func TestRunNotesExampleP6Wins(t *testing.T) {
	ids := simtest.IDs(8)
	for seed := uint64(1); seed <= 50; seed++ {
		evs := run(t, config(8, seed, crash(0, 7), elect(1, 4))).evs
		checkAllFollow(t, seed, evs, 8, 6)
		if got := selfDeclared(evs, ids); !slices.Equal(got, []int{6}) {
			t.Errorf("seed %d: self-declared coordinators %v, want only P6", seed, got)
		}
		// 4 asks 5, 6, 7; 5 asks 6, 7; 6 asks 7; the three live callees answer; 6
		// announces to 0..5. Nobody below 4 takes part until the announcement.
		for typ, want := range map[string]int{MsgElection: 6, MsgAnswer: 3, MsgCoordinator: 6} {
			if got := simtest.CountMsgs(evs, typ); got != want {
				t.Errorf("seed %d: %d %s messages, want %d", seed, got, typ, want)
			}
		}
		for i := 0; i < 4; i++ {
			if got := simtest.Rules(evs, i); !slices.Equal(got, []string{"BU-1", "BU-3"}) {
				t.Errorf("seed %d: P%d fired %v, want BU-1 then BU-3", seed, i, got)
			}
		}
		if got := simtest.Rules(evs, 5); !slices.Contains(got, "RH2") || !slices.Contains(got, "BU-3") {
			t.Errorf("seed %d: P5 fired %v, want it to take over (RH2) and then accept P6 (BU-3)", seed, got)
		}
	}
}

// timerFired reports whether node i's named timer fired.
func timerFired(evs []sim.Event, i int, name string) bool {
	for _, e := range evs {
		if e.Type == sim.EvTimer && e.Node == i && e.Name == name {
			return true
		}
	}
	return false
}

// The notes' variant: P6 crashes after answering P4 and P5 but before announcing, so P4
// and P5 time out waiting for the COORDINATOR, call again, and P5 wins.
func TestRunNotesVariantP6CrashesBeforeAnnouncing(t *testing.T) {
	ids := simtest.IDs(8)
	for seed := uint64(1); seed <= 50; seed++ {
		// With delays in [1,3], P6 has answered P4 by t=4 and P5 by t=7, and its own
		// answer time-out (7) cannot expire before t=9: t=8 is in between.
		evs := run(t, config(8, seed, crash(0, 7), elect(1, 4), crash(8, 6))).evs
		for _, to := range []int{4, 5} {
			answered := false
			for _, e := range evs {
				answered = answered || (e.Type == sim.EvSend && e.Msg.Type == MsgAnswer && e.Msg.From == 6 && e.Msg.To == to)
			}
			if !answered {
				t.Errorf("seed %d: P6 never answered P%d before crashing", seed, to)
			}
			if !timerFired(evs, to, TimerCoordinator) {
				t.Errorf("seed %d: P%d never timed out waiting for the COORDINATOR", seed, to)
			}
		}
		checkAllFollow(t, seed, evs, 8, 5)
		if got := selfDeclared(evs, ids); !slices.Equal(got, []int{5}) {
			t.Errorf("seed %d: self-declared coordinators %v, want only P5", seed, got)
		}
	}
}

func TestRunBestCaseSecondHighestCalls(t *testing.T) {
	const n = 8
	for seed := uint64(1); seed <= 20; seed++ {
		evs := run(t, config(n, seed, crash(0, n-1), elect(1, n-2))).evs
		checkAllFollow(t, seed, evs, n, n-2)
		// The notes' figure (000: n-2 coordinator messages) counts the COORDINATORs.
		if got, want := simtest.CountMsgs(evs, MsgCoordinator), int(Spec().Costs[0].Notes[0].Value(n)); got != want || want != n-2 {
			t.Errorf("seed %d: %d COORDINATOR messages, want the notes' N-2 = %d", seed, got, want)
		}
		if got := simtest.CountMsgs(evs, MsgElection); got != 1 {
			t.Errorf("seed %d: %d ELECTION messages, want 1 (to the crashed P7)", seed, got)
		}
		if got, want := simtest.Count(evs, sim.EvSend), int(Spec().Costs[0].Value(n)); got != want || want != n-1 {
			t.Errorf("seed %d: %d messages, want the derived N-1 = %d", seed, got, want)
		}
	}
}

func TestRunWorstCaseLowestCallsIsQuadratic(t *testing.T) {
	worst := Spec().Costs[1].Value
	notes := Spec().Costs[1].Notes[1] // 002: ((N-1) + (N-2) + … + 1) + N-1
	total := map[int]int{}
	for _, n := range []int{4, 8, 16} {
		for seed := uint64(1); seed <= 10; seed++ {
			evs := run(t, config(n, seed, crash(0, n-1), elect(1, 0))).evs
			checkAllFollow(t, seed, evs, n, n-2)
			got := simtest.Count(evs, sim.EvSend)
			if got != int(worst(n)) {
				t.Errorf("N=%d seed %d: %d messages, want N²-N-1 = %v", n, seed, got, worst(n))
			}
			for typ, want := range map[string]int{MsgElection: n * (n - 1) / 2, MsgAnswer: (n - 1) * (n - 2) / 2, MsgCoordinator: n - 2} {
				if c := simtest.CountMsgs(evs, typ); c != want {
					t.Errorf("N=%d seed %d: %d %s, want %d", n, seed, c, typ, want)
				}
			}
			// 002 counts the same ELECTIONs, ((N-1) + ... + 1), plus N-1 COORDINATOR
			// (to everyone but the winner, the crashed one included) and no ANSWER.
			if e, want := simtest.CountMsgs(evs, MsgElection), int(notes.Value(n))-(n-1); e != want {
				t.Errorf("N=%d seed %d: %d ELECTION, want the notes' (N-1)+...+1 = %d", n, seed, e, want)
			}
			total[n] = got
		}
	}
	// Doubling N roughly quadruples the count: quadratic, not linear.
	for _, pair := range [][2]int{{4, 8}, {8, 16}} {
		if r := float64(total[pair[1]]) / float64(total[pair[0]]); r < 3.5 {
			t.Errorf("messages(%d)/messages(%d) = %.2f, want about 4", pair[1], pair[0], r)
		}
	}
}

func TestRunRecoveredHighestTakesOver(t *testing.T) {
	ids := simtest.IDs(8)
	for seed := uint64(1); seed <= 20; seed++ {
		evs := run(t, config(8, seed, crash(0, 7), elect(1, 4), recoverAt(100, 7))).evs
		checkAllFollow(t, seed, evs, 8, 7)
		if got := selfDeclared(evs, ids); !slices.Equal(got, []int{6, 7}) {
			t.Errorf("seed %d: self-declared coordinators %v, want P6 then P7", seed, got)
		}
		if got := simtest.Rules(evs, 7); !slices.Contains(got, "BU-5") {
			t.Errorf("seed %d: P7 fired %v, want BU-5 on recovery", seed, got)
		}
		if got := msgsFrom(evs, MsgCoordinator, 7); got != 7 {
			t.Errorf("seed %d: P7 sent %d COORDINATOR messages, want 7", seed, got)
		}
	}
}

func TestRunTraceCarriesTheLeaderInCoordinator(t *testing.T) {
	b := simtest.Trace(t, config(8, 1, crash(0, 7), elect(1, 6)))
	if !bytes.Contains(b, []byte(`"type":"COORDINATOR"`)) || !bytes.Contains(b, []byte(`"leader":6`)) {
		t.Errorf("trace lacks a COORDINATOR with leader 6:\n%s", b)
	}
}

// Random elections, crashes and recoveries on a synchronous network, then one late
// election from the lowest live process once the dust has settled: at the end every
// live process must follow the highest live id, and the monitor must find nothing.
func TestRunSeedSweep(t *testing.T) {
	const span = 100
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 0xb0117))
		n := 2 + r.IntN(9)
		dmax := r.IntN(4)
		dmin := r.IntN(dmax + 1)
		w := simtest.Workload{Requests: 1 + r.IntN(5), Span: span, Crashes: r.IntN(n), Recover: r.IntN(2) == 0}
		acts := simtest.RandomActions(seed, n, sim.Election, w)
		// Who is up after every crash and recovery (each lands before 2*span)?
		up := make([]bool, n)
		for i := range up {
			up[i] = true
		}
		last := 0
		for _, a := range acts {
			last = max(last, a.At)
		}
		sorted := slices.Clone(acts)
		slices.SortStableFunc(sorted, func(a, b sim.Action) int { return a.At - b.At })
		for _, a := range sorted {
			switch a.Do {
			case sim.ActCrash:
				up[a.Node] = false
			case sim.ActRecover:
				up[a.Node] = true
			}
		}
		lowest, highest := slices.Index(up, true), -1
		for i := range up {
			if up[i] {
				highest = i
			}
		}
		if lowest < 0 {
			t.Fatalf("seed %d: the workload crashed everyone", seed)
		}
		acts = append(acts, elect(last+50, lowest))
		cfg := sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Seed: seed,
			Network: sim.Network{DelayMin: dmin, DelayMax: dmax}, Until: 5000, Actions: acts}
		res := run(t, cfg)
		if !res.quiescent {
			t.Errorf("seed %d (N=%d, delay [%d,%d]): still busy at until=%d", seed, n, dmin, dmax, cfg.Until)
			continue
		}
		checkAllFollow(t, seed, res.evs, n, highest)
	}
}

// Bully needs a synchronous system: with an answer time-out (1) shorter than the
// shortest round trip (2) callers do not wait for the higher ones, several take over, and
// a slow COORDINATOR from a lower winner can land after the real winner's: the processes
// end up following different leaders, which the kernel's leader monitor must report.
// (The delays must spread widely, here [1,5]: on [3,5] the highest process's fresh
// announcement, which every lower winner's ELECTION triggers, always arrives last and
// heals the run before it goes quiet.) The same seeds with derived time-outs elect P6.
func TestRunShortTimeoutOnSlowNetworkElectsTwo(t *testing.T) {
	for _, seed := range []uint64{1, 2, 5} {
		for _, short := range []bool{true, false} {
			cfg := config(8, seed, crash(0, 7), elect(1, 4))
			cfg.Network = sim.Network{DelayMin: 1, DelayMax: 5}
			if short {
				p := simtest.Params(t, Spec(), `{"answerTimeout": 1}`, cfg.IDs)
				cfg.Params = p
			}
			evs := run(t, cfg).evs
			if !short {
				checkAllFollow(t, seed, evs, 8, 6)
				continue
			}
			found := false
			for _, e := range evs {
				found = found || (e.Type == sim.EvViolation && e.Property == sim.PropLeader)
			}
			if !found {
				t.Errorf("seed %d: no %s violation; violations %v", seed, sim.PropLeader, simtest.Violations(evs))
			}
			if got := slices.Compact(slices.Sorted(slices.Values(selfDeclared(evs, cfg.IDs)))); len(got) < 2 {
				t.Errorf("seed %d: only %v declared themselves coordinator, want at least two", seed, got)
			}
		}
	}
}

// The notes (000) label exactly RE1, RH1 and RH2 for Bully; every other rule is the
// project's own and must carry an invented label (BU-n, the detector's FD-n) that
// cannot be taken for a notes' label (RA1 would read as Ricart-Agrawala's).
func TestLabelsFromTheNotesAndInvented(t *testing.T) {
	invented := regexp.MustCompile(`^(BU|FD)-[0-9]+$`)
	var notes, own []string
	for _, r := range Spec().Rules {
		switch {
		case invented.MatchString(r.Label):
			own = append(own, r.Label)
		default:
			notes = append(notes, r.Label)
		}
	}
	if want := []string{"RE1", "RH1", "RH2"}; !slices.Equal(notes, want) {
		t.Errorf("labels from the notes %v, want exactly %v", notes, want)
	}
	if want := []string{"BU-1", "BU-2", "BU-3", "BU-4", "BU-5", "BU-6", "FD-1", "FD-2", "FD-3"}; !slices.Equal(own, want) {
		t.Errorf("invented labels %v, want %v", own, want)
	}
}
