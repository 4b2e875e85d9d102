package central

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// Five processes with ids 10..14; the coordinator is the last one (id 14, index 4).
// Distinct ids and indexes catch an Encode that writes indexes.
var ids5 = []int{10, 11, 12, 13, 14}

const coordIdx = 4

func setup(t *testing.T, denied bool) *sim.Setup {
	t.Helper()
	p := simtest.Params(t, Spec(), `{"denied":`+strconv.FormatBool(denied)+`}`, ids5)
	return &sim.Setup{IDs: ids5, Params: p, MaxDelay: 3}
}

// start builds node self and runs its Init step, then clears what Init recorded;
// messages show as "TYPE->index".
func start(t *testing.T, self int, denied bool) *simtest.Fixture {
	t.Helper()
	f := simtest.Start(t, Spec(), self, setup(t, denied))
	f.Ctx.Reset(self)
	return f
}

func deliver(f *simtest.Fixture, typ string, from int) {
	f.Deliver(sim.Message{Type: typ, From: from})
}

// Every rule has a test named after it.
func TestEveryRuleHasATest(t *testing.T) { simtest.EveryRuleHasATest(t, Spec()) }

func TestCI1_StartsReleasedWithAFreeCS(t *testing.T) {
	for _, tc := range []struct {
		self int
		want string
	}{
		{0, `{"state":"RELEASED","coordinator":14}`},
		{coordIdx, `{"state":"RELEASED","coordinator":14,"holder":-1,"queue":[]}`},
	} {
		f := simtest.NewFixture(t, Spec(), tc.self, setup(t, false))
		f.Step(sim.Input{Kind: sim.Init})
		f.Check(simtest.Want{Rules: []string{"CI-1"}, State: tc.want})
	}
}

// A recovered coordinator forgets who holds the CS and who waits: the kernel gives it a
// fresh state, and the Recover input must not invent anything.
func TestCI1_RecoveredCoordinatorStartsEmpty(t *testing.T) {
	f := simtest.NewFixture(t, Spec(), coordIdx, setup(t, false))
	f.Step(sim.Input{Kind: sim.Recover})
	f.Check(simtest.Want{Rules: []string{"CI-1"}, State: `{"state":"RELEASED","coordinator":14,"holder":-1,"queue":[]}`})
}

func TestCA1_ClientAsksTheCoordinator(t *testing.T) {
	f := start(t, 1, false)
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{Rules: []string{"CA-1"}, Sent: []string{"REQUEST->4"}, State: `{"state":"WAITING","coordinator":14}`})

	// A second request while waiting changes nothing.
	f.Step(sim.Input{Kind: sim.Request})
	f.Check(simtest.Want{State: `{"state":"WAITING","coordinator":14}`})
}

func TestCA1_CoordinatorAsksItselfWithoutMessages(t *testing.T) {
	for _, denied := range []bool{false, true} {
		// The CS is free: it lets itself in at once.
		f := start(t, coordIdx, denied)
		f.Step(sim.Input{Kind: sim.Request})
		f.Check(simtest.Want{Rules: []string{"CA-1", "CG-1", "CE-1"}, Effects: []string{"enter"},
			State: `{"state":"HELD","coordinator":14,"holder":14,"queue":[]}`})

		// The CS is busy: it queues itself, and sends no DENIED to itself.
		f = start(t, coordIdx, denied)
		deliver(f, MsgRequest, 2)
		f.Step(sim.Input{Kind: sim.Request})
		f.Check(simtest.Want{Rules: []string{"CA-1", "CG-1"},
			State: `{"state":"WAITING","coordinator":14,"holder":12,"queue":[14]}`})
	}
}

func TestCG1_CoordinatorGrantsOrQueues(t *testing.T) {
	for _, tc := range []struct {
		name     string
		denied   bool
		before   []int // indexes whose requests arrived earlier
		from     int
		wantSent []string
		want     string
	}{
		{"free CS: grant", false, nil, 1, []string{"GRANT->1"},
			`{"state":"RELEASED","coordinator":14,"holder":11,"queue":[]}`},
		{"busy CS: queue silently", false, []int{0}, 2, nil,
			`{"state":"RELEASED","coordinator":14,"holder":10,"queue":[12]}`},
		{"busy CS, queue keeps arrival order", false, []int{0, 3}, 1, nil,
			`{"state":"RELEASED","coordinator":14,"holder":10,"queue":[13,11]}`},
		{"busy CS with DENIED: queue and say so", true, []int{0}, 2, []string{"DENIED->2"},
			`{"state":"RELEASED","coordinator":14,"holder":10,"queue":[12]}`},
		{"free CS with DENIED: plain grant", true, nil, 3, []string{"GRANT->3"},
			`{"state":"RELEASED","coordinator":14,"holder":13,"queue":[]}`},
		// Over a non-FIFO channel the holder's next REQUEST can arrive before its RELEASE:
		// it must queue, not be granted a CS it still holds on the coordinator's books.
		{"request from the holder overtaking its release", false, []int{1}, 1, nil,
			`{"state":"RELEASED","coordinator":14,"holder":11,"queue":[11]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, coordIdx, tc.denied)
			for _, j := range tc.before {
				deliver(f, MsgRequest, j)
			}
			deliver(f, MsgRequest, tc.from)
			f.Check(simtest.Want{Rules: []string{"CG-1"}, Sent: tc.wantSent, State: tc.want})
		})
	}
}

func TestCD1_DeniedClientKeepsWaiting(t *testing.T) {
	f := start(t, 2, true)
	f.Step(sim.Input{Kind: sim.Request})
	deliver(f, MsgDenied, coordIdx)
	f.Check(simtest.Want{Rules: []string{"CD-1"}, State: `{"state":"WAITING","coordinator":14}`})

	// A DENIED overtaken by its GRANT (non-FIFO) arrives when the client holds the CS.
	deliver(f, MsgGrant, coordIdx)
	deliver(f, MsgDenied, coordIdx)
	f.Check(simtest.Want{State: `{"state":"HELD","coordinator":14}`})
}

func TestCE1_GrantLetsTheClientIn(t *testing.T) {
	f := start(t, 0, false)
	f.Step(sim.Input{Kind: sim.Request})
	deliver(f, MsgGrant, coordIdx)
	f.Check(simtest.Want{Rules: []string{"CE-1"}, Effects: []string{"enter"}, State: `{"state":"HELD","coordinator":14}`})

	// A GRANT to a process that is not waiting (one meant for its life before a crash)
	// lets nobody in.
	f = start(t, 0, false)
	deliver(f, MsgGrant, coordIdx)
	f.Check(simtest.Want{State: `{"state":"RELEASED","coordinator":14}`})
}

func TestCL1_ClientReleasesToTheCoordinator(t *testing.T) {
	f := start(t, 3, false)
	f.Step(sim.Input{Kind: sim.Request})
	deliver(f, MsgGrant, coordIdx)
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{Rules: []string{"CL-1"}, Sent: []string{"RELEASE->4"}, Effects: []string{"exit"}, State: `{"state":"RELEASED","coordinator":14}`})

	// Release outside the CS does nothing.
	f.Step(sim.Input{Kind: sim.Release})
	f.Check(simtest.Want{State: `{"state":"RELEASED","coordinator":14}`})
}

func TestCL1_CoordinatorReleasesLocally(t *testing.T) {
	f := start(t, coordIdx, false)
	f.Step(sim.Input{Kind: sim.Request})
	deliver(f, MsgRequest, 1)
	f.Step(sim.Input{Kind: sim.Release})
	// Its own release needs no message; the GRANT belongs to P11's entry.
	f.Check(simtest.Want{Rules: []string{"CL-1", "CG-2"}, Sent: []string{"GRANT->1"}, Effects: []string{"exit"},
		State: `{"state":"RELEASED","coordinator":14,"holder":11,"queue":[]}`})
}

func TestCG2_ReleaseGrantsTheHeadOfTheQueue(t *testing.T) {
	for _, tc := range []struct {
		name      string
		requests  []int // arrival order; the first becomes holder
		ownReq    bool  // the coordinator asks after them
		from      int
		wantRules []string
		wantSent  []string
		effects   []string
		want      string
	}{
		{"empty queue frees the CS", []int{1}, false, 1, []string{"CG-2"}, nil, nil,
			`{"state":"RELEASED","coordinator":14,"holder":-1,"queue":[]}`},
		{"head of the queue is granted", []int{1, 2, 0}, false, 1, []string{"CG-2"}, []string{"GRANT->2"}, nil,
			`{"state":"RELEASED","coordinator":14,"holder":12,"queue":[10]}`},
		{"coordinator at the head enters itself", []int{1}, true, 1, []string{"CG-2", "CE-1"}, nil, []string{"enter"},
			`{"state":"HELD","coordinator":14,"holder":14,"queue":[]}`},
		// A RELEASE from someone who is not the holder predates a coordinator restart:
		// it must not free the CS.
		{"release from a non-holder is ignored", []int{1, 2}, false, 3, nil, nil, nil,
			`{"state":"RELEASED","coordinator":14,"holder":11,"queue":[12]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := start(t, coordIdx, false)
			for _, j := range tc.requests {
				deliver(f, MsgRequest, j)
			}
			if tc.ownReq {
				f.Step(sim.Input{Kind: sim.Request})
			}
			deliver(f, MsgRelease, tc.from)
			f.Check(simtest.Want{Rules: tc.wantRules, Sent: tc.wantSent, Effects: tc.effects, State: tc.want})
		})
	}
}

func TestWaitingFor(t *testing.T) {
	f := start(t, 2, false)
	c := f.Node.(*node)
	if got := c.WaitingFor(); got != nil {
		t.Errorf("released client waits for %v", got)
	}
	f.Step(sim.Input{Kind: sim.Request})
	if got := c.WaitingFor(); !slices.Equal(got, []int{coordIdx}) {
		t.Errorf("waiting client waits for %v, want [%d]", got, coordIdx)
	}
	g := start(t, coordIdx, false)
	co := g.Node.(*node)
	deliver(g, MsgRequest, 1)
	g.Step(sim.Input{Kind: sim.Request}) // queued behind P11
	if got := co.WaitingFor(); got != nil {
		t.Errorf("coordinator waits for %v, want nobody", got)
	}
}

func TestCloneIsDeep(t *testing.T) {
	f := start(t, coordIdx, false)
	deliver(f, MsgRequest, 0)
	deliver(f, MsgRequest, 1)
	c := f.Node.Clone()
	before := string(sim.EncodeState(c))
	deliver(f, MsgRequest, 2)
	deliver(f, MsgRelease, 0)
	if got := string(sim.EncodeState(c)); got != before {
		t.Errorf("clone changed with the original: %s, was %s", got, before)
	}
}

func TestParseParams(t *testing.T) {
	ids := []int{0, 1, 2, 3, 4}
	simtest.ParseTable(t, ParseParams, ids, []simtest.ParseCase{
		{Raw: "", Want: Params{Coordinator: 4}},
		{Raw: "null", Want: Params{Coordinator: 4}},
		{Raw: " {} ", Want: Params{Coordinator: 4}},
		{Raw: `{"coordinator":2}`, Want: Params{Coordinator: 2}},
		{Raw: `{"denied":true}`, Want: Params{Coordinator: 4, Denied: true}},
		{Raw: `{"coordinator":0,"denied":false}`, Want: Params{Coordinator: 0}},
		{Raw: `{"coordinator":9}`, Err: "params.coordinator: 9 is not a node id (ids: 0 1 2 3 4)"},
		{Raw: `{"coordinator":"2"}`, Err: "params.coordinator: got string"},
		{Raw: `{"coordinator":1.5}`, Err: "params.coordinator: got number 1.5"},
		{Raw: `{"denied":"yes"}`, Err: "params.denied: got string, want true or false"},
		{Raw: `{"holder":1}`, Err: `params.holder: unknown field (allowed: coordinator, denied)`},
		{Raw: `[1]`, Err: "params: got array"},
		{Raw: `{"coordinator":1} {}`, Err: "params: must be a single JSON object"},
		{Raw: `{"coordinator":`, Err: "params:"},
	})
	if got, err := ParseParams(nil, []int{7, 30, 5}); err != nil || got != (Params{Coordinator: 30}) {
		t.Errorf("ParseParams(nil) with ids 7 30 5 = %+v, %v; want coordinator 30 (the highest id)", got, err)
	}
}

// New with no params (the caller passed none) defaults to the highest id.
func TestNewWithoutParams(t *testing.T) {
	simtest.Start(t, Spec(), 0, &sim.Setup{IDs: []int{3, 9, 1}}).WantState(`{"state":"RELEASED","coordinator":9}`)
}

// ---- Whole runs through the kernel ----

func config(seed uint64, n int, params any, until int, acts ...sim.Action) sim.Config {
	return sim.Config{
		Spec: Spec(), IDs: simtest.IDs(n), Params: params, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 3}, CS: 2, Until: until, Actions: acts,
	}
}

func req(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActRequest, Node: node} }

func endTotals(t *testing.T, evs []sim.Event) sim.Totals {
	t.Helper()
	last := evs[len(evs)-1]
	if last.Type != sim.EvEnd || last.Totals == nil {
		t.Fatalf("last event is %v, not end", last.Type)
	}
	return *last.Totals
}

// msgsOf counts the messages sent to or from node i.
func msgsOf(evs []sim.Event, i int) int {
	c := 0
	for _, e := range evs {
		if e.Type == sim.EvSend && (e.Msg.From == i || e.Msg.To == i) {
			c++
		}
	}
	return c
}

func TestRun_ThreeMessagesPerEntry(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		// One request at a time: each entry is over (at most 3+3+2+3 = 11) before the next.
		evs := simtest.Run(t, config(seed, 5, nil, 200, req(0, 0), req(20, 1), req(40, 2), req(60, 3), req(80, 1)))
		tot := endTotals(t, evs)
		if tot.Entries != 5 || tot.Messages != 3*5 {
			t.Fatalf("seed %d: %d entries, %d messages; want 5 and 15", seed, tot.Entries, tot.Messages)
		}
		for _, typ := range []string{MsgRequest, MsgGrant, MsgRelease} {
			if c := simtest.CountMsgs(evs, typ); c != 5 {
				t.Errorf("seed %d: %d %s messages, want 5", seed, c, typ)
			}
		}
		if v := simtest.Violations(evs); v != nil {
			t.Errorf("seed %d: violations %v", seed, v)
		}
	}

	// The coordinator (index 4, the highest id) enters with no message at all.
	evs := simtest.Run(t, config(1, 5, nil, 100, req(0, 4), req(20, 4)))
	if tot := endTotals(t, evs); tot.Entries != 2 || tot.Messages != 0 {
		t.Errorf("coordinator alone: %d entries, %d messages; want 2 and 0", tot.Entries, tot.Messages)
	}
}

func TestRun_DeniedUnderContention(t *testing.T) {
	p := simtest.Params(t, Spec(), `{"denied":true}`, simtest.IDs(5))
	for seed := uint64(1); seed <= 20; seed++ {
		// All four clients ask at once. The first REQUEST to arrive (by t=3) is granted,
		// and that holder cannot give the CS back before t=5 (GRANT, CS, RELEASE), so
		// the other three arrive to a busy CS and are told DENIED.
		evs := simtest.Run(t, config(seed, 5, p, 300, req(0, 0), req(0, 1), req(0, 2), req(0, 3)))
		tot := endTotals(t, evs)
		if tot.Entries != 4 {
			t.Fatalf("seed %d: %d entries, want 4", seed, tot.Entries)
		}
		if c := simtest.CountMsgs(evs, MsgDenied); c != 3 {
			t.Errorf("seed %d: %d DENIED, want 3", seed, c)
		}
		if tot.Messages != 4*3+3 {
			t.Errorf("seed %d: %d messages, want 15", seed, tot.Messages)
		}
		first := -1
		for _, e := range evs {
			if e.Type == sim.EvEnter {
				first = e.Node
				break
			}
		}
		for i := 0; i < 4; i++ {
			want := 4 // REQUEST, DENIED, GRANT, RELEASE
			if i == first {
				want = 3
			}
			if got := msgsOf(evs, i); got != want {
				t.Errorf("seed %d: P%d's entry took %d messages, want %d", seed, i, got, want)
			}
			if rules := simtest.Rules(evs, i); slices.Contains(rules, "CD-1") == (i == first) {
				t.Errorf("seed %d: P%d fired %v", seed, i, rules)
			}
		}
		if v := simtest.Violations(evs); v != nil {
			t.Errorf("seed %d: violations %v", seed, v)
		}
	}
}

// arrivals lists, in order, the nodes whose requests reached the coordinator: REQUEST
// deliveries, plus the coordinator's own requests, handled where they are made.
func arrivals(evs []sim.Event, coord int) []int {
	var out []int
	for _, e := range evs {
		switch {
		case e.Type == sim.EvDeliver && e.Msg.Type == MsgRequest:
			out = append(out, e.Msg.From)
		case e.Type == sim.EvRequest && e.Node == coord:
			out = append(out, coord)
		}
	}
	return out
}

func entries(evs []sim.Event) []int {
	var out []int
	for _, e := range evs {
		if e.Type == sim.EvEnter {
			out = append(out, e.Node)
		}
	}
	return out
}

func TestRun_FIFOOrderOfArrival(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		n := 6
		var acts []sim.Action
		for i := 0; i < n; i++ { // everyone, coordinator included, asks once early
			acts = append(acts, req(r.IntN(6), i))
		}
		p := Params{Coordinator: r.IntN(n), Denied: seed%2 == 0}
		cfg := config(seed, n, p, 500, acts...)
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 8}
		evs := simtest.Run(t, cfg)
		arr, ent := arrivals(evs, p.Coordinator), entries(evs)
		if len(ent) != n || !slices.Equal(arr, ent) {
			t.Fatalf("seed %d: requests arrived at the coordinator as %v but entered as %v", seed, arr, ent)
		}
	}
}

func TestRun_SeedSweep(t *testing.T) {
	const seeds = 600
	for seed := uint64(1); seed <= seeds; seed++ {
		r := rand.New(rand.NewPCG(seed, 2))
		n := 2 + r.IntN(7)
		// Sparse, shuffled ids so an index mistaken for an id shows.
		ids := make([]int, n)
		for i := range ids {
			ids[i] = 3*i + r.IntN(3)
		}
		r.Shuffle(n, func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
		dmin := r.IntN(4)
		p := Params{Coordinator: ids[r.IntN(n)], Denied: r.IntN(2) == 0}
		cfg := sim.Config{
			Spec: Spec(), IDs: ids, Params: p, Seed: seed,
			Network: sim.Network{DelayMin: dmin, DelayMax: dmin + r.IntN(6), FIFO: r.IntN(2) == 0},
			CS:      1 + r.IntN(4),
			Until:   5000,
			Actions: simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 3 * n, Span: 60}),
		}
		evs := simtest.Run(t, cfg)
		if v := simtest.Violations(evs); v != nil {
			t.Fatalf("seed %d (n=%d, params %+v, network %+v): violations %v", seed, n, p, cfg.Network, v)
		}
		if u := simtest.Unserved(evs, n); u != nil {
			t.Fatalf("seed %d (n=%d, params %+v, network %+v): unserved %v", seed, n, p, cfg.Network, u)
		}
		if simtest.Count(evs, sim.EvRequest) != simtest.Count(evs, sim.EvEnter) {
			t.Fatalf("seed %d: %d requests but %d entries", seed,
				simtest.Count(evs, sim.EvRequest), simtest.Count(evs, sim.EvEnter))
		}
	}
}

func violationsOf(evs []sim.Event, prop string) []string {
	var out []string
	for _, e := range evs {
		if e.Type == sim.EvViolation && e.Property == prop {
			out = append(out, e.Detail)
		}
	}
	return out
}

func TestRun_CoordinatorCrashStallsRequesters(t *testing.T) {
	crash := sim.Action{At: 0, Do: sim.ActCrash, Node: 4}
	for _, tc := range []struct {
		name    string
		acts    []sim.Action
		waiting string // the process the deadlock report must name
	}{
		// P1 asks a coordinator that is already dead: the REQUEST is lost.
		{"request after the crash", []sim.Action{crash, req(5, 1)}, "P1"},
		// P0 holds the CS and P2 is queued when the coordinator dies: P0's RELEASE is
		// lost and P2 waits forever.
		{"queued when the coordinator crashes", []sim.Action{req(0, 0), req(1, 2),
			{At: 7, Do: sim.ActCrash, Node: 4}}, "P2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 10; seed++ {
				cfg := config(seed, 5, nil, 500, tc.acts...)
				cfg.Network = sim.Network{DelayMin: 3, DelayMax: 3} // P0 is in the CS at t=7
				evs := simtest.Run(t, cfg)
				u := simtest.Unserved(evs, 5)
				if len(u) != 1 {
					t.Fatalf("seed %d: unserved %v, want exactly the one waiter", seed, u)
				}
				dl := violationsOf(evs, sim.PropDeadlock)
				if len(dl) != 1 || !strings.Contains(dl[0], tc.waiting+" still wait for the CS") {
					t.Errorf("seed %d: deadlock reports %q, want one naming %s", seed, dl, tc.waiting)
				}
				if m := violationsOf(evs, sim.PropMutex); m != nil {
					t.Errorf("seed %d: mutual exclusion broken: %v", seed, m)
				}
			}
		})
	}
}

// The pending monitor names the waiter too when the run goes on long enough for
// something else to happen after the limit.
func TestRun_CoordinatorCrashReportsPending(t *testing.T) {
	cfg := config(1, 5, nil, 1000, sim.Action{At: 0, Do: sim.ActCrash, Node: 4}, req(5, 1),
		sim.Action{At: 900, Do: sim.ActCrash, Node: 0}) // a late event wakes the monitor
	cfg.Pending = 100
	evs := simtest.Run(t, cfg)
	p := violationsOf(evs, sim.PropPending)
	if len(p) != 1 || !strings.HasPrefix(p[0], "P1 has waited") {
		t.Errorf("pending reports %q, want one naming P1", p)
	}
}

// A recovered coordinator has forgotten its queue: a request queued before the crash
// is never granted, while one made after the recovery is.
func TestRun_RecoveredCoordinatorForgetsItsQueue(t *testing.T) {
	cfg := config(1, 5, nil, 500,
		req(0, 0), req(1, 2), // P0 is granted, P2 queued (arrives by t=4, P0 holds until t>=8)
		sim.Action{At: 7, Do: sim.ActCrash, Node: 4},
		sim.Action{At: 8, Do: sim.ActRecover, Node: 4},
		req(40, 3))
	cfg.Network = sim.Network{DelayMin: 3, DelayMax: 3}
	evs := simtest.Run(t, cfg)
	if got := entries(evs); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("entries %v, want P0 then P3", got)
	}
	if u := simtest.Unserved(evs, 5); len(u) != 1 || !strings.HasPrefix(u[0], "node index 2 ") {
		t.Errorf("unserved %v, want only P2", u)
	}
	if rules := simtest.Rules(evs, 4); !slices.Equal(rules, []string{"CI-1", "CG-1", "CG-1", "CI-1", "CG-1", "CG-2"}) {
		t.Errorf("coordinator rules %v", rules)
	}
}
