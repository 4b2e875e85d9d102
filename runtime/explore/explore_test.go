package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

func load(t testing.TB, file string) *scenarios.Scenario {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return sc
}

func explore(t *testing.T, sc *scenarios.Scenario, opt Options) *Result {
	t.Helper()
	res, err := Explore(context.Background(), sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The pinned figures: states, transitions and depth are the semantics of the search
// (what a step is, which states are the same). A change in them is a change in
// semantics and must be explained in docs/explorer.md.
var cases = []struct {
	file        string
	result      string
	property    string
	states      int64
	transitions int64
	depth       int
	entryBound  int
	slow        bool // about 10 s: run with EXPLORE_SLOW=1
}{
	// Must find.
	{file: "maekawa-basic-3.json", result: ResultViolation, property: sim.PropDeadlock, states: 8, transitions: 10, depth: 6},
	{file: "lamport-non-fifo-3.json", result: ResultViolation, property: sim.PropMutex, states: 260, transitions: 435, depth: 7},
	{file: "bully-short-timeout-4.json", result: ResultViolation, property: sim.PropLeader, states: 28338, transitions: 110545, depth: 21},
	// Must prove.
	{file: "ricart-agrawala-3.json", result: ResultOK, states: 3074, transitions: 6487, depth: 18, entryBound: 14},
	{file: "ricart-agrawala-3-anytime.json", result: ResultOK, states: 36012, transitions: 76987, depth: 18, entryBound: 16},
	{file: "ricart-agrawala-3-twice.json", result: ResultOK, states: 4762039, transitions: 12956295, depth: 36, entryBound: 0, slow: true},
	{file: "ricart-agrawala-token-3.json", result: ResultOK, states: 160, transitions: 306, depth: 12, entryBound: 8},
	{file: "ricart-agrawala-token-3-anytime.json", result: ResultOK, states: 6753, transitions: 13454, depth: 15, entryBound: 13},
	{file: "ricart-agrawala-token-3-twice.json", result: ResultOK, states: 1091816, transitions: 2750843, depth: 27, entryBound: 0},
	{file: "suzuki-kasami-3.json", result: ResultOK, states: 98, transitions: 225, depth: 12, entryBound: 8},
	{file: "suzuki-kasami-3-anytime.json", result: ResultOK, states: 725, transitions: 2077, depth: 15, entryBound: 13},
	{file: "suzuki-kasami-3-twice.json", result: ResultOK, states: 13054, transitions: 51021, depth: 27, entryBound: 0},
	{file: "maekawa-deadlock-free-3.json", result: ResultOK, states: 32, transitions: 52, depth: 16, entryBound: 11},
	{file: "maekawa-deadlock-free-3-anytime.json", result: ResultOK, states: 457, transitions: 938, depth: 16, entryBound: 13},
	{file: "maekawa-deadlock-free-3-twice.json", result: ResultOK, states: 918, transitions: 2168, depth: 32, entryBound: 0},
	// Contrasts.
	{file: "lamport-fifo-3.json", result: ResultOK, states: 47212, transitions: 121791, depth: 24, entryBound: 18},
	{file: "bully-synchronous-4.json", result: ResultOK, states: 18849, transitions: 57358, depth: 31},
}

func TestExplorePinned(t *testing.T) {
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			if c.slow && os.Getenv("EXPLORE_SLOW") == "" {
				t.Skip("slow: set EXPLORE_SLOW=1")
			}
			res := explore(t, load(t, c.file), Options{NoReduce: true})
			if res.Result != c.result || res.Property != c.property {
				t.Fatalf("result %q property %q (%s), want %q %q", res.Result, res.Property, res.Message, c.result, c.property)
			}
			if res.States != c.states || res.Transitions != c.transitions || res.Depth != c.depth {
				t.Errorf("states %d transitions %d depth %d, want %d %d %d", res.States, res.Transitions, res.Depth, c.states, c.transitions, c.depth)
			}
			if c.entryBound != 0 && res.EntryBound != c.entryBound {
				t.Errorf("entry bound %d, want %d", res.EntryBound, c.entryBound)
			}
			if c.result == ResultOK && res.Counterexample != nil {
				t.Errorf("a counterexample for a property that holds")
			}
			if c.result == ResultViolation {
				checkReplays(t, res, c.property)
			}
		})
	}
}

// checkReplays runs the counterexample through the kernel, from its JSON, and from its
// link, and checks that the kernel's monitors report the property.
func checkReplays(t *testing.T, res *Result, property string) {
	t.Helper()
	cx := res.Counterexample
	if cx == nil {
		t.Fatal("no counterexample")
	}
	if !cx.Replayed {
		t.Errorf("the explorer says its counterexample did not replay")
	}
	if len(cx.Path) != res.Depth {
		t.Errorf("path of %d steps, depth %d", len(cx.Path), res.Depth)
	}
	doc, err := json.Marshal(cx.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		t.Fatalf("the counterexample is not a valid scenario: %v\n%s", err, doc)
	}
	if sc.Network == nil || !sc.Network.Hold {
		t.Errorf("the counterexample is not in hold mode")
	}
	events := replayTrace(t, sc)
	if !reported(events, property) {
		t.Fatalf("the kernel does not report %s on the counterexample:\n%s", property, doc)
	}
	// Every scheduled event applied: a skipped deliver would mean the ids are wrong.
	delivers := 0
	for _, e := range sc.Events {
		if e.Do == "deliver" {
			delivers++
		}
	}
	got := 0
	for _, ev := range events {
		// A message delivered to a crashed process is dropped on arrival.
		if ev.Type == sim.EvDeliver || (ev.Type == sim.EvDrop && ev.Reason != sim.ReasonUser) {
			got++
		}
	}
	if got < delivers {
		t.Errorf("%d deliver events but only %d deliveries: some did not apply", delivers, got)
	}

	// The link opens the same run, and the violation shows by its step.
	if !strings.HasPrefix(cx.Link, "/r/") {
		t.Fatalf("link %q", cx.Link)
	}
	l, err := scenarios.DecodeLink(strings.TrimPrefix(cx.Link, "/r/"))
	if err != nil {
		t.Fatalf("link: %v", err)
	}
	if l.Step != cx.Step || len(l.Scenario.Events) != len(sc.Events) {
		t.Fatalf("link step %d with %d events, want %d and %d", l.Step, len(l.Scenario.Events), cx.Step, len(sc.Events))
	}
	lcfg, ivs, err := l.Run()
	if err != nil {
		t.Fatal(err)
	}
	var rec2 sim.Recorder
	if _, err := sim.Replay(lcfg, ivs, l.Step, rec2.Sink()); err != nil {
		t.Fatal(err)
	}
	if !reported(rec2.Events, property) {
		t.Fatalf("replaying the link to step %d does not show %s", l.Step, property)
	}
}

func reported(evs []sim.Event, property string) bool {
	return slices.ContainsFunc(evs, func(ev sim.Event) bool {
		return ev.Type == sim.EvViolation && ev.Property == property
	})
}

func TestMaekawaDeadlockIsTheNotesExample(t *testing.T) {
	res := explore(t, load(t, "maekawa-basic-3.json"), Options{})
	if res.Detail != "wait-for cycle P1 -> P2 -> P3 -> P1" {
		t.Errorf("detail %q", res.Detail)
	}
	// All three ask (each votes for itself), then each REQUEST reaches the voter that
	// already voted: six steps, nothing else.
	want := []string{"P1 asks for the CS", "P2 asks for the CS", "P3 asks for the CS",
		"deliver REQUEST P1 -> P2 (ts 1)", "deliver REQUEST P2 -> P3 (ts 1)", "deliver REQUEST P3 -> P1 (ts 1)"}
	if got := res.Counterexample.Path; !slices.Equal(got, want) {
		t.Errorf("path %q\nwant %q", got, want)
	}
	var dos []string
	for _, e := range res.Counterexample.Scenario.Events {
		dos = append(dos, e.Do)
	}
	if !slices.Equal(dos, []string{"request", "request", "request", "deliver", "deliver", "deliver"}) {
		t.Errorf("events %v", dos)
	}
}

func TestLamportNeedsFIFO(t *testing.T) {
	broken := explore(t, load(t, "lamport-non-fifo-3.json"), Options{})
	fifo := explore(t, load(t, "lamport-fifo-3.json"), Options{})
	if broken.Property != sim.PropMutex || fifo.Result != ResultOK {
		t.Fatalf("non-FIFO: %s; FIFO: %s", broken.Message, fifo.Message)
	}
	// The break needs a message to overtake another on one channel: a REPLY from P0
	// reaches P1 although P0's older REQUEST to P1 is still in flight.
	path := strings.Join(broken.Counterexample.Path, "; ")
	if !strings.Contains(path, "deliver REPLY P0 -> P1") || strings.Contains(path, "deliver REQUEST P0 -> P1") {
		t.Errorf("path %s", path)
	}
}

func TestBullyNeedsTimeoutsLongerThanARoundTrip(t *testing.T) {
	short := explore(t, load(t, "bully-short-timeout-4.json"), Options{})
	sync := explore(t, load(t, "bully-synchronous-4.json"), Options{})
	if short.Property != sim.PropLeader || !short.Timed || sync.Result != ResultOK {
		t.Fatalf("short: %s; synchronous: %s", short.Message, sync.Message)
	}
	// The time-outs are in the counterexample as fire events.
	fires := 0
	for _, e := range short.Counterexample.Scenario.Events {
		if e.Do == "fire" {
			fires++
			if e.Name != "answer" || e.Node == nil {
				t.Errorf("fire event %+v", e)
			}
		}
	}
	if fires == 0 {
		t.Errorf("no fire event in %+v", short.Counterexample.Scenario.Events)
	}
}

// Without time, any armed timer may fire at any moment, so even well-sized time-outs
// elect two leaders: Bully's safety rests on timing, which is why the search keeps
// time for algorithms that set timers.
func TestUntimedBullyLosesItsSynchrony(t *testing.T) {
	res := explore(t, load(t, "bully-synchronous-4.json"), Options{Time: TimeOff})
	if res.Timed || res.Property != sim.PropLeader {
		t.Fatalf("%s", res.Message)
	}
	checkReplays(t, res, sim.PropLeader)
}

func TestTimedSearchOfAnUntimedAlgorithm(t *testing.T) {
	res := explore(t, load(t, "ricart-agrawala-3.json"), Options{Time: TimeOn, NoReduce: true})
	if !res.Timed || res.Result != ResultOK || res.States != 7520 {
		t.Fatalf("timed %v, %s", res.Timed, res.Message)
	}
}

// Events at time 0 run before any message arrives (as in the kernel); later ones may
// happen at any moment, so they give more states.
func TestEventsAfterTimeZeroFloat(t *testing.T) {
	start := explore(t, load(t, "ricart-agrawala-3.json"), Options{NoReduce: true})
	anytime := explore(t, load(t, "ricart-agrawala-3-anytime.json"), Options{NoReduce: true})
	if start.States >= anytime.States {
		t.Fatalf("%d states with requests at the start, %d with requests at any time", start.States, anytime.States)
	}
}

// Every bound stops the search, with one worker or several (whose goroutines the
// search waits for before it answers); "midway" cancels from the progress report,
// while the workers are expanding.
func TestBoundsAreNotOK(t *testing.T) {
	sc := load(t, "ricart-agrawala-3-anytime.json")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	past, stop := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer stop()
	for _, workers := range []int{1, 4} {
		midway, cancelMidway := context.WithCancel(context.Background())
		defer cancelMidway()
		for _, c := range []struct {
			name  string
			ctx   context.Context
			opt   Options
			bound string
		}{
			{"states", context.Background(), Options{MaxStates: 2000}, BoundStates},
			{"memory", context.Background(), Options{MaxMemory: 1}, BoundMemory},
			{"timeout", past, Options{}, BoundTime},
			{"cancelled", cancelled, Options{}, BoundCancelled},
			{"midway", midway, Options{NoReduce: true, ProgressEvery: time.Nanosecond, Progress: func(Progress) { cancelMidway() }}, BoundCancelled},
		} {
			t.Run(fmt.Sprintf("%s/workers=%d", c.name, workers), func(t *testing.T) {
				c.opt.Workers, c.opt.Go = workers, goroutine
				res, err := Explore(c.ctx, sc, c.opt)
				if err != nil {
					t.Fatal(err)
				}
				if res.Result != ResultBounded || res.Bound != c.bound || !strings.Contains(res.Message, "bounded") {
					t.Fatalf("%s %s: %s", res.Result, res.Bound, res.Message)
				}
			})
		}
	}
}

func TestInputErrorsNameTheField(t *testing.T) {
	big, err := scenarios.Parse([]byte(`{"version":2,"algorithm":"ricart-agrawala","nodes":13}`))
	if err != nil {
		t.Fatal(err)
	}
	net, err := scenarios.Parse([]byte(`{"version":2,"algorithm":"ricart-agrawala","nodes":3,"events":[{"at":1,"do":"request","node":0},{"at":2,"do":"network","fifo":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sc    *scenarios.Scenario
		field string
	}{{big, "nodes"}, {net, "events[1].do"}} {
		_, err := Explore(context.Background(), c.sc, Options{})
		var ie *InputError
		if !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("error %v, want one naming %s", err, c.field)
		}
	}
}

// Two deliveries to different processes commute: both orders reach one state.
func TestStatesAreCanonical(t *testing.T) {
	cfg, err := load(t, "ricart-agrawala-3.json").Config()
	if err != nil {
		t.Fatal(err)
	}
	x, err := newSearch(cfg, false, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	s0 := newState(x.m)
	x.initial(s0, nil)
	trs := x.enumerate(s0, nil)
	var a, b int = -1, -1
	for i, t1 := range trs {
		for j, t2 := range trs {
			m1, m2 := x.it.message(s0.msgs[t1.a].msg).m, x.it.message(s0.msgs[t2.a].msg).m
			if a < 0 && t1.kind == tDeliver && t2.kind == tDeliver && m1.To != m2.To {
				a, b = i, j
			}
		}
	}
	if a < 0 {
		t.Fatal("no two deliveries to different processes")
	}
	order := func(first, second int) string {
		s := newState(x.m)
		s.copyFrom(s0)
		m2 := x.it.message(s0.msgs[trs[second].a].msg)
		x.apply(s, trs[first])
		// Find the second message again: indexes move as messages come and go.
		for _, t2 := range x.enumerate(s, nil) {
			if t2.kind == tDeliver && x.it.message(s.msgs[t2.a].msg).desc == m2.desc {
				x.apply(s, t2)
				return string(x.m.encode(nil, s))
			}
		}
		t.Fatal("second delivery not enabled")
		return ""
	}
	if order(a, b) != order(b, a) {
		t.Fatal("the two orders give different keys")
	}
}

// Every stored key decodes into a state that encodes back to the same key.
func TestKeysRoundTrip(t *testing.T) {
	for _, file := range []string{"bully-synchronous-4.json", "maekawa-deadlock-free-3-anytime.json", "suzuki-kasami-3-twice.json"} {
		cfg, err := load(t, file).Config()
		if err != nil {
			t.Fatal(err)
		}
		x, err := newSearch(cfg, file[:5] == "bully", &Options{MaxStates: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x.run(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := newState(x.m)
		seen := map[string]int{}
		for k := 0; k < x.st.count; k++ {
			if err := x.load(k, s); err != nil {
				t.Fatalf("%s: state %d: %v", file, k, err)
			}
			key := string(x.m.encode(nil, s))
			if j, ok := seen[key]; ok {
				t.Fatalf("%s: states %d and %d are the same state", file, j, k)
			}
			seen[key] = k
			if got, ok := x.find(s); !ok || int(got) != k {
				t.Fatalf("%s: state %d does not round-trip (found %d, %v)", file, k, got, ok)
			}
			var flat state
			if err := x.m.decode([]byte(key), &flat); err != nil {
				t.Fatalf("%s: state %d: %v", file, k, err)
			}
			if got := x.m.encode(nil, &flat); string(got) != key {
				t.Fatalf("%s: state %d's key does not round-trip", file, k)
			}
		}
	}
}

// The fire event the counterexamples use is part of the scenario format: it needs a
// node and the timer's name, and only fire takes a name.
func TestFireEventInScenarios(t *testing.T) {
	ok := `{"version":2,"algorithm":"bully","nodes":3,"network":{"hold":true},"events":[{"at":0,"do":"elect","node":0},{"at":0,"do":"fire","node":0,"name":"answer"}]}`
	sc, err := scenarios.Parse([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Actions[1]; a.Do != sim.ActFire || a.Node != 0 || a.Timer != "answer" {
		t.Fatalf("action %+v", a)
	}
	for doc, field := range map[string]string{
		`{"version":2,"algorithm":"bully","nodes":3,"events":[{"at":0,"do":"fire","node":0}]}`:             `events[0].name`,
		`{"version":2,"algorithm":"bully","nodes":3,"events":[{"at":0,"do":"elect","node":0,"name":"x"}]}`: `events[0].name`,
		`{"version":2,"algorithm":"bully","nodes":3,"events":[{"at":0,"do":"fire","name":"answer"}]}`:      `events[0].node`,
	} {
		_, err := scenarios.Parse([]byte(doc))
		var se *scenarios.Error
		if !errors.As(err, &se) || se.Field != field {
			t.Errorf("%s: %v, want an error naming %s", doc, err, field)
		}
	}
}

// Every algorithm of the catalogue explores (N=3, the default workload, with and
// without FIFO), and whatever the search finds, the kernel confirms on replay.
func TestEveryAlgorithmExplores(t *testing.T) {
	for _, spec := range algorithms.All() {
		for _, fifo := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fifo=%v", spec.Slug, fifo), func(t *testing.T) {
				doc := fmt.Sprintf(`{"version":2,"algorithm":%q,"nodes":3,"network":{"delay":[1,2],"fifo":%v}}`, spec.Slug, fifo)
				sc, err := scenarios.Parse([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				sc, _, err = DefaultWorkload(sc)
				if err != nil {
					t.Fatal(err)
				}
				res := explore(t, sc, Options{MaxStates: 300_000})
				t.Logf("%s: %s", res.Result, res.Message)
				if res.Result == ResultViolation {
					kernel := res.Property
					if res.Counterexample.Scenario.Monitors != nil && res.Property != sim.PropMutex && res.Property != sim.PropLeader {
						kernel = sim.PropPending // a lasso
					}
					checkReplays(t, res, kernel)
				}
			})
		}
	}
}

// Faults are explored too, and their counterexamples replay: a crash, a message lost
// by the network, a drop event, a partition. Ricart-Agrawala tolerates none of them:
// a process waits for a reply that never comes.
func TestFaultCounterexamplesReplay(t *testing.T) {
	const base = `{"version":2,"algorithm":"ricart-agrawala","nodes":3,"network":{"delay":[1,2],"fifo":false%s},"cs":1,"events":[
		{"at":0,"do":"request","node":0},{"at":0,"do":"request","node":1}%s]}`
	for _, c := range []struct {
		name, network, events, do string
	}{
		{"crash", "", `,{"at":1,"do":"crash","node":2}`, "crash"},
		{"loss", `,"loss":0.1`, "", "drop"},
		{"drop", "", `,{"at":1,"do":"drop","type":"REPLY","from":2}`, "drop"},
		{"partition", "", `,{"at":1,"do":"partition","groups":[[0,1],[2]]},{"at":2,"do":"heal"}`, "partition"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenarios.Parse([]byte(fmt.Sprintf(base, c.network, c.events)))
			if err != nil {
				t.Fatal(err)
			}
			res := explore(t, sc, Options{})
			if res.Property != sim.PropDeadlock {
				t.Fatalf("%s", res.Message)
			}
			checkReplays(t, res, sim.PropDeadlock)
			if !slices.ContainsFunc(res.Counterexample.Scenario.Events, func(e scenarios.Event) bool { return e.Do == c.do }) {
				t.Errorf("no %s event in the counterexample: %v", c.do, res.Counterexample.Path)
			}
		})
	}
}

// 003 says Bully requires "ordering of messages". This model cannot show that on its
// own: delays are bounded and the time-outs are longer than a round trip, so two
// messages between the same two processes are sent a time-out apart and cannot cross.
// Every interleaving of two callers on channels that are not FIFO elects one leader;
// where agreement does break (an id that reappears, 003's other condition), it breaks
// the same way with FIFO channels and without.
func TestBullyOrderingOfMessagesChangesNothingHere(t *testing.T) {
	if res := explore(t, load(t, "bully-non-fifo-two-callers-4.json"), Options{}); res.Result != ResultOK {
		t.Fatalf("non-FIFO channels: %s", res.Message)
	}
	sc := load(t, "bully-id-reappears-4.json")
	fifo := explore(t, sc, Options{})
	off := false
	sc.Network.FIFO = &off
	nonFIFO := explore(t, sc, Options{})
	if fifo.Property != sim.PropLeader || nonFIFO.Property != sim.PropLeader || fifo.Depth != nonFIFO.Depth {
		t.Fatalf("an id that reappears: FIFO %s; not FIFO %s", fifo.Message, nonFIFO.Message)
	}
}
