package cost

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
	"github.com/teach-dist/playground/scenarios"
)

func spec(t testing.TB, slug string) *sim.Spec {
	t.Helper()
	s, ok := algorithms.Lookup(slug)
	if !ok {
		t.Fatalf("no algorithm %q", slug)
	}
	return s
}

// config is a run of slug on n processes with ids 0..n-1 and the default params.
func config(t testing.TB, slug string, n int, seed uint64, delay [2]int, acts ...sim.Action) sim.Config {
	t.Helper()
	s := spec(t, slug)
	ids := simtest.IDs(n)
	var params any
	if s.ParseParams != nil {
		var err error
		if params, err = s.ParseParams(nil, ids); err != nil {
			t.Fatal(err)
		}
	}
	return sim.Config{Spec: s, IDs: ids, Params: params, Seed: seed, CS: 2, Until: 5000,
		Network: sim.Network{DelayMin: delay[0], DelayMax: delay[1], FIFO: true}, Actions: acts}
}

// oneAtATime: each listed process asks for the CS in turn, long after the last one left.
func oneAtATime(nodes ...int) []sim.Action {
	var acts []sim.Action
	for k, i := range nodes {
		acts = append(acts, sim.Action{At: 1 + 200*k, Do: sim.ActRequest, Node: i})
	}
	return acts
}

func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func measure(t *testing.T, cfg sim.Config) Result {
	t.Helper()
	r, err := Replay(cfg, nil, math.MaxInt)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return r
}

func mean(t *testing.T, r Result, key string) float64 {
	t.Helper()
	m := r.Get(key)
	if m == nil || m.Mean == nil {
		t.Fatalf("%s: %s has no value yet: %+v", r.Algorithm, key, m)
	}
	return *m.Mean
}

// curve evaluates the algorithm's own formula for key (what the panel shows beside it).
func curve(t *testing.T, slug, key string, n int) float64 {
	t.Helper()
	c := Curve(spec(t, slug), key)
	if c == nil {
		t.Fatalf("%s has no cost with a value for %s", slug, key)
	}
	return c.Value(n)
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Without contention every entry costs what the notes say, and the Spec's formula
// evaluated for N gives that number: RA 2(N-1), central 3 (2 to enter, 1 to leave),
// Lamport 3(N-1), Suzuki-Kasami and the RA token algorithm N, Maekawa 3(K-1) with the
// notes' N=7 sets.
func TestMessagesPerEntryMatchTheNotes(t *testing.T) {
	tests := []struct {
		slug       string
		n          int
		requesters []int
		perEntry   float64
		toEnter    float64 // -1: no formula to check
		onExit     float64 // -1: no formula to check
	}{
		{"ricart-agrawala", 3, upTo(3), 4, 4, -1},
		{"ricart-agrawala", 5, upTo(5), 8, 8, -1},
		{"ricart-agrawala", 8, upTo(8), 14, 14, -1},
		{"central", 5, []int{0, 1, 2, 3, 1}, 3, 2, 1}, // the coordinator (4) never asks
		{"lamport", 4, upTo(4), 9, 6, 3},
		{"lamport", 6, upTo(6), 15, 10, 5},
		{"suzuki-kasami", 5, []int{1, 2, 3, 4, 0}, 5, -1, -1}, // the token is never at hand
		{"ricart-agrawala-token", 4, []int{1, 2, 3, 0}, 4, -1, -1},
		{"maekawa", 7, upTo(7), 6, 4, 2},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/N=%d", tc.slug, tc.n), func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				r := measure(t, config(t, tc.slug, tc.n, seed, [2]int{1, 3}, oneAtATime(tc.requesters...)...))
				if r.Entries != len(tc.requesters) || r.Exits != r.Entries {
					t.Fatalf("seed %d: %d entries, %d exits; want %d", seed, r.Entries, r.Exits, len(tc.requesters))
				}
				if got := mean(t, r, PerEntry); !near(got, tc.perEntry) {
					t.Errorf("seed %d: %v messages per entry, want %v", seed, got, tc.perEntry)
				}
				if want := curve(t, tc.slug, PerEntry, tc.n); !near(want, tc.perEntry) {
					t.Errorf("the Spec's formula gives %v for N=%d, the notes %v", want, tc.n, tc.perEntry)
				}
				if tc.toEnter >= 0 {
					if got := mean(t, r, ToEnter); !near(got, tc.toEnter) {
						t.Errorf("seed %d: %v messages to enter, want %v", seed, got, tc.toEnter)
					}
					if want := curve(t, tc.slug, ToEnter, tc.n); !near(want, tc.toEnter) {
						t.Errorf("the Spec's formula to enter gives %v, want %v", want, tc.toEnter)
					}
				}
				if tc.onExit >= 0 {
					if got := mean(t, r, OnExit); !near(got, tc.onExit) {
						t.Errorf("seed %d: %v messages on exit, want %v", seed, got, tc.onExit)
					}
					if want := curve(t, tc.slug, OnExit, tc.n); !near(want, tc.onExit) {
						t.Errorf("the Spec's formula to leave gives %v, want %v", want, tc.onExit)
					}
				}
			}
		})
	}
}

// Maekawa's derived figures follow the run's own sets (a figure must not be 3(K-1) with a
// K the run does not have): every process of a 16-process grid (K = 7) pays 18
// messages per entry and the figure beside it says 18; on the default sets of the
// same N it says their average, which the run measures too.
func TestMaekawaDerivedFiguresFollowTheRunsSets(t *testing.T) {
	for _, tc := range []struct {
		params            string
		perEntry, toEnter float64
	}{
		{`{"construction":"grid"}`, 18, 12},
		{`{}`, 3 * (13*3 + 3*4) / 16.0, 2 * (13*3 + 3*4) / 16.0}, // the plane of order 3 (K=4) and 3 more (K=5)
	} {
		cfg := config(t, "maekawa", 16, 1, [2]int{1, 3}, oneAtATime(upTo(16)...)...)
		p, err := cfg.Spec.ParseParams([]byte(tc.params), cfg.IDs)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Params = p
		cfg.Until = 20000
		r := measure(t, cfg)
		for _, m := range []struct {
			key  string
			want float64
		}{{PerEntry, tc.perEntry}, {ToEnter, tc.toEnter}} {
			if got := mean(t, r, m.key); !near(got, m.want) {
				t.Errorf("%s %s: measured %v, want %v", tc.params, m.key, got, m.want)
			}
			th := r.Get(m.key).Theory
			if len(th) == 0 || th[0].Value == nil || !near(*th[0].Value, m.want) {
				t.Errorf("%s %s: the derived figure beside it is %+v, want %v", tc.params, m.key, th, m.want)
			}
		}
	}
}

// The token ring: a lone request waits 1 to N-1 token passes (the notes: "it can take
// from 1 to n-1 messages to obtain a token"), and the idle token makes the messages per
// entry grow without bound.
func TestTokenRingObtainsTheTokenInAtMostNMinus1Messages(t *testing.T) {
	const n = 6
	for seed := uint64(1); seed <= 5; seed++ {
		r := measure(t, config(t, "token-ring", n, seed, [2]int{1, 3}, oneAtATime(3, 1, 5, 2)...))
		m := r.Get(ToEnter)
		if m.Samples != 4 || m.Max == nil || *m.Max > n-1 || *m.Max < 1 {
			t.Fatalf("seed %d: messages to obtain the token %+v, want 4 samples within 1..%d", seed, m, n-1)
		}
		if per := mean(t, r, PerEntry); per <= n-1 {
			t.Errorf("seed %d: %v messages per entry; the idle token should cost far more", seed, per)
		}
	}
}

// Elections, against the notes: Bully's best case (the second-highest notices) N-1,
// worst case (the lowest calls) N²-N-1; Chang-Roberts 2N when the highest starts and
// 3N-1 when its successor does; the ring with a growing list 2N.
func TestElectionMessagesMatchTheNotes(t *testing.T) {
	tests := []struct {
		name string
		slug string
		n    int
		acts func(n int) []sim.Action
		want func(n int) float64
		cost string // the Spec's cost that gives the same number
	}{
		{"bully best", "bully", 8, func(n int) []sim.Action {
			return []sim.Action{{At: 0, Do: sim.ActCrash, Node: n - 1}, {At: 1, Do: sim.ActElect, Node: n - 2}}
		}, func(n int) float64 { return float64(n - 1) }, "best case"},
		{"bully worst N=5", "bully", 5, func(n int) []sim.Action {
			return []sim.Action{{At: 0, Do: sim.ActCrash, Node: n - 1}, {At: 1, Do: sim.ActElect, Node: 0}}
		}, func(n int) float64 { return float64(n*n - n - 1) }, "worst case"},
		{"bully worst N=8", "bully", 8, func(n int) []sim.Action {
			return []sim.Action{{At: 0, Do: sim.ActCrash, Node: n - 1}, {At: 1, Do: sim.ActElect, Node: 0}}
		}, func(n int) float64 { return float64(n*n - n - 1) }, "worst case"},
		{"chang-roberts highest starts", "ring", 6, func(n int) []sim.Action {
			return []sim.Action{{At: 1, Do: sim.ActElect, Node: n - 1}}
		}, func(n int) float64 { return float64(2 * n) }, "best case"},
		{"chang-roberts successor of the highest starts", "ring", 7, func(n int) []sim.Action {
			return []sim.Action{{At: 1, Do: sim.ActElect, Node: 0}}
		}, func(n int) float64 { return float64(3*n - 1) }, "worst case"},
		// 002: "requires 2N messages: N for ELECTION message, N for COORDINATOR message".
		{"ring with a growing list, one starter", "ring-list", 6, func(n int) []sim.Action {
			return []sim.Action{{At: 1, Do: sim.ActElect, Node: 2}}
		}, func(n int) float64 { return float64(2 * n) }, "one initiator"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t, tc.slug, tc.n, 1, [2]int{1, 3}, tc.acts(tc.n)...)
			cfg.Until = 500
			r := measure(t, cfg)
			if len(r.Elections) != 1 || r.Elections[0].Settled == nil || r.Elections[0].Leader < 0 {
				t.Fatalf("elections %+v, want one that settles", r.Elections)
			}
			want := tc.want(tc.n)
			if got := mean(t, r, ElectionMessages); !near(got, want) {
				t.Errorf("%v messages, want %v", got, want)
			}
			found := false
			for _, th := range r.Get(ElectionMessages).Theory {
				if strings.Contains(th.Name, tc.cost) && th.Value != nil && near(*th.Value, want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no theory %q worth %v beside it: %+v", tc.cost, want, r.Get(ElectionMessages).Theory)
			}
		})
	}
}

// With a fixed delay d every message takes exactly T = d, so the delays come out as
// the notes count them: a client waits 2T (central, RA, Lamport, Maekawa); when one
// leaves, the next enters after 2T with the coordinator (RELEASE, GRANT) and with
// Maekawa (RELEASE to the shared voter, its REPLY: 003 "2, any two voting sets
// overlap"), T with RA (the deferred REPLY) and with Lamport (the RELEASE).
func TestDelaysInMessageTimes(t *testing.T) {
	const d = 2
	tests := []struct {
		slug          string
		n             int
		asking        []int
		client, syncT float64
	}{
		{"central", 4, []int{0, 1}, 2, 2},
		{"ricart-agrawala", 4, []int{0, 1}, 2, 1},
		{"lamport", 4, []int{0, 1}, 2, 1},
		// The notes' N=7 sets: V2 = {2, 4, 6} and V7 = {3, 4, 7} (indexes 1 and 6)
		// meet only in P4, which neither holder sends its RELEASE to directly.
		{"maekawa", 7, []int{1, 6}, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.slug, func(t *testing.T) {
			// A lone request first (client delay), then two at once (sync delay).
			acts := []sim.Action{{At: 1, Do: sim.ActRequest, Node: tc.asking[0]}}
			for _, i := range tc.asking {
				acts = append(acts, sim.Action{At: 100, Do: sim.ActRequest, Node: i})
			}
			r := measure(t, config(t, tc.slug, tc.n, 1, [2]int{d, d}, acts...))
			client := r.Get(ClientDelay)
			// The lone request waited exactly the theory; the contended ones, more.
			if client.Samples != 3 || client.MeanT == nil || *client.MeanT < tc.client {
				t.Fatalf("client delay %+v, want 3 samples of at least %vT", client, tc.client)
			}
			lone := measure(t, config(t, tc.slug, tc.n, 1, [2]int{d, d}, acts[0]))
			if got := *lone.Get(ClientDelay).MeanT; !near(got, tc.client) {
				t.Errorf("a lone request waited %vT, want %vT", got, tc.client)
			}
			sync := r.Get(SyncDelay)
			if sync.Samples != 1 || !near(*sync.MeanT, tc.syncT) || !near(*sync.Mean, tc.syncT*d) {
				t.Errorf("synchronisation delay %+v, want one sample of %vT = %v", sync, tc.syncT, tc.syncT*d)
			}
			if th := sync.Theory; len(th) == 0 || th[0].Value == nil || !near(*th[0].Value, tc.syncT) {
				t.Errorf("the notes' synchronisation delay beside it is %+v, want %vT", th, tc.syncT)
			}
		})
	}
}

// Chang-Roberts started by the highest id with a fixed delay d: its ELECTION goes round
// (N hops), then the ELECTED reaches the others one by one (N-1 hops): (2N-1)d.
func TestElectionTimeIsCallToEveryoneKnowing(t *testing.T) {
	const n, d = 5, 3
	cfg := config(t, "ring", n, 1, [2]int{d, d}, sim.Action{At: 1, Do: sim.ActElect, Node: n - 1})
	r := measure(t, cfg)
	m := r.Get(ElectionTime)
	if m.Samples != 1 || !near(*m.Mean, (2*n-1)*d) || !near(*m.MeanT, 2*n-1) {
		t.Fatalf("election time %+v, want %d (%d T)", m, (2*n-1)*d, 2*n-1)
	}
	el := r.Elections[0]
	if el.Start.T != 1 || el.Settled.T != 1+(2*n-1)*d || el.Leader != n-1 {
		t.Errorf("election %+v", el)
	}
}

// The notes' ordering property holds for Ricart-Agrawala and Lamport: with contention
// and no failure, no grant ever overtakes a request that happened before it, and there
// are such pairs to check.
func TestOrderingKeptByRicartAgrawalaAndLamport(t *testing.T) {
	for _, slug := range []string{"ricart-agrawala", "lamport"} {
		checked := 0
		for seed := uint64(1); seed <= 60; seed++ {
			n := 3 + int(seed%4)
			cfg := config(t, slug, n, seed, [2]int{1, 5},
				simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 4 * n, Span: 60})...)
			cfg.Until = 400
			r := measure(t, cfg)
			if r.Ordering.Verdict == OrderBroken {
				t.Fatalf("%s seed %d: ordering broken: %+v", slug, seed, r.Ordering.First)
			}
			checked += r.Ordering.Checked
		}
		if checked < 100 {
			t.Errorf("%s: only %d grants had a causally earlier request: the test checks little", slug, checked)
		}
	}
}

// The central coordinator serves requests in the order they reach it. In this
// playground processes talk only through the algorithm, so a request that happened
// before another has always reached the coordinator first: the property breaks when
// the coordinator forgets its queue. Here P0 is queued behind P1, the coordinator P2
// crashes and recovers with an empty queue, then asks for itself: P2's request
// happened after P0's (P2 had received it), yet P2 enters while P0 waits forever.
func TestOrderingBrokenByTheCentralCoordinatorRestart(t *testing.T) {
	cfg := config(t, "central", 3, 1, [2]int{1, 1},
		sim.Action{At: 0, Do: sim.ActRequest, Node: 1},
		sim.Action{At: 1, Do: sim.ActRequest, Node: 0},
		sim.Action{At: 4, Do: sim.ActCrash, Node: 2},
		sim.Action{At: 5, Do: sim.ActRecover, Node: 2},
		sim.Action{At: 9, Do: sim.ActRequest, Node: 2})
	cfg.CS = 5
	r := measure(t, cfg)
	o := r.Ordering
	if o.Verdict != OrderBroken || o.Violations != 1 {
		t.Fatalf("ordering %+v, want broken once", o)
	}
	f := o.First
	if f.Earlier.Node != 0 || f.Earlier.T != 1 || f.Later.Node != 2 || f.Later.T != 9 || f.Grant.Node != 2 || f.Grant.T != 9 {
		t.Errorf("first violation %+v: want P0's request (t=1) overtaken by P2's (t=9)", f)
	}
	assertGrantAtStep(t, cfg, f.Grant)
}

// The token ring serves in ring order. Again only a failure lets a request happen
// before another without the token having served it: the token is lost, P3 asks, and
// the regeneration election carries news of P3's request round the ring to P1, which
// then asks; the new token, created by P5, reaches P1 before P3.
func TestOrderingBrokenByTheTokenRingAfterRegeneration(t *testing.T) {
	sc := scenario(t, `{"version":2,"algorithm":"token-ring","nodes":6,"seed":3,"network":{"delay":[1,3],"fifo":true},"cs":2,
		"params":{"regenerate":40},"events":[{"at":6,"do":"drop","type":"TOKEN"},{"at":8,"do":"request","node":3},{"at":60,"do":"request","node":1}],"until":300}`)
	r := measure(t, sc)
	o := r.Ordering
	if o.Verdict != OrderBroken || o.First.Earlier.Node != 3 || o.First.Later.Node != 1 || o.First.Grant.Node != 1 {
		t.Fatalf("ordering %+v first %+v: want P1 granted before P3's earlier request", o, o.First)
	}
	assertGrantAtStep(t, sc, o.First.Grant)
	// Without the failure, the same two requests are served in ring order and nothing
	// happened before anything.
	plain := scenario(t, `{"version":2,"algorithm":"token-ring","nodes":6,"seed":3,"network":{"delay":[1,3],"fifo":true},"cs":2,
		"events":[{"at":8,"do":"request","node":3},{"at":60,"do":"request","node":1}],"until":300}`)
	if v := measure(t, plain).Ordering.Verdict; v == OrderBroken {
		t.Errorf("without the lost token: %s", v)
	}
}

// Failure-free, the central coordinator and the token ring keep the order too (the
// finding behind the two tests above): the notes' "no" needs processes that also talk
// outside the algorithm.
func TestOrderingCentralAndTokenRingWithoutFailures(t *testing.T) {
	for _, slug := range []string{"central", "token-ring"} {
		for seed := uint64(1); seed <= 40; seed++ {
			n := 3 + int(seed%4)
			cfg := config(t, slug, n, seed, [2]int{1, 5},
				simtest.RandomActions(seed, n, sim.Mutex, simtest.Workload{Requests: 4 * n, Span: 60})...)
			cfg.Network.FIFO = seed%2 == 0
			cfg.Until = 400
			if o := measure(t, cfg).Ordering; o.Verdict == OrderBroken {
				t.Fatalf("%s seed %d: %+v", slug, seed, o.First)
			}
		}
	}
}

// The curated scenarios: "arrival order beating send order" (central-queue) serves P1
// first although it asked last, but the three requests are concurrent: nothing to
// check. The RA token algorithm passes the token round-robin, which can overtake a
// causally earlier request: its curated scenario shows it.
func TestOrderingInCuratedScenarios(t *testing.T) {
	tests := []struct {
		name    string
		verdict string
		first   *Violation
	}{
		{"central-queue", OrderNothing, nil},
		{"ricart-agrawala-concurrent", OrderKept, nil},
		{"ricart-agrawala-token-who-gets-the-token", OrderBroken, &Violation{
			Earlier: Point{Node: 1, Seq: 69, Step: 20, T: 14},
			Later:   Point{Node: 5, Seq: 92, Step: 27, T: 16},
			Grant:   Point{Node: 5, Seq: 120, Step: 37, T: 20},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, ok := scenarios.Lookup(tc.name)
			if !ok {
				t.Fatalf("no curated scenario %q", tc.name)
			}
			cfg, err := sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			o := measure(t, cfg).Ordering
			if o.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s (%+v)", o.Verdict, tc.verdict, o.First)
			}
			if tc.first != nil && *o.First != *tc.first {
				t.Errorf("first violation %+v, want %+v", *o.First, *tc.first)
			}
		})
	}
}

// assertGrantAtStep: seeking to the grant's step shows its process in the CS, and the
// step before does not (the panel seeks there on a click).
func assertGrantAtStep(t *testing.T, cfg sim.Config, g Point) {
	t.Helper()
	i := -1
	for k, id := range cfg.IDs {
		if id == g.Node {
			i = k
		}
	}
	at, err := sim.Replay(cfg, nil, g.Step, nil)
	if err != nil {
		t.Fatal(err)
	}
	before, err := sim.Replay(cfg, nil, g.Step-1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !at.InCS(i) || before.InCS(i) {
		t.Errorf("step %d: P%d in the CS %v, at the step before %v", g.Step, g.Node, at.InCS(i), before.InCS(i))
	}
}

func scenario(t *testing.T, doc string) sim.Config {
	t.Helper()
	sc, err := scenarios.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Before anything happens there is nothing to show: no value, no verdict.
func TestNothingYet(t *testing.T) {
	cfg := config(t, "ricart-agrawala", 4, 1, [2]int{1, 3}, oneAtATime(0)...)
	r, err := Replay(cfg, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Metrics {
		if m.Mean != nil || m.Samples != 0 {
			t.Errorf("%s at step 0: %+v", m.Key, m)
		}
		if len(m.Theory) == 0 && (m.Key == PerEntry || m.Key == ClientDelay) {
			t.Errorf("%s: no theory beside it", m.Key)
		}
	}
	if r.Ordering.Verdict != OrderNothing || r.Step != 0 {
		t.Errorf("step %d, ordering %+v", r.Step, r.Ordering)
	}
	if r.Get(PerEntry).Theory[0].Formula != "2(N-1)" || *r.Get(PerEntry).Theory[0].Value != 6 {
		t.Errorf("theory %+v", r.Get(PerEntry).Theory)
	}
}

// Heartbeats are not the algorithm's messages: they are counted apart.
func TestBackgroundMessagesAreNotCounted(t *testing.T) {
	sc, _ := scenarios.Lookup("bully-heartbeat-crash-then-election")
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	evs := simtest.Run(t, cfg)
	r := measure(t, cfg)
	heartbeats := 0
	for _, m := range cfg.Spec.BackgroundMessages {
		heartbeats += simtest.CountMsgs(evs, m)
	}
	if heartbeats == 0 || r.Background != heartbeats || r.Messages != simtest.Count(evs, sim.EvSend)-heartbeats {
		t.Fatalf("messages %d, background %d; the trace has %d sends, %d heartbeats", r.Messages, r.Background, simtest.Count(evs, sim.EvSend), heartbeats)
	}
	if len(r.Elections) != 1 || r.Elections[0].Messages != r.Messages {
		t.Errorf("elections %+v: the failure detector's election should hold every algorithm message", r.Elections)
	}
}

// A trace v1 file gives the same measures as the kernel's events, steps aside.
func TestTraceAndKernelAgree(t *testing.T) {
	for _, name := range []string{"ricart-agrawala-concurrent", "central-denied", "ricart-agrawala-token-who-gets-the-token", "bully-worst-case", "ring-list-p1-p4-crashed", "maekawa-n7"} {
		t.Run(name, func(t *testing.T) {
			sc, _ := scenarios.Lookup(name)
			cfg, err := sc.Config()
			if err != nil {
				t.Fatal(err)
			}
			live := measure(t, cfg)
			trace := simtest.Trace(t, cfg)
			got, err := FromTrace(bytes.NewReader(trace), cfg.Spec, cfg.IDs, Options{MeanDelay: MeanDelay(cfg.Network)})
			if err != nil {
				t.Fatal(err)
			}
			learnt, err := FromTrace(bytes.NewReader(trace), cfg.Spec, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if learnt.N != len(cfg.IDs) || learnt.Messages != live.Messages {
				t.Errorf("ids learnt from the trace: N=%d, %d messages", learnt.N, learnt.Messages)
			}
			if got.Messages != live.Messages || got.Entries != live.Entries || got.Requests != live.Requests {
				t.Fatalf("trace %d/%d/%d, kernel %d/%d/%d (messages/entries/requests)", got.Messages, got.Entries, got.Requests, live.Messages, live.Entries, live.Requests)
			}
			for k, m := range live.Metrics {
				g := got.Metrics[k]
				if (m.Mean == nil) != (g.Mean == nil) || m.Mean != nil && !near(*m.Mean, *g.Mean) {
					t.Errorf("%s: trace %v, kernel %v", m.Key, val(g.Mean), val(m.Mean))
				}
			}
			if live.Ordering != nil {
				lo, to := *live.Ordering, *got.Ordering
				if lo.Verdict != to.Verdict || lo.Checked != to.Checked || lo.Violations != to.Violations {
					t.Errorf("ordering: trace %+v, kernel %+v", to, lo)
				}
				if lo.First != nil && (to.First.Grant.Seq != lo.First.Grant.Seq || to.First.Grant.Step != -1) {
					t.Errorf("first violation: trace %+v, kernel %+v", to.First, lo.First)
				}
			}
		})
	}
}

func val(p *float64) any {
	if p == nil {
		return "n/a"
	}
	return *p
}

// Replay numbers steps as sim.Replay does and emits the same trace, interventions
// included (live requests, a crash, a user's drop).
func TestReplayMatchesTheKernel(t *testing.T) {
	cfg := config(t, "ricart-agrawala", 4, 7, [2]int{1, 3}, oneAtATime(0, 2)...)
	ivs := []sim.Intervention{
		{Step: 3, Action: sim.Action{Do: sim.ActRequest, Node: 1, From: -1, To: -1}},
		{Step: 3, Action: sim.Action{Do: sim.ActRequest, Node: 3, From: -1, To: -1}},
		{Step: 9, Action: sim.Action{Do: sim.ActDrop, From: 2, To: -1, Type: "REPLY"}},
		{Step: 40, Action: sim.Action{Do: sim.ActCrash, Node: 2, From: -1, To: -1}},
	}
	for _, step := range []int{0, 3, 9, 25, 60, 1000} {
		var want, got []byte
		enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
		s, err := sim.Replay(cfg, ivs, step, enc.Lines(&want))
		if err != nil {
			t.Fatal(err)
		}
		c := New(cfg.Spec, cfg.IDs, Options{})
		r, err := replay(cfg, ivs, step, c, enc.Lines(&got), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || r.Step != s.Steps() || r.T != s.Now() {
			t.Fatalf("step %d: replay differs from sim.Replay (steps %d/%d)\n%s\n---\n%s", step, r.Step, s.Steps(), got, want)
		}
	}
}

// In hold mode a message the user delivers is a step of its own; Replay counts it so.
func TestReplayMatchesTheKernelInHoldMode(t *testing.T) {
	cfg := config(t, "ricart-agrawala", 3, 1, [2]int{1, 3}, sim.Action{At: 1, Do: sim.ActRequest, Node: 0})
	cfg.Network.Hold = true
	var ivs []sim.Intervention
	for k := range 4 { // the two REQUESTs, then the two REPLYs
		ivs = append(ivs, sim.Intervention{Step: 1 + k, Action: sim.Action{Do: sim.ActDeliver, Msg: int64(k + 1), From: -1, To: -1}})
	}
	for _, step := range []int{1, 2, 3, 4, 5, 100} {
		var want, got []byte
		enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
		s, err := sim.Replay(cfg, ivs, step, enc.Lines(&want))
		if err != nil {
			t.Fatal(err)
		}
		r, err := replay(cfg, ivs, step, New(cfg.Spec, cfg.IDs, Options{}), enc.Lines(&got), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || r.Step != s.Steps() {
			t.Fatalf("step %d: replay differs from sim.Replay (steps %d/%d)\n%s\n---\n%s", step, r.Step, s.Steps(), got, want)
		}
		if step == 100 && (r.Entries != 1 || r.Get(PerEntry).Mean == nil || *r.Get(PerEntry).Mean != 4) {
			t.Errorf("the user's deliveries: %d entries, %+v", r.Entries, r.Get(PerEntry))
		}
	}
}

func TestDecodeTraceNamesTheBadLine(t *testing.T) {
	in := "{\"seq\":0,\"t\":0,\"type\":\"rule\",\"node\":0,\"rule\":\"RI1\"}\n{\"seq\":1,\"t\":0,\"type\":\"future-event\"}\nnot json\n"
	n := 0
	err := DecodeTrace(strings.NewReader(in), func(Event) { n++ })
	if err == nil || !strings.Contains(err.Error(), "line 3") || n != 1 {
		t.Fatalf("err %v after %d events; want an error naming line 3 after 1 event (unknown types skipped)", err, n)
	}
}

// ReplayWhile stops between steps when told to, with the result measured so far and
// sim.ErrStopped; told to go on, it is Replay.
func TestReplayWhileStopsBetweenSteps(t *testing.T) {
	cfg := config(t, "ricart-agrawala", 4, 7, [2]int{1, 3}, oneAtATime(0, 2)...)
	whole, err := Replay(cfg, nil, 60)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReplayWhile(cfg, nil, 60, func(s *sim.Sim) bool { return s.Steps() < 8 })
	if err != sim.ErrStopped || r.Step != 8 {
		t.Fatalf("stopped at step %d with %v, want step 8 and sim.ErrStopped", r.Step, err)
	}
	upTo8, err := Replay(cfg, nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	if r.Messages != upTo8.Messages || r.T != upTo8.T {
		t.Fatalf("stopped result %+v differs from a replay to step 8 %+v", r, upTo8)
	}
	if r, err := ReplayWhile(cfg, nil, 60, func(*sim.Sim) bool { return true }); err != nil || r.Step != whole.Step || r.Messages != whole.Messages {
		t.Fatalf("going on: step %d messages %d (%v), want Replay's %d %d", r.Step, r.Messages, err, whole.Step, whole.Messages)
	}
}

// A ring election goes round the live ring, the crashed processes bypassed: the notes'
// formulas count one message per process on it, so they are evaluated at n = the live
// processes, and the panel says which n. Bully's N-2 counts the crashed coordinator:
// its n stays every process. Each case crashes before the election and checks every
// election metric's figures against the run.
func TestElectionFiguresAfterACrashCountTheLiveRing(t *testing.T) {
	tests := []struct {
		name    string
		slug    string
		n       int
		crashed []int // indexes crashed at time 0
		starter int
		live    int    // the n the figures must be evaluated at
		of      string // how the panel names it
		cost    string // a notes' figure ...
		formula string // ... written so ...
		want    float64
	}{
		// 000's worst case 3n - 1, the starter just after the highest live id.
		{"chang-roberts, leader crashed, worst starter", "ring", 8, []int{7}, 0, 7, "n = 7 live processes", "worst case", "3n - 1", 20},
		{"chang-roberts, two crashed", "ring", 8, []int{7, 3}, 0, 6, "n = 6 live processes", "worst case", "3n - 1", 17},
		// ring-6-fails-3-starts: 6 of 6 crashed, 3 starts: 2N + 1 for N = 5 in its caption.
		{"chang-roberts, highest live starts", "ring", 8, []int{7}, 6, 7, "n = 7 live processes", "best case", "", 14},
		// 002's 2N for the ring that grows a list.
		{"ring-list, leader crashed", "ring-list", 6, []int{5}, 2, 5, "n = 5 live processes", "one initiator", "Requires 2N messages", 10},
		{"ring-list, two crashed", "ring-list", 8, []int{7, 1}, 3, 6, "n = 6 live processes", "one initiator", "Requires 2N messages", 12},
		// Bully: the note's n - 2 coordinator messages count every process.
		{"bully best, coordinator crashed", "bully", 8, []int{7}, 6, 8, "n = 8 processes", "best case", "n-2", 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var acts []sim.Action
			for _, c := range tc.crashed {
				acts = append(acts, sim.Action{At: 0, Do: sim.ActCrash, Node: c})
			}
			acts = append(acts, sim.Action{At: 1, Do: sim.ActElect, Node: tc.starter})
			cfg := config(t, tc.slug, tc.n, 1, [2]int{1, 3}, acts...)
			cfg.Until = 500
			r := measure(t, cfg)
			if len(r.Elections) != 1 || r.Elections[0].Settled == nil {
				t.Fatalf("elections %+v, want one that settles", r.Elections)
			}
			if got := r.Elections[0].Live; got != tc.n-len(tc.crashed) {
				t.Errorf("election's live = %d, want %d", got, tc.n-len(tc.crashed))
			}
			for _, key := range []string{ElectionMessages, ElectionTime} {
				m := r.Get(key)
				if m.TheoryN != tc.live || m.TheoryOf != tc.of {
					t.Errorf("%s: figures for %d (%q), want %d (%q)", key, m.TheoryN, m.TheoryOf, tc.live, tc.of)
				}
			}
			m := r.Get(ElectionMessages)
			found := false
			for _, th := range m.Theory {
				if !strings.Contains(th.Name, tc.cost) {
					continue
				}
				if tc.formula == "" { // the derived figure
					found = th.Value != nil && near(*th.Value, tc.want)
				}
				for _, f := range th.Notes {
					if strings.HasPrefix(f.Formula, tc.formula) && f.Value != nil && near(*f.Value, tc.want) {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("no figure %q %q worth %v: %+v", tc.cost, tc.formula, tc.want, m.Theory)
			}
			if tc.slug != "bully" {
				if got := mean(t, r, ElectionMessages); !near(got, tc.want) {
					t.Errorf("measured %v messages, want the figure's %v", got, tc.want)
				}
			}
		})
	}
}

// 003's exit delays, measured: from leaving the CS to the arrival of the last message
// sent on leaving. With a fixed delay every message takes exactly T: the RELEASE
// (central: "Exit: 1"), the deferred REPLYs sent at once (Ricart-Agrawala, where 003
// says "Exit: 1 (multicast) + 1"), the RELEASE to the voting set (Maekawa: "Exit: 1
// (multicast)"), the token to the successor (token ring: "Exit: 1").
func TestExitDelaysMeasured(t *testing.T) {
	const d = 2
	for _, tc := range []struct {
		slug  string
		notes float64 // 003's figure, in T
	}{
		{"central", 1}, {"ricart-agrawala", 2}, {"maekawa", 1}, {"token-ring", 1},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			// Two requests, the second while the first is served: someone waits on
			// every exit that must send something (Ricart-Agrawala's deferred REPLY).
			cfg := config(t, tc.slug, 4, 1, [2]int{d, d},
				sim.Action{At: 0, Do: sim.ActRequest, Node: 1}, sim.Action{At: 1, Do: sim.ActRequest, Node: 2})
			if tc.slug == "maekawa" {
				cfg = config(t, tc.slug, 4, 1, [2]int{d, d},
					sim.Action{At: 0, Do: sim.ActRequest, Node: 2}, sim.Action{At: 1, Do: sim.ActRequest, Node: 3})
			}
			cfg.Until = 200
			r := measure(t, cfg)
			m := r.Get(ExitDelay)
			if m == nil || m.Mean == nil || m.MeanT == nil {
				t.Fatalf("no exit delay measured: %+v", m)
			}
			if *m.MeanT != 1 {
				t.Errorf("exit delay %v T, want 1 T", *m.MeanT)
			}
			found := false
			for _, th := range m.Theory {
				for _, f := range th.Notes {
					if slices.Equal(f.In, []string{"003"}) && strings.HasPrefix(f.Formula, "Exit:") && f.Value != nil && *f.Value == tc.notes {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("003's exit figure %v not beside it: %+v", tc.notes, m.Theory)
			}
		})
	}
}
