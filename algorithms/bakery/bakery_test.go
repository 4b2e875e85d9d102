package bakery

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
// index 0 -> P3, 1 -> P9, 2 -> P1, 3 -> P7. With MaxDelay 3 the poll period is 6.
var unitIDs = []int{3, 9, 1, 7}

const (
	iP3, iP9, iP1, iP7 = 0, 1, 2, 3
	unitPoll           = 6
)

// fixture is the shared hand-driven node, with the node typed for the tests that read it.
type fixture struct {
	*simtest.Fixture
	n *node
}

func newFixture(t *testing.T, self int) *fixture {
	t.Helper()
	sf := simtest.Start(t, Spec(), self, &sim.Setup{IDs: unitIDs, MaxDelay: 3})
	sf.Ctx.Reset(self) // tests begin with nothing recorded, Init's BI-1 included
	sf.Show = show
	return &fixture{Fixture: sf, n: sf.Node.(*node)}
}

func (f *fixture) deliver(typ string, from, arg int) {
	f.Deliver(sim.Message{Type: typ, From: from, Arg: arg})
}

// show writes a message as "TYPE->P<id>", plus "(value)" for answers.
func show(m sim.Message) string {
	s := fmt.Sprintf("%s->P%d", m.Type, unitIDs[m.To])
	if m.Type == MsgNumber || m.Type == MsgChoosing {
		s += fmt.Sprintf("(%d)", m.Arg)
	}
	return s
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func st(state string, choosing bool, number, highest int, read, choosingOf, numberOf, ahead, passed, reading string, polling bool, rereads int) string {
	return fmt.Sprintf(`{"state":%q,"choosing":%t,"number":%d,"highest":%d,"read":%s,"choosingOf":%s,"numberOf":%s,"ahead":%s,"passed":%s,"reading":%s,"polling":%t,"rereads":%d}`,
		state, choosing, number, highest, read, choosingOf, numberOf, ahead, passed, reading, polling, rereads)
}

const e = "[]"

var released = st(cs.Released, false, 0, 0, e, e, e, e, e, e, false, 0)

// doorway is P3's state while it picks a ticket, with these numbers read.
func doorway(highest int, read string) string {
	return st(Doorway, true, 0, highest, read, e, e, e, e, e, false, 0)
}

// bakery is P3's state once it holds ticket 5 (the others had 4, 2 and 0).
func bakery(choosingOf, numberOf, ahead, passed, reading string, polling bool, rereads int) string {
	return st(Bakery, false, 5, 4, "[9,1,7]", choosingOf, numberOf, ahead, passed, reading, polling, rereads)
}

// inBakery brings P3 (index 0) through the doorway with the others' numbers 4, 2, 0:
// its ticket is 5 and it checks everybody else.
func inBakery(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgNumber, iP9, 4)
	f.deliver(MsgNumber, iP1, 2)
	f.deliver(MsgNumber, iP7, 0)
	return f
}

func TestBI1_StartsWithNoTicket(t *testing.T) {
	for _, kind := range []sim.InputKind{sim.Init, sim.Recover} {
		sf := simtest.NewFixture(t, Spec(), iP9, &sim.Setup{IDs: unitIDs})
		sf.Show = show
		f := &fixture{Fixture: sf, n: sf.Node.(*node)}
		f.Step(sim.Input{Kind: kind})
		f.Check(simtest.Want{Rules: []string{"BI-1"}, State: released})
	}
}

func TestBD1_SetsChoosingAndReadsEveryNumber(t *testing.T) {
	f := newFixture(t, iP1)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"BD-1"},
		Sent:  []string{"READ-NUMBER->P3", "READ-NUMBER->P9", "READ-NUMBER->P7"},
		State: doorway(0, e)})
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{iP3, iP9, iP7}) {
		t.Errorf("waiting for %v", got)
	}
	f.Step(sim.Input{Kind: sim.Request}) // asking again changes nothing
	f.Check(simtest.Want{State: doorway(0, e)})
}

func TestBD2_KeepsTheHighestNumberRead(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgNumber, iP1, 4)
	f.Check(simtest.Want{Rules: []string{"BD-2"}, State: doorway(4, "[1]")})
	f.deliver(MsgNumber, iP9, 2)
	f.Check(simtest.Want{Rules: []string{"BD-2"}, State: doorway(4, "[9,1]")})
	f.deliver(MsgNumber, iP9, 8) // a second answer from the same process is not a read
	f.Check(simtest.Want{State: doorway(4, "[9,1]")})
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{iP7}) {
		t.Errorf("waiting for %v, want [%d]", got, iP7)
	}
}

func TestBD3_TakesOneMoreThanTheHighestAndChecksEveryone(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgNumber, iP9, 4)
	f.deliver(MsgNumber, iP1, 2)
	f.deliver(MsgNumber, iP7, 0)
	f.Check(simtest.Want{Rules: []string{"BD-2", "BD-3"}, Sent: []string{"READ-CHOOSING->P9", "READ-CHOOSING->P1", "READ-CHOOSING->P7"},
		State: bakery("[9,1,7]", e, e, e, "[9,1,7]", false, 0)})
	if got := f.n.WaitingFor(); !slices.Equal(got, []int{iP9, iP1, iP7}) {
		t.Errorf("waiting for %v", got)
	}
}

func TestBW1_WaitsUntilJHasChosen(t *testing.T) {
	f := inBakery(t)
	f.deliver(MsgChoosing, iP9, 1)
	f.Check(simtest.Want{Rules: []string{"BW-1"}, Effects: []string{"set poll 6"}, State: bakery("[9,1,7]", e, e, e, "[1,7]", true, 0)})
	f.deliver(MsgChoosing, iP1, 1) // the poll is armed already: one timer for all
	f.Check(simtest.Want{Rules: []string{"BW-1"}, State: bakery("[9,1,7]", e, e, e, "[7]", true, 0)})
	f.deliver(MsgChoosing, iP7, 0)
	f.Check(simtest.Want{Rules: []string{"BW-1"}, Sent: []string{"READ-NUMBER->P7"}, State: bakery("[9,1]", "[7]", e, e, "[7]", true, 0)})

	// Answers nobody awaits change nothing: P9's flag again before the re-read, and a
	// number from P1 while its flag is still waited on.
	f.deliver(MsgChoosing, iP9, 0)
	f.deliver(MsgNumber, iP1, 0)
	f.Check(simtest.Want{State: bakery("[9,1]", "[7]", e, e, "[7]", true, 0)})
}

func TestBW2(t *testing.T) {
	for _, tc := range []struct {
		name    string
		j       int // an id
		v       int
		effects []string
		state   string
	}{
		{"no ticket: pass", 9, 0, nil, bakery("[1,7]", e, e, "[9]", "[1,7]", false, 0)},
		{"larger ticket: pass", 9, 7, nil, bakery("[1,7]", e, e, "[9]", "[1,7]", false, 0)},
		{"smaller ticket: wait", 9, 3, []string{"set poll 6"}, bakery("[1,7]", "[9]", "[[3,9]]", e, "[1,7]", true, 0)},
		{"same ticket, higher id: pass", 9, 5, nil, bakery("[1,7]", e, e, "[9]", "[1,7]", false, 0)},
		{"same ticket, lower id: wait", 1, 5, []string{"set poll 6"}, bakery("[9,7]", "[1]", "[[5,1]]", e, "[9,7]", true, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := inBakery(t)
			j := slices.Index(unitIDs, tc.j)
			f.deliver(MsgChoosing, j, 0)
			f.deliver(MsgNumber, j, tc.v)
			f.Check(simtest.Want{Rules: []string{"BW-2"}, Effects: tc.effects, State: tc.state})
		})
	}
}

func TestBP1_ReadsAgainWhatItStillWaitsOn(t *testing.T) {
	f := inBakery(t)
	f.deliver(MsgChoosing, iP9, 1)
	f.deliver(MsgChoosing, iP1, 0)
	f.deliver(MsgNumber, iP1, 3)
	f.Timer(TimerPoll)
	// P7's first read is still on its way: it is not read twice.
	f.Check(simtest.Want{Rules: []string{"BP-1"}, Sent: []string{"READ-CHOOSING->P9", "READ-NUMBER->P1"},
		State: bakery("[9,7]", "[1]", "[[3,1]]", e, "[9,1,7]", false, 2)})
	// A timer that is not armed (a stray from before) adds nothing.
	f.Timer(TimerPoll)
	f.Check(simtest.Want{State: bakery("[9,7]", "[1]", "[[3,1]]", e, "[9,1,7]", false, 2)})

	f.deliver(MsgNumber, iP1, 0) // P1 left the CS
	f.Check(simtest.Want{Rules: []string{"BW-2"}, State: bakery("[9,7]", e, e, "[1]", "[9,7]", false, 2)})
}

func TestBE1_EntersOnceEveryoneIsPassed(t *testing.T) {
	f := inBakery(t)
	for _, j := range []int{iP9, iP1, iP7} {
		f.deliver(MsgChoosing, j, 0)
	}
	f.deliver(MsgNumber, iP7, 6)
	f.deliver(MsgNumber, iP1, 0)
	f.deliver(MsgNumber, iP9, 5)
	f.Check(simtest.Want{Rules: []string{"BW-2", "BE-1"}, Effects: []string{"enter"},
		State: st(cs.Held, false, 5, 4, "[9,1,7]", e, e, e, "[9,1,7]", e, false, 0)})
	if got := f.n.WaitingFor(); got != nil {
		t.Errorf("in the CS yet waiting for %v", got)
	}
}

func TestBX1_ThrowsTheTicketAwayWithoutMessages(t *testing.T) {
	f := inBakery(t)
	for _, j := range []int{iP9, iP1, iP7} {
		f.deliver(MsgChoosing, j, 0)
		f.deliver(MsgNumber, j, 0)
	}
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{Rules: []string{"BX-1"}, Effects: []string{"exit"}, State: released})
	f.Step(sim.Input{Kind: sim.Release}) // not in the CS
	f.Check(simtest.Want{State: released})
}

func TestBS1_AnswersReadsWithTheCurrentValue(t *testing.T) {
	f := newFixture(t, iP3)
	f.deliver(MsgReadNumber, iP7, 0)
	f.Check(simtest.Want{Rules: []string{"BS-1"}, Sent: []string{"NUMBER->P7(0)"}, State: released})
	f.deliver(MsgReadChoosing, iP7, 0)
	f.Check(simtest.Want{Rules: []string{"BS-1"}, Sent: []string{"CHOOSING->P7(0)"}, State: released})

	f.Step(sim.Input{Kind: sim.Request}) // in the doorway: choosing
	f.deliver(MsgReadChoosing, iP1, 0)
	f.Check(simtest.Want{Rules: []string{"BS-1"}, Sent: []string{"CHOOSING->P1(1)"}, State: doorway(0, e)})

	f = inBakery(t) // ticket 5, done choosing
	f.deliver(MsgReadNumber, iP1, 0)
	f.Check(simtest.Want{Rules: []string{"BS-1"}, Sent: []string{"NUMBER->P1(5)"}, State: bakery("[9,1,7]", e, e, e, "[9,1,7]", false, 0)})
	f.deliver(MsgReadChoosing, iP1, 0)
	f.Check(simtest.Want{Rules: []string{"BS-1"}, Sent: []string{"CHOOSING->P1(0)"}, State: bakery("[9,1,7]", e, e, e, "[9,1,7]", false, 0)})
}

// net drives several nodes by hand: the test picks which message arrives next.
type net struct {
	t       *testing.T
	ids     []int
	nodes   []*node
	ctx     *sim.Context
	pending []sim.Message
	inCS    []bool
}

func newNet(t *testing.T, ids []int) *net {
	nt := &net{t: t, ids: ids, ctx: sim.NewContext(0, ids), inCS: make([]bool, len(ids))}
	for i := range ids {
		nt.nodes = append(nt.nodes, Spec().New(i, &sim.Setup{IDs: ids, MaxDelay: 1}).(*node))
		nt.step(i, sim.Input{Kind: sim.Init})
	}
	return nt
}

func (nt *net) step(i int, in sim.Input) {
	nt.ctx.Reset(i)
	nt.nodes[i].Step(nt.ctx, &in)
	for _, e := range nt.ctx.Effects() {
		switch e.Kind {
		case sim.Send:
			nt.pending = append(nt.pending, e.Msg)
		case sim.EnterCS:
			for j, in := range nt.inCS {
				if in {
					nt.t.Fatalf("P%d entered the CS while P%d is in it", nt.ids[i], nt.ids[j])
				}
			}
			nt.inCS[i] = true
		case sim.ExitCS:
			nt.inCS[i] = false
		}
	}
}

// deliver hands over the oldest pending message of this type from -> to.
func (nt *net) deliver(typ string, from, to int) {
	nt.t.Helper()
	for k, m := range nt.pending {
		if m.Type == typ && m.From == from && m.To == to {
			nt.pending = slices.Delete(nt.pending, k, k+1)
			nt.step(to, sim.Input{Kind: sim.Deliver, Msg: m})
			return
		}
	}
	nt.t.Fatalf("no %s from P%d to P%d in flight (%v)", typ, nt.ids[from], nt.ids[to], nt.pending)
}

// The race the choosing flag is there for. P0 and P1 ask together; P0's read of P2's
// number is slow. P1 finishes its doorway first with ticket 1, having read P0's number
// as 0. If P1 skipped choosing[0] it would read number[0] = 0, pass P0 and enter; then
// P0 would also take ticket 1 and, winning the tie on its lower id, enter too. The flag
// makes P1 wait until P0 has its ticket, and then P0 goes first.
func TestBW1_ChoosingGuardsTheDoorwayRace(t *testing.T) {
	nt := newNet(t, []int{0, 1, 2})
	nt.step(0, sim.Input{Kind: sim.Request})
	nt.step(1, sim.Input{Kind: sim.Request})
	nt.deliver(MsgReadNumber, 0, 1) // P1, still choosing, has number 0
	nt.deliver(MsgNumber, 1, 0)
	nt.deliver(MsgReadNumber, 1, 0)
	nt.deliver(MsgNumber, 0, 1)
	nt.deliver(MsgReadNumber, 1, 2)
	nt.deliver(MsgNumber, 2, 1) // P1: ticket 1, checks P0 and P2
	nt.deliver(MsgReadChoosing, 1, 2)
	nt.deliver(MsgChoosing, 2, 1)
	nt.deliver(MsgReadNumber, 1, 2)
	nt.deliver(MsgNumber, 2, 1) // P2 passed
	nt.deliver(MsgReadChoosing, 1, 0)
	nt.deliver(MsgChoosing, 0, 1) // P0 is still choosing: P1 waits
	if got := string(sim.EncodeState(nt.nodes[1])); got != st(Bakery, false, 1, 0, "[0,2]", "[0]", e, e, "[2]", e, true, 0) {
		t.Fatalf("P1: %s", got)
	}
	nt.deliver(MsgReadNumber, 0, 2) // the slow read: P0 takes ticket 1 too
	nt.deliver(MsgNumber, 2, 0)
	for _, j := range []int{1, 2} {
		nt.deliver(MsgReadChoosing, 0, j)
		nt.deliver(MsgChoosing, j, 0)
		nt.deliver(MsgReadNumber, 0, j)
		nt.deliver(MsgNumber, j, 0) // (1, P1) is not before (1, P0): P0 passes P1
	}
	if !nt.inCS[0] {
		t.Fatal("P0, first in line, did not enter")
	}
	nt.step(1, sim.Input{Kind: sim.Timer, Timer: TimerPoll}) // P1 reads again
	nt.deliver(MsgReadChoosing, 1, 0)
	nt.deliver(MsgChoosing, 0, 1)
	nt.deliver(MsgReadNumber, 1, 0)
	nt.deliver(MsgNumber, 0, 1) // (1, P0) goes first: P1 waits again
	if nt.inCS[1] {
		t.Fatal("P1 entered")
	}
	nt.step(0, sim.Input{Kind: sim.Release})
	nt.step(1, sim.Input{Kind: sim.Timer, Timer: TimerPoll})
	nt.deliver(MsgReadNumber, 1, 0)
	nt.deliver(MsgNumber, 0, 1) // P0 threw its ticket away
	if !nt.inCS[1] || len(nt.pending) != 0 {
		t.Fatalf("P1 in the CS: %v; still in flight: %v", nt.inCS[1], nt.pending)
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := newFixture(t, iP3)
	f.Step(sim.Input{Kind: sim.Request})
	f.deliver(MsgNumber, iP9, 4)
	c := f.n.Clone()
	before := string(sim.EncodeState(c))
	f.deliver(MsgNumber, iP1, 2)
	f.deliver(MsgNumber, iP7, 0)
	if after := string(sim.EncodeState(c)); after != before {
		t.Fatalf("clone changed with the original:\n%s\n%s", before, after)
	}
}

func TestParseParams(t *testing.T) {
	simtest.ParseTable(t, ParseParams, unitIDs, []simtest.ParseCase{
		{Raw: "", Want: Params{}},
		{Raw: "null", Want: Params{}},
		{Raw: "{}", Want: Params{}},
		{Raw: `{"poll":4}`, Want: Params{Poll: 4}},
		{Raw: `{"poll":0}`, Err: "params.poll: must be a positive integer (at most 1000000000), got 0"},
		{Raw: `{"poll":-2}`, Err: "params.poll: must be a positive integer"},
		{Raw: `{"poll":"fast"}`, Err: "params.poll: got string, want a positive integer"},
		{Raw: `{"poll":1.5}`, Err: "params.poll: got number 1.5, want a positive integer"},
		{Raw: `{"timeout":3}`, Err: "params.timeout: unknown field (allowed: poll)"},
		{Raw: `[1]`, Err: "params: got array"},
		{Raw: `{"poll":2} {}`, Err: "params: must be a single JSON object"},
		{Raw: `{"poll":`, Err: "params:"},
	})
	for _, tc := range []struct {
		params   any
		maxDelay int
		want     int
	}{{nil, 3, 6}, {Params{}, 0, 1}, {Params{Poll: 10}, 3, 10}, {&Params{Poll: 2}, 5, 2}} {
		if got := Spec().New(0, &sim.Setup{IDs: unitIDs, Params: tc.params, MaxDelay: tc.maxDelay}).(*node).poll; got != tc.want {
			t.Errorf("poll with params %v, max delay %d = %d, want %d", tc.params, tc.maxDelay, got, tc.want)
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

func config(seed uint64, n int, acts ...sim.Action) sim.Config {
	return sim.Config{Spec: Spec(), IDs: simtest.IDs(n), Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, CS: 2, Until: 100_000, Pending: 1_000_000, Actions: acts}
}

// The notes: 6N messages per entry, 3N reads of two messages each; here 6(N-1) since
// a process reads its own variables locally.
func TestRun_SixNMinus1MessagesPerEntryWithoutContention(t *testing.T) {
	for _, n := range []int{2, 3, 5, 8, 12} {
		var acts []sim.Action
		for i := 0; i < n; i++ {
			// An entry takes at most 6 delays + CS: each is over before the next.
			acts = append(acts, sim.Action{At: 200 * i, Do: sim.ActRequest, Node: i})
		}
		for seed := uint64(1); seed <= 5; seed++ {
			cfg := config(seed, n, acts...)
			cfg.Network.FIFO = seed%2 == 0
			evs := simtest.Run(t, cfg)
			if got := simtest.Count(evs, sim.EvEnter); got != n {
				t.Fatalf("N=%d seed %d: %d entries, want %d", n, seed, got, n)
			}
			if got, want := simtest.Count(evs, sim.EvSend), 6*(n-1)*n; got != want || float64(got) != Spec().Costs[0].Value(n)*float64(n) {
				t.Errorf("N=%d seed %d: %d messages for %d entries, want 6(N-1) each = %d", n, seed, got, n, want)
			}
			for typ, per := range map[string]int{MsgReadNumber: 2 * (n - 1), MsgNumber: 2 * (n - 1), MsgReadChoosing: n - 1, MsgChoosing: n - 1} {
				if got := simtest.CountMsgs(evs, typ); got != per*n {
					t.Errorf("N=%d seed %d: %d %s, want %d per entry", n, seed, got, typ, per)
				}
			}
			if v := simtest.Violations(evs); v != nil {
				t.Errorf("N=%d seed %d: %v", n, seed, v)
			}
			// Client delay: the doorway's round trip, then two round trips with everyone.
			asked := -1
			for _, e := range evs {
				switch e.Type {
				case sim.EvRequest:
					asked = e.T
				case sim.EvEnter:
					if limit := int(Spec().Costs[2].Value(n)) * cfg.Network.DelayMax; e.T-asked > limit {
						t.Errorf("N=%d seed %d: entry took %d, more than 6T = %d", n, seed, e.T-asked, limit)
					}
				}
			}
		}
	}
}

// Seed sweep: random N, delays, FIFO-ness, CS time, poll period and workload. The CS
// stays exclusive, every request is granted, the first come is served first (a process
// whose ticket is taken before another enters the doorway enters the CS before it),
// every message is accounted for as 6(N-1) per entry plus 2 per re-read, and polls
// (each re-reading every process still waited on, once) come at most once per poll
// period.
func TestRun_SeedSweep(t *testing.T) {
	for seed := uint64(1); seed <= 600; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		n := 2 + r.IntN(8)
		cfg := config(seed, n, simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 20 + r.IntN(200)})...)
		cfg.IDs = sparseIDs(r, n)
		cfg.Network = sim.Network{DelayMin: r.IntN(3), DelayMax: 3 + r.IntN(6), FIFO: r.IntN(2) == 0}
		cfg.CS = 1 + r.IntN(5)
		poll := 1 + r.IntN(12)
		cfg.Params = Params{Poll: poll}
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); v != nil {
			t.Fatalf("seed %d (N=%d): violations %v", seed, n, v)
		}
		if u := simtest.Unserved(evs, n); u != nil {
			t.Fatalf("seed %d (N=%d): never granted: %v", seed, n, u)
		}
		if req, ent := simtest.Count(evs, sim.EvRequest), simtest.Count(evs, sim.EvEnter); req != ent {
			t.Fatalf("seed %d (N=%d): %d requests, %d entries", seed, n, req, ent)
		}
		rereads := 0
		rereading := -1 // the node whose BP-1 just fired: its sends that follow are re-reads
		asked := make([]int, n)
		polls := make([]int, n)
		ticketed := make([]bool, n) // through the doorway, not yet in the CS
		ahead := make([][]int, n)   // for each process in the doorway or bakery: who took a ticket before it came in
		for _, e := range evs {
			if e.Type == sim.EvSend && e.Node == rereading {
				rereads++
				continue
			}
			rereading = -1
			switch {
			case e.Type == sim.EvRequest:
				asked[e.Node], polls[e.Node] = e.T, 0
			case e.Type == sim.EvRule && e.Rule == "BP-1":
				rereading = e.Node
				polls[e.Node]++
			case e.Type == sim.EvRule && e.Rule == "BD-1":
				ahead[e.Node] = ahead[e.Node][:0]
				for k := range n {
					if ticketed[k] {
						ahead[e.Node] = append(ahead[e.Node], k)
					}
				}
			case e.Type == sim.EvRule && e.Rule == "BD-3":
				ticketed[e.Node] = true
			case e.Type == sim.EvEnter:
				if len(ahead[e.Node]) > 0 {
					t.Fatalf("seed %d: node %d entered before %v, which had their tickets before it came to the doorway", seed, e.Node, ahead[e.Node])
				}
				if polls[e.Node]*poll > e.T-asked[e.Node] {
					t.Fatalf("seed %d: node %d polled %d times (poll %d) in a wait of %d", seed, e.Node, polls[e.Node], poll, e.T-asked[e.Node])
				}
				ticketed[e.Node] = false
				for k := range ahead {
					ahead[k] = slices.DeleteFunc(ahead[k], func(x int) bool { return x == e.Node })
				}
			}
		}
		if got, want := simtest.Count(evs, sim.EvSend), 6*(n-1)*simtest.Count(evs, sim.EvEnter)+2*rereads; got != want {
			t.Fatalf("seed %d (N=%d): %d messages, want 6(N-1) per entry + 2 per re-read = %d", seed, n, got, want)
		}
	}
}

// Under contention the waits re-read, but only once per poll period: with everybody
// asking at once and the default poll, the cost stays within a small factor of 6(N-1).
func TestRun_ContentionCost(t *testing.T) {
	for _, n := range []int{3, 5, 8} {
		var acts []sim.Action
		for i := range n {
			acts = append(acts, sim.Action{At: 0, Do: sim.ActRequest, Node: i})
		}
		evs := simtest.Run(t, config(1, n, acts...))
		entries := simtest.Count(evs, sim.EvEnter)
		rereads := 0
		for _, e := range evs {
			if e.Type == sim.EvRule && e.Rule == "BP-1" {
				rereads++
			}
		}
		if entries != n || rereads == 0 {
			t.Fatalf("N=%d: %d entries, %d re-reads; want %d entries and some waiting", n, entries, rereads, n)
		}
		per := float64(simtest.Count(evs, sim.EvSend)) / float64(entries)
		t.Logf("N=%d, everyone at once: %.1f messages per entry (6(N-1) = %d), %d re-reads", n, per, 6*(n-1), rereads)
		if per > 2*float64(6*(n-1)) {
			t.Errorf("N=%d: %.1f messages per entry, more than twice 6(N-1)", n, per)
		}
	}
}
