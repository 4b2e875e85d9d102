package sim_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// ---------------------------------------------------------------------------------
// Helpers

func cfgOf(spec *sim.Spec, ids []int, p *params, delay int) sim.Config {
	return sim.Config{Spec: spec, IDs: ids, Params: p, Seed: 1,
		Network: sim.Network{DelayMin: delay, DelayMax: delay}}
}

func req(at, node int) sim.Action   { return sim.Action{At: at, Do: sim.ActRequest, Node: node} }
func rel(at, node int) sim.Action   { return sim.Action{At: at, Do: sim.ActRelease, Node: node} }
func crash(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActCrash, Node: node} }
func recov(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActRecover, Node: node} }
func elect(at, node int) sim.Action { return sim.Action{At: at, Do: sim.ActElect, Node: node} }
func heal(at int) sim.Action        { return sim.Action{At: at, Do: sim.ActHeal} }
func part(at int, groups ...[]int) sim.Action {
	return sim.Action{At: at, Do: sim.ActPartition, Groups: groups}
}

// dropWhere is a drop filter (Msg 0); -1 means any node.
func dropWhere(at, from, to int, typ string) sim.Action {
	return sim.Action{At: at, Do: sim.ActDrop, From: from, To: to, Type: typ}
}

// harness drives a run step by step, recording events and counting steps.
type harness struct {
	t     *testing.T
	seed  uint64
	s     *sim.Sim
	rec   sim.Recorder
	steps int
}

func start(t *testing.T, cfg sim.Config) *harness {
	t.Helper()
	h := &harness{t: t, seed: cfg.Seed}
	s, err := sim.New(cfg, h.rec.Sink())
	if err != nil {
		t.Fatalf("seed %d: New: %v", cfg.Seed, err)
	}
	h.s = s
	return h
}

// stepAll steps until the run has nothing left to do before Until.
func (h *harness) stepAll() {
	h.t.Helper()
	for {
		ok, err := h.s.Step()
		if err != nil {
			h.t.Fatalf("seed %d: step %d: %v", h.seed, h.steps, err)
		}
		if !ok {
			return
		}
		h.steps++
	}
}

// finish steps to the end, then lets Run observe the run until Until and emit the end
// event, as `playground run` does.
func (h *harness) finish() []sim.Event {
	h.t.Helper()
	h.stepAll()
	if err := h.s.Run(); err != nil {
		h.t.Fatalf("seed %d: Run: %v", h.seed, err)
	}
	return h.rec.Events
}

func (h *harness) apply(a sim.Action) {
	h.t.Helper()
	if err := h.s.Apply(a); err != nil {
		h.t.Fatalf("seed %d: Apply(%s): %v", h.seed, a.Do, err)
	}
}

// refused checks that Apply rejects a with an *ActionError of the right kind.
func (h *harness) refused(a sim.Action) {
	h.t.Helper()
	before := len(h.rec.Events)
	err := h.s.Apply(a)
	var ae *sim.ActionError
	if !errors.As(err, &ae) {
		h.t.Fatalf("seed %d: Apply(%s node %d) = %v, want *sim.ActionError", h.seed, a.Do, a.Node, err)
	}
	if ae.Action != a.Do {
		h.t.Errorf("seed %d: ActionError.Action = %s, want %s", h.seed, ae.Action, a.Do)
	}
	if len(h.rec.Events) != before {
		h.t.Errorf("seed %d: a refused %s emitted %v", h.seed, a.Do, shows(h.rec.Events[before:]))
	}
}

func runEvents(t *testing.T, cfg sim.Config) []sim.Event {
	t.Helper()
	return start(t, cfg).finish()
}

// show writes an event compactly with node indexes (the trace's ids are tested apart).
func show(ev *sim.Event) string {
	m := &ev.Msg
	switch ev.Type {
	case sim.EvSend, sim.EvDeliver:
		return fmt.Sprintf("t%d %s #%d %s %d>%d", ev.T, ev.Type, m.ID, m.Type, m.From, m.To)
	case sim.EvDrop:
		return fmt.Sprintf("t%d drop #%d %s %d>%d at n%d: %s", ev.T, m.ID, m.Type, m.From, m.To, ev.Node, ev.Reason)
	case sim.EvRule:
		return fmt.Sprintf("t%d rule n%d %s", ev.T, ev.Node, ev.Rule)
	case sim.EvLeader:
		return fmt.Sprintf("t%d leader n%d =%d", ev.T, ev.Node, ev.Leader)
	case sim.EvTimer:
		return fmt.Sprintf("t%d timer n%d %s", ev.T, ev.Node, ev.Name)
	case sim.EvViolation:
		return fmt.Sprintf("t%d violation %s: %s", ev.T, ev.Property, ev.Detail)
	case sim.EvPartition:
		return fmt.Sprintf("t%d partition %v", ev.T, ev.Groups)
	case sim.EvHeal:
		return fmt.Sprintf("t%d heal", ev.T)
	case sim.EvEnd:
		x := ev.Totals
		return fmt.Sprintf("t%d end msgs=%d delivered=%d dropped=%d entries=%d elections=%d violations=%d steps=%d",
			ev.T, x.Messages, x.Delivered, x.Dropped, x.Entries, x.Elections, x.Violations, x.Steps)
	}
	return fmt.Sprintf("t%d %s n%d", ev.T, ev.Type, ev.Node)
}

func shows(evs []sim.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		out[i] = show(&evs[i])
	}
	return out
}

// checkEvents compares the whole run with want, and checks seq and time order.
func checkEvents(t *testing.T, seed uint64, evs []sim.Event, want []string) {
	t.Helper()
	checkSeq(t, seed, evs)
	got := shows(evs)
	if slices.Equal(got, want) {
		return
	}
	k := 0
	for k < len(got) && k < len(want) && got[k] == want[k] {
		k++
	}
	t.Errorf("seed %d: events differ from index %d\n got:\n\t%s\nwant:\n\t%s", seed, k,
		strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}

// checkSeq: seq runs 0, 1, 2 ... and virtual time never goes back.
func checkSeq(t *testing.T, seed uint64, evs []sim.Event) {
	t.Helper()
	for k := range evs {
		if evs[k].Seq != int64(k) {
			t.Fatalf("seed %d: event %d has seq %d", seed, k, evs[k].Seq)
		}
		if k > 0 && evs[k].T < evs[k-1].T {
			t.Fatalf("seed %d: time goes back at event %d: %s after %s", seed, k, show(&evs[k]), show(&evs[k-1]))
		}
	}
}

func ofType(evs []sim.Event, types ...sim.EventType) []sim.Event {
	var out []sim.Event
	for _, e := range evs {
		if slices.Contains(types, e.Type) {
			out = append(out, e)
		}
	}
	return out
}

func violations(evs []sim.Event) []string { return simtest.Violations(evs) }

// trace runs cfg and returns its JSON lines.
func trace(t *testing.T, cfg sim.Config) []byte {
	t.Helper()
	return simtest.Trace(t, cfg)
}

// ---------------------------------------------------------------------------------
// 1. Ordering

// Two requests: the one at t=2 was scheduled (at New) before the PINGs that arrive at
// t=2, so it runs first; the four messages arriving at t=4 keep their scheduling order.
func TestOrder_EqualTimesKeepSchedulingOrder(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 2, Peer: []int{1, -1, 1}}, 2)
	cfg.CS = 1
	cfg.Actions = []sim.Action{req(0, 0), req(2, 2)}
	evs := runEvents(t, cfg)
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 send #1 PING 0>1",
		"t0 send #2 PING 0>1",
		"t2 request n2",
		"t2 rule n2 PA1",
		"t2 send #3 PING 2>1",
		"t2 send #4 PING 2>1",
		"t2 deliver #1 PING 0>1",
		"t2 rule n1 PH1",
		"t2 send #5 PONG 1>0",
		"t2 deliver #2 PING 0>1",
		"t2 rule n1 PH1",
		"t2 send #6 PONG 1>0",
		"t4 deliver #3 PING 2>1",
		"t4 rule n1 PH1",
		"t4 send #7 PONG 1>2",
		"t4 deliver #4 PING 2>1",
		"t4 rule n1 PH1",
		"t4 send #8 PONG 1>2",
		"t4 deliver #5 PONG 1>0",
		"t4 rule n0 PH2",
		"t4 deliver #6 PONG 1>0",
		"t4 rule n0 PH2",
		"t4 rule n0 PE1",
		"t4 enter n0",
		"t5 rule n0 PR1",
		"t5 exit n0",
		"t6 deliver #7 PONG 1>2",
		"t6 rule n2 PH2",
		"t6 deliver #8 PONG 1>2",
		"t6 rule n2 PH2",
		"t6 rule n2 PE1",
		"t6 enter n2",
		"t7 rule n2 PR1",
		"t7 exit n2",
		"t7 end msgs=8 delivered=8 dropped=0 entries=2 elections=0 violations=0 steps=12",
	})
}

// busyCfg is a run with concurrent traffic, crashes and random delays; the workload is
// the same for every seed, so only the network's draws differ between seeds.
func busyCfg(seed uint64) sim.Config {
	return sim.Config{
		Spec: &pingSpec, IDs: []int{10, 20, 30, 40}, Params: &params{Burst: 2}, Seed: seed,
		Network: sim.Network{DelayMin: 1, DelayMax: 6},
		CS:      2,
		Until:   300,
		Actions: []sim.Action{req(0, 0), req(1, 1), req(1, 2), req(2, 3), req(10, 0), req(12, 2),
			req(20, 1), crash(15, 3), recov(30, 3), req(31, 3), req(40, 0), req(41, 1), req(41, 2)},
	}
}

// In the JSON trace seq counts 0, 1, 2 ... and message ids 1, 2, 3 ... in send order.
func TestOrder_SeqAndMessageIDsAreDense(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		cfg := busyCfg(seed)
		lines := bytes.Split(bytes.TrimSuffix(trace(t, cfg), []byte("\n")), []byte("\n"))
		nextID := int64(1)
		for k, line := range lines {
			var ev struct {
				Seq  int64
				Type string
				Msg  struct{ ID int64 }
			}
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("seed %d: line %d: %v: %s", seed, k, err, line)
			}
			if ev.Seq != int64(k) {
				t.Fatalf("seed %d: line %d has seq %d", seed, k, ev.Seq)
			}
			if ev.Type == "send" {
				if ev.Msg.ID != nextID {
					t.Fatalf("seed %d: line %d sends message %d, want %d", seed, k, ev.Msg.ID, nextID)
				}
				nextID++
			}
		}
		if nextID < 10 {
			t.Fatalf("seed %d: only %d messages; the run is too quiet to test anything", seed, nextID-1)
		}
	}
}

// ---------------------------------------------------------------------------------
// 2. Determinism

func TestDeterminism_SameSeedSameBytes(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		cfg := busyCfg(seed)
		cfg.Network.Loss = 0.1
		a, b := trace(t, cfg), trace(t, cfg)
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two runs of one config differ", seed)
		}
		// The recorder sees the same run as the encoder.
		var viaRec []byte
		enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
		for _, ev := range runEvents(t, cfg) {
			viaRec = enc.AppendLine(viaRec, &ev)
		}
		if !bytes.Equal(a, viaRec) {
			t.Fatalf("seed %d: recorded events encode to a different trace", seed)
		}
	}
}

// interleaving is the order of what happened, without the times.
func interleaving(evs []sim.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s/%d/%d ", e.Type, e.Node, e.Msg.ID)
	}
	return b.String()
}

func TestDeterminism_SeedsChangeTheInterleaving(t *testing.T) {
	base := interleaving(runEvents(t, busyCfg(1)))
	differ, total := 0, 0
	for seed := uint64(2); seed <= 12; seed++ {
		total++
		if interleaving(runEvents(t, busyCfg(seed))) != base {
			differ++
		}
	}
	if differ < total-2 {
		t.Fatalf("only %d of %d seeds change the interleaving of seed 1", differ, total)
	}
}

// ---------------------------------------------------------------------------------
// 3. Delay

// sendTimes maps message id -> send time.
func sendTimes(evs []sim.Event) map[int64]int {
	m := map[int64]int{}
	for _, e := range evs {
		if e.Type == sim.EvSend {
			m[e.Msg.ID] = e.T
		}
	}
	return m
}

func TestDelay_FixedArrivesExactlyAfterD(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 3}, 7)
	cfg.Actions = []sim.Action{req(3, 0)}
	evs := runEvents(t, cfg)
	var got []string
	for _, e := range ofType(evs, sim.EvSend, sim.EvDeliver) {
		got = append(got, show(&e))
	}
	want := []string{
		"t3 send #1 PING 0>1", "t3 send #2 PING 0>1", "t3 send #3 PING 0>1",
		"t10 deliver #1 PING 0>1", "t10 send #4 PONG 1>0",
		"t10 deliver #2 PING 0>1", "t10 send #5 PONG 1>0",
		"t10 deliver #3 PING 0>1", "t10 send #6 PONG 1>0",
		"t17 deliver #4 PONG 1>0", "t17 deliver #5 PONG 1>0", "t17 deliver #6 PONG 1>0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("seed %d: got\n\t%s\nwant\n\t%s", cfg.Seed, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

func TestDelay_UniformStaysInRangeAndReachesBothEnds(t *testing.T) {
	const lo, hi = 2, 6
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 300}, 0)
	cfg.Seed = 11
	cfg.Network = sim.Network{DelayMin: lo, DelayMax: hi}
	cfg.Actions = []sim.Action{req(0, 0)}
	evs := runEvents(t, cfg)
	sent := sendTimes(evs)
	seen := map[int]int{}
	for _, e := range ofType(evs, sim.EvDeliver) {
		d := e.T - sent[e.Msg.ID]
		if d < lo || d > hi {
			t.Fatalf("seed %d: message %d took %d, outside [%d, %d]", cfg.Seed, e.Msg.ID, d, lo, hi)
		}
		seen[d]++
	}
	if got := len(ofType(evs, sim.EvDeliver)); got != 600 {
		t.Fatalf("seed %d: %d deliveries, want 600", cfg.Seed, got)
	}
	for d := lo; d <= hi; d++ {
		if seen[d] == 0 {
			t.Errorf("seed %d: no message took %d (counts %v)", cfg.Seed, d, seen)
		}
	}
}

// ---------------------------------------------------------------------------------
// 4. FIFO

// reordered reports the first channel whose deliveries do not follow the send order.
func reordered(evs []sim.Event) string {
	type ch struct{ from, to int }
	sent := map[ch][]int64{}
	got := map[ch][]int64{}
	for _, e := range evs {
		c := ch{e.Msg.From, e.Msg.To}
		switch e.Type {
		case sim.EvSend:
			sent[c] = append(sent[c], e.Msg.ID)
		case sim.EvDeliver:
			got[c] = append(got[c], e.Msg.ID)
		}
	}
	keys := slices.SortedFunc(maps.Keys(got), func(a, b ch) int {
		if a.from != b.from {
			return a.from - b.from
		}
		return a.to - b.to
	})
	for _, c := range keys {
		if !slices.Equal(sent[c], got[c]) {
			return fmt.Sprintf("%d>%d sent %v delivered %v", c.from, c.to, sent[c], got[c])
		}
	}
	return ""
}

func fifoCfg(seed uint64, fifo bool) sim.Config {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 20, Peer: []int{1, 2, 0}}, 0)
	cfg.Seed = seed
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 10, FIFO: fifo}
	cfg.Actions = []sim.Action{req(0, 0), req(1, 1), req(3, 2)}
	return cfg
}

func TestFIFO_ChannelsDeliverInSendOrder(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		evs := runEvents(t, fifoCfg(seed, true))
		if n := len(ofType(evs, sim.EvDeliver)); n != 120 {
			t.Fatalf("seed %d: %d deliveries, want 120", seed, n)
		}
		if r := reordered(evs); r != "" {
			t.Fatalf("seed %d: FIFO channel reordered: %s", seed, r)
		}
	}
}

func TestFIFO_OffReordersForSomeSeed(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		if reordered(runEvents(t, fifoCfg(seed, false))) != "" {
			return
		}
	}
	t.Fatal("no seed in 1..20 reordered a non-FIFO channel")
}

// ---------------------------------------------------------------------------------
// 5. Loss

func TestLoss_OneDropsEverything(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 3}, 1)
	cfg.Network.Loss = 1
	cfg.Actions = []sim.Action{req(0, 0)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 send #1 PING 0>1",
		"t0 drop #1 PING 0>1 at n0: lost",
		"t0 send #2 PING 0>1",
		"t0 drop #2 PING 0>1 at n0: lost",
		"t0 send #3 PING 0>1",
		"t0 drop #3 PING 0>1 at n0: lost",
		"t0 violation deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS",
		"t0 end msgs=3 delivered=0 dropped=3 entries=0 elections=0 violations=1 steps=1",
	})
	if sim.ReasonLost != "lost" {
		t.Fatalf("ReasonLost = %q", sim.ReasonLost)
	}
}

func TestLoss_FractionIsRoughlyTheProbability(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 1000}, 0)
	cfg.Seed = 3
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 3, Loss: 0.3}
	cfg.Actions = []sim.Action{req(0, 0)}
	evs := runEvents(t, cfg)
	sends := len(ofType(evs, sim.EvSend))
	lost := 0
	for _, e := range ofType(evs, sim.EvDrop) {
		if e.Reason != sim.ReasonLost {
			t.Fatalf("seed %d: drop for %q", cfg.Seed, e.Reason)
		}
		lost++
	}
	if delivered := len(ofType(evs, sim.EvDeliver)); delivered+lost != sends {
		t.Fatalf("seed %d: %d sent, %d delivered, %d lost", cfg.Seed, sends, delivered, lost)
	}
	if f := float64(lost) / float64(sends); f < 0.25 || f > 0.35 {
		t.Fatalf("seed %d: lost %d of %d (%.3f), want about 0.3", cfg.Seed, lost, sends, f)
	}
}

// ---------------------------------------------------------------------------------
// 6. Partitions

// n0's PING is in flight when the partition cuts it off (dropped on arrival); n2's is
// sent across it (dropped at once); after the heal n1 and n2 talk again.
func TestPartition_DropsAtSendAndOnArrivalAndHeals(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Peer: []int{1, 2, 1}}, 5)
	cfg.CS = 1
	cfg.Actions = []sim.Action{req(0, 0), part(2, []int{0, 2}, []int{1}), req(3, 2), heal(6), req(7, 1)}
	evs := runEvents(t, cfg)
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 send #1 PING 0>1",
		"t2 partition [[10 30] [20]]",
		"t3 request n2",
		"t3 rule n2 PA1",
		"t3 send #2 PING 2>1",
		"t3 drop #2 PING 2>1 at n2: partition",
		"t5 drop #1 PING 0>1 at n1: partition",
		"t6 heal",
		"t7 request n1",
		"t7 rule n1 PA1",
		"t7 send #3 PING 1>2",
		"t12 deliver #3 PING 1>2",
		"t12 rule n2 PH1",
		"t12 send #4 PONG 2>1",
		"t17 deliver #4 PONG 2>1",
		"t17 rule n1 PH2",
		"t17 rule n1 PE1",
		"t17 enter n1",
		"t18 rule n1 PR1",
		"t18 exit n1",
		"t18 violation deadlock: nothing is in flight and no timer is armed, yet P10, P30 still wait for the CS",
		"t18 end msgs=4 delivered=2 dropped=2 entries=1 elections=0 violations=1 steps=9",
	})
	if sim.ReasonPartition != "partition" {
		t.Fatalf("ReasonPartition = %q", sim.ReasonPartition)
	}
}

// Nodes left out of every group form one more group together.
func TestPartition_UnlistedNodesShareAGroup(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Peer: []int{2, 0, 0}}, 1)
	h := start(t, cfg)
	h.apply(sim.Action{Do: sim.ActPartition, Groups: [][]int{{1}}})
	if g := h.s.Snapshot().Groups; g[0] != g[2] || g[0] == g[1] {
		t.Fatalf("groups %v: want n0 and n2 together, n1 apart", g)
	}
	h.apply(req(0, 0)) // n0 pings n2: same group
	h.apply(req(0, 1)) // n1 pings n0: across
	evs := h.finish()
	var got []string
	for _, e := range ofType(evs, sim.EvDeliver, sim.EvDrop) {
		got = append(got, show(&e))
	}
	want := []string{
		"t0 drop #2 PING 1>0 at n1: partition",
		"t1 deliver #1 PING 0>2",
		"t2 deliver #3 PONG 2>0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// ---------------------------------------------------------------------------------
// 7. Hold mode

func TestHold_UserChoosesDeliveryOrder(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3}, 1)
	cfg.Network.Hold = true
	h := start(t, cfg)
	h.apply(req(0, 0))
	inFlight := func() []string {
		var out []string
		for _, f := range h.s.InFlight() {
			out = append(out, fmt.Sprintf("#%d@%d", f.Msg.ID, f.At))
		}
		return out
	}
	if got, want := inFlight(), []string{"#1@-1", "#2@-1", "#3@-1"}; !slices.Equal(got, want) {
		t.Fatalf("in flight %v, want %v", got, want)
	}
	if h.s.HasNext() {
		t.Fatal("HasNext with only held messages: nothing should move without an ActDeliver")
	}
	if ok, err := h.s.Step(); ok || err != nil {
		t.Fatalf("Step = %v, %v; want false, nil", ok, err)
	}
	h.apply(sim.Action{Do: sim.ActDeliver, Msg: 3})
	h.apply(sim.Action{Do: sim.ActDeliver, Msg: 1})
	h.apply(sim.Action{Do: sim.ActDrop, Msg: 2})
	if got, want := inFlight(), []string{"#4@-1", "#5@-1"}; !slices.Equal(got, want) {
		t.Fatalf("in flight %v, want %v", got, want)
	}
	h.refused(sim.Action{Do: sim.ActDeliver, Msg: 2})  // dropped
	h.refused(sim.Action{Do: sim.ActDeliver, Msg: 99}) // never sent
	h.apply(sim.Action{Do: sim.ActDeliver, Msg: 5})
	h.apply(sim.Action{Do: sim.ActDeliver, Msg: 4})
	checkEvents(t, cfg.Seed, h.rec.Events, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 send #1 PING 0>1",
		"t0 send #2 PING 0>1",
		"t0 send #3 PING 0>1",
		"t0 deliver #3 PING 0>1",
		"t0 rule n1 PH1",
		"t0 send #4 PONG 1>0",
		"t0 deliver #1 PING 0>1",
		"t0 rule n1 PH1",
		"t0 send #5 PONG 1>0",
		"t0 drop #2 PING 0>1 at n1: dropped by the user",
		"t0 deliver #5 PONG 1>0",
		"t0 rule n0 PH2",
		"t0 deliver #4 PONG 1>0",
		"t0 rule n0 PH2",
		// Nothing held any more and n0 still lacks the PONG of the dropped #2.
		"t0 violation deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS",
	})
	if got := string(h.s.Snapshot().Nodes[1].State); !strings.Contains(got, `"got":[3,1]`) {
		t.Fatalf("n1 state %s: want got [3,1], the chosen order", got)
	}
	if len(h.s.InFlight()) != 0 {
		t.Fatalf("in flight %v, want none", h.s.InFlight())
	}
}

// ---------------------------------------------------------------------------------
// 8. Crash and recover

// crashCfg: n1's PONG #3 reuses the slot of the delivered #1, so "oldest first" at
// the crash must come from sorting by id, not from the slot order.
func crashCfg() sim.Config {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Peer: []int{1, 0, 1},
		Init: [][]timerOp{nil, {{Name: "tick", After: 15}}},
	}, 10)
	cfg.Actions = []sim.Action{req(0, 1), req(5, 2), crash(12, 1), req(13, 0), crash(14, 1), recov(25, 1)}
	return cfg
}

func TestCrash_ReceivesNothingAndRecoverRebuilds(t *testing.T) {
	cfg := crashCfg()
	evs := runEvents(t, cfg)
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n1",
		"t0 rule n1 PA1",
		"t0 send #1 PING 1>0",
		"t5 request n2",
		"t5 rule n2 PA1",
		"t5 send #2 PING 2>1",
		"t10 deliver #1 PING 1>0",
		"t10 rule n0 PH1",
		"t10 send #3 PONG 0>1",
		"t12 crash n1",
		"t12 drop #2 PING 2>1 at n1: receiver crashed",
		"t12 drop #3 PONG 0>1 at n1: receiver crashed",
		"t13 request n0",
		"t13 rule n0 PA1",
		"t13 send #4 PING 0>1",
		// t14: the second crash of n1 is skipped; t15: its tick died with it.
		"t23 drop #4 PING 0>1 at n1: receiver crashed",
		"t25 recover n1",
		"t25 rule n1 PV1",
		"t40 timer n1 tick",
		"t40 rule n1 PT1",
		"t40 violation deadlock: nothing is in flight and no timer is armed, yet P10, P30 still wait for the CS",
		"t40 end msgs=4 delivered=1 dropped=3 entries=0 elections=0 violations=1 steps=9",
	})
	if sim.ReasonCrashed != "receiver crashed" {
		t.Fatalf("ReasonCrashed = %q", sim.ReasonCrashed)
	}
}

func TestCrash_InFlightSortedByIDAndStateRebuilt(t *testing.T) {
	cfg := crashCfg()
	// Step 3 is the delivery of #1; the crash is step 4.
	s, err := sim.Replay(cfg, nil, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range s.InFlight() {
		got = append(got, fmt.Sprintf("#%d@%d", f.Msg.ID, f.At))
	}
	if want := []string{"#2@15", "#3@20"}; !slices.Equal(got, want) {
		t.Fatalf("in flight before the crash %v, want %v", got, want)
	}
	wantN1 := `{"state":"waiting","seq":1,"pongs":0,"got":[],"fired":0,"last":"","leader":-1,"recovered":false}`
	if st := string(s.Snapshot().Nodes[1].State); st != wantN1 {
		t.Fatalf("n1 before the crash: %s, want %s", st, wantN1)
	}

	s, err = sim.Replay(cfg, nil, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Alive(1) || s.Snapshot().Nodes[1].Alive {
		t.Fatal("n1 alive after its crash")
	}
	if f := s.InFlight(); len(f) != 0 {
		t.Fatalf("messages to a crashed node still in flight: %v", f)
	}

	s, err = sim.Replay(cfg, nil, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A fresh state from Spec.New (seq 0, nothing received) that got a Recover input.
	wantN1 = `{"state":"idle","seq":0,"pongs":0,"got":[],"fired":1,"last":"tick","leader":-1,"recovered":true}`
	if st := string(s.Snapshot().Nodes[1].State); st != wantN1 {
		t.Fatalf("n1 after recovery: %s, want %s", st, wantN1)
	}
}

func TestCrash_ApplyRefusesWhatCannotHappen(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Mode: []string{modeSilent, modeSilent, modeHang}}, 1)
	h := start(t, cfg)
	h.apply(crash(0, 1))
	h.refused(crash(0, 1)) // already crashed
	h.refused(req(0, 1))   // crashed nodes ask for nothing
	h.refused(recov(0, 0)) // n0 is up
	h.refused(rel(0, 0))   // n0 is not in the CS
	h.refused(crash(0, 3)) // no such node
	h.refused(elect(0, 0)) // wrong family
	h.apply(recov(0, 1))
	h.refused(recov(0, 1))
	checkEvents(t, cfg.Seed, h.rec.Events, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 crash n1",
		"t0 recover n1",
		"t0 rule n1 PV1",
	})
}

// A node crashed inside the CS leaves it: the next entry is no violation.
func TestCrash_InsideTheCSFreesIt(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Mode: []string{modeSilent, modeSilent}}, 1)
	cfg.Actions = []sim.Action{req(0, 0), crash(1, 0), req(2, 1)}
	evs := runEvents(t, cfg)
	if v := violations(evs); len(v) != 0 {
		t.Fatalf("seed %d: violations %v", cfg.Seed, v)
	}
	if got := len(ofType(evs, sim.EvEnter)); got != 2 {
		t.Fatalf("seed %d: %d entries, want 2", cfg.Seed, got)
	}
}

// ---------------------------------------------------------------------------------
// 9. Timers

// At Init n0 arms a@5, b@3, a@7 (replacing a@5), c@4 then cancels c, and d@9; when b
// fires it cancels d and arms e@1.
func TestTimers_FireReplaceCancel(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{
		Init: [][]timerOp{{
			{Name: "a", After: 5}, {Name: "b", After: 3}, {Name: "a", After: 7},
			{Name: "c", After: 4}, {Name: "c", Cancel: true}, {Name: "d", After: 9},
		}},
		OnTimer: map[string][]timerOp{"b": {{Name: "d", Cancel: true}, {Name: "e", After: 1}}},
	}, 1)
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t3 timer n0 b",
		"t3 rule n0 PT1",
		"t4 timer n0 e",
		"t4 rule n0 PT1",
		"t7 timer n0 a",
		"t7 rule n0 PT1",
		"t7 end msgs=0 delivered=0 dropped=0 entries=0 elections=0 violations=0 steps=3",
	})
}

// A heartbeat (a background timer) keeps firing, yet the run counts as quiescent: the
// stuck request is reported at once, and only once.
func TestTimers_BackgroundTimersDoNotStopQuiescence(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{
		Mode:    []string{modeHang},
		Init:    [][]timerOp{nil, {{Name: "hb", After: 10}}},
		OnTimer: map[string][]timerOp{"hb": {{Name: "hb", After: 10}}},
	}, 1)
	cfg.Pending = 1000
	cfg.Until = 35
	cfg.Actions = []sim.Action{req(0, 0)}
	h := start(t, cfg)
	evs := h.finish()
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 violation deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS",
		"t10 timer n1 hb",
		"t10 rule n1 PT1",
		"t20 timer n1 hb",
		"t20 rule n1 PT1",
		"t30 timer n1 hb",
		"t30 rule n1 PT1",
		"t35 end msgs=0 delivered=0 dropped=0 entries=0 elections=0 violations=1 steps=4",
	})
	if !h.s.Quiescent() {
		t.Fatal("Quiescent() = false with only a heartbeat armed")
	}
}

// The same timer as a foreground one holds the deadlock report back until it fires.
func TestTimers_ForegroundTimerDelaysQuiescence(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{
		Mode: []string{modeHang},
		Init: [][]timerOp{nil, {{Name: "retry", After: 10}}},
	}, 1)
	cfg.Actions = []sim.Action{req(0, 0)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t10 timer n1 retry",
		"t10 rule n1 PT1",
		"t10 violation deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS",
		"t10 end msgs=0 delivered=0 dropped=0 entries=0 elections=0 violations=1 steps=2",
	})
}

// ---------------------------------------------------------------------------------
// 10. Drop by filter

// The first filter takes the oldest PING in flight; the second finds no PONG in flight
// and waits for the next one sent, and only that one.
func TestDrop_FilterTakesOldestOrArmsForNextSend(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 3}, 5)
	cfg.Actions = []sim.Action{req(0, 0), dropWhere(1, 0, 1, msgPing), dropWhere(1, -1, 0, msgPong)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 send #1 PING 0>1",
		"t0 send #2 PING 0>1",
		"t0 send #3 PING 0>1",
		"t1 drop #1 PING 0>1 at n1: dropped by the user",
		"t5 deliver #2 PING 0>1",
		"t5 rule n1 PH1",
		"t5 send #4 PONG 1>0",
		"t5 drop #4 PONG 1>0 at n1: dropped by the user",
		"t5 deliver #3 PING 0>1",
		"t5 rule n1 PH1",
		"t5 send #5 PONG 1>0",
		"t10 deliver #5 PONG 1>0",
		"t10 rule n0 PH2",
		"t10 violation deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS",
		"t10 end msgs=5 delivered=3 dropped=2 entries=0 elections=0 violations=1 steps=6",
	})
	if sim.ReasonUser != "dropped by the user" {
		t.Fatalf("ReasonUser = %q", sim.ReasonUser)
	}
}

func TestDrop_ByIDLiveAndUnknownID(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Burst: 3}, 5)
	h := start(t, cfg)
	h.apply(req(0, 0))
	h.apply(sim.Action{Do: sim.ActDrop, Msg: 2})
	h.refused(sim.Action{Do: sim.ActDrop, Msg: 2})
	h.refused(sim.Action{Do: sim.ActDrop, Msg: 42})
	// A filter matching nothing now is no error: it waits for the next matching send
	// (nothing here sends an application message).
	h.apply(sim.Action{Do: sim.ActDrop, From: -1, To: -1, Type: sim.AppMessage})
	evs := h.finish()
	var got []string
	for _, e := range ofType(evs, sim.EvDeliver, sim.EvDrop) {
		got = append(got, show(&e))
	}
	want := []string{
		"t0 drop #2 PING 0>1 at n1: dropped by the user",
		"t5 deliver #1 PING 0>1",
		"t5 deliver #3 PING 0>1",
		"t10 deliver #4 PONG 1>0",
		"t10 deliver #5 PONG 1>0",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// ---------------------------------------------------------------------------------
// 11. Monitors

func TestMonitorMutex_TwoInsideIsAViolationNamingBoth(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Mode: []string{modeSilent, modeSilent, modeSilent}}, 1)
	cfg.Actions = []sim.Action{req(0, 0), req(1, 1)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 rule n0 PE1",
		"t0 enter n0",
		"t1 request n1",
		"t1 rule n1 PA1",
		"t1 rule n1 PE1",
		"t1 enter n1",
		"t1 violation mutual-exclusion: P20 entered the CS while P10 is in it",
		"t1 end msgs=0 delivered=0 dropped=0 entries=2 elections=0 violations=1 steps=2",
	})
}

// The pending check runs at the first step past the limit and reports each request
// once: n1's later deadline brings the check back, and n0 is not reported again.
func TestMonitorPending_ReportedOncePerRequest(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Mode:    []string{modeHang, modeHang},
		Init:    [][]timerOp{nil, nil, {{Name: "tick", After: 3}}},
		OnTimer: map[string][]timerOp{"tick": {{Name: "tick", After: 3}}},
	}, 1)
	cfg.Pending = 5
	cfg.Until = 20
	cfg.Actions = []sim.Action{req(0, 0), req(8, 1)}
	tick := func(at int) []string {
		return []string{fmt.Sprintf("t%d timer n2 tick", at), fmt.Sprintf("t%d rule n2 PT1", at)}
	}
	want := []string{"t0 rule n0 PI1", "t0 rule n1 PI1", "t0 rule n2 PI1", "t0 request n0", "t0 rule n0 PA1"}
	want = append(want, tick(3)...)
	want = append(want, tick(6)...)
	want = append(want, "t6 violation pending: P10 has waited 6 time units for the CS (limit 5)",
		"t8 request n1", "t8 rule n1 PA1")
	want = append(want, tick(9)...)
	want = append(want, tick(12)...)
	want = append(want, tick(15)...)
	want = append(want, "t15 violation pending: P20 has waited 7 time units for the CS (limit 5)")
	want = append(want, tick(18)...)
	want = append(want, "t20 end msgs=0 delivered=0 dropped=0 entries=0 elections=0 violations=2 steps=8")
	checkEvents(t, cfg.Seed, runEvents(t, cfg), want)
}

// Quiescent with a wait-for cycle: reported with the cycle; doing nothing that breaks
// the quiet reports nothing new; a new quiescent period reports it again.
func TestMonitorDeadlock_CycleOncePerQuiescentPeriod(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Mode: []string{modeHang, modeHang},
		Peer: []int{-1, -1, 0},
		Wait: [][]int{{1}, {0}},
	}, 1)
	cfg.Actions = []sim.Action{req(0, 0), req(0, 1)}
	h := start(t, cfg)
	h.stepAll()
	h.apply(heal(0)) // changes nothing the monitors look at
	if !h.s.Quiescent() {
		t.Fatal("not quiescent")
	}
	h.apply(req(0, 2)) // n2 pings n0: the quiet ends, then comes back
	evs := h.finish()
	const cycle = "t%d violation deadlock: wait-for cycle P10 -> P20 -> P10"
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 request n1",
		"t0 rule n1 PA1",
		fmt.Sprintf(cycle, 0),
		"t0 heal",
		"t0 request n2",
		"t0 rule n2 PA1",
		"t0 send #1 PING 2>0",
		"t1 deliver #1 PING 2>0",
		"t1 rule n0 PH1",
		"t1 send #2 PONG 0>2",
		"t2 deliver #2 PONG 0>2",
		"t2 rule n2 PH2",
		"t2 rule n2 PE1",
		"t2 enter n2",
		fmt.Sprintf(cycle, 2),
		"t2 end msgs=2 delivered=2 dropped=0 entries=1 elections=0 violations=2 steps=4",
	})
}

// Crashed nodes and nonsense indexes are no part of a wait-for cycle.
func TestMonitorDeadlock_CrashBreaksTheCycle(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{
		Mode: []string{modeHang, modeHang, modeHang},
		Wait: [][]int{{-1, 7, 1}, {0}, {2}},
	}, 1)
	cfg.Actions = []sim.Action{req(0, 0), req(0, 1), crash(1, 1)}
	evs := runEvents(t, cfg)
	want := []string{"deadlock: nothing is in flight and no timer is armed, yet P10 still wait for the CS"}
	if got := violations(evs); !slices.Equal(got, want) {
		t.Fatalf("seed %d: violations %q, want %q", cfg.Seed, got, want)
	}
}

func TestMonitorLeader_TwoSelfLeadersInOneGroup(t *testing.T) {
	cfg := cfgOf(&electSpec, []int{10, 20, 30, 40}, &params{}, 1)
	cfg.Actions = []sim.Action{elect(0, 0), elect(0, 1)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 rule n3 PI1",
		"t0 elect n0",
		"t0 rule n0 EE1",
		"t0 leader n0 =10",
		"t0 elect n1",
		"t0 rule n1 EE1",
		"t0 leader n1 =20",
		"t0 violation leader: P10 and P20 each take themselves as leader",
		"t0 end msgs=0 delivered=0 dropped=0 entries=0 elections=2 violations=1 steps=2",
	})
}

func leaders(s *sim.Sim) []int {
	var out []int
	for _, n := range s.Snapshot().Nodes {
		out = append(out, n.Leader)
	}
	return out
}

// One leader on each side of a partition is what a partitioned election should give.
func TestMonitorLeader_OneLeaderPerSideIsFine(t *testing.T) {
	cfg := cfgOf(&electSpec, []int{10, 20, 30, 40}, &params{Announce: true}, 1)
	cfg.Actions = []sim.Action{part(0, []int{0, 1}, []int{2, 3}), elect(1, 1), elect(1, 3)}
	h := start(t, cfg)
	evs := h.finish()
	if v := violations(evs); len(v) != 0 {
		t.Fatalf("seed %d: violations %q", cfg.Seed, v)
	}
	if got, want := leaders(h.s), []int{20, 20, 40, 40}; !slices.Equal(got, want) {
		t.Fatalf("leaders %v, want %v", got, want)
	}
	if got := len(ofType(evs, sim.EvDrop)); got != 4 {
		t.Fatalf("%d COORD dropped at the partition, want 4", got)
	}
}

func TestMonitorLeader_CrashedLeaderStillFollowed(t *testing.T) {
	cfg := cfgOf(&electSpec, []int{10, 20, 30, 40}, &params{Announce: true}, 1)
	cfg.Actions = []sim.Action{elect(0, 3), crash(5, 3)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 rule n2 PI1",
		"t0 rule n3 PI1",
		"t0 elect n3",
		"t0 rule n3 EE1",
		"t0 leader n3 =40",
		"t0 send #1 COORD 3>0",
		"t0 send #2 COORD 3>1",
		"t0 send #3 COORD 3>2",
		"t1 deliver #1 COORD 3>0",
		"t1 rule n0 EH1",
		"t1 leader n0 =40",
		"t1 deliver #2 COORD 3>1",
		"t1 rule n1 EH1",
		"t1 leader n1 =40",
		"t1 deliver #3 COORD 3>2",
		"t1 rule n2 EH1",
		"t1 leader n2 =40",
		"t5 crash n3",
		"t5 violation leader: all take P40 as leader, but P40 is crashed or cut off",
		"t5 end msgs=3 delivered=3 dropped=0 entries=0 elections=1 violations=1 steps=5",
	})
}

// The same crash done live, once the election has settled, must be noticed too.
func TestMonitorLeader_LiveCrashOfSettledLeader(t *testing.T) {
	cfg := cfgOf(&electSpec, []int{10, 20, 30, 40}, &params{Announce: true}, 1)
	cfg.Actions = []sim.Action{elect(0, 3)}
	h := start(t, cfg)
	h.stepAll()
	if v := violations(h.rec.Events); len(v) != 0 {
		t.Fatalf("violations before the crash: %q", v)
	}
	h.apply(crash(0, 3))
	want := []string{"leader: all take P40 as leader, but P40 is crashed or cut off"}
	if got := violations(h.finish()); !slices.Equal(got, want) {
		t.Fatalf("violations %q, want %q", got, want)
	}
}

// Random networks, workloads, wait-for graphs (with nonsense in them) and live
// interventions of every kind: the kernel must never panic, refuse only with an
// *ActionError, and keep its totals straight.
func TestMonitors_NeverPanicUnderRandomInterventions(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		fuzzRun(t, seed)
	}
}

func fuzzRun(t *testing.T, seed uint64) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("seed %d: panic: %v", seed, r)
		}
	}()
	r := rand.New(rand.NewPCG(seed, 77))
	n := 2 + r.IntN(5)
	ids := r.Perm(100)[:n]
	spec := &pingSpec
	if seed%2 == 0 {
		spec = &electSpec
	}
	p := &params{Burst: 1 + r.IntN(3), Announce: r.IntN(2) == 0,
		OnTimer: map[string][]timerOp{"hb": {{Name: "hb", After: 7}}, "x": {{Name: "y", After: 2}}}}
	modes := []string{modePing, modeSilent, modeHang}
	for i := 0; i < n; i++ {
		p.Mode = append(p.Mode, modes[r.IntN(3)])
		p.Peer = append(p.Peer, r.IntN(n+1)-1)
		p.Wait = append(p.Wait, []int{r.IntN(n+4) - 2, r.IntN(n)})
		p.Leader = append(p.Leader, ids[r.IntN(n)])
		p.Init = append(p.Init, []timerOp{{Name: []string{"hb", "x", "y"}[r.IntN(3)], After: r.IntN(10)}})
	}
	lo := r.IntN(4)
	cfg := sim.Config{Spec: spec, IDs: ids, Params: p, Seed: seed,
		Network: sim.Network{DelayMin: lo, DelayMax: lo + r.IntN(5), FIFO: r.IntN(2) == 0, Loss: float64(r.IntN(3)) / 10},
		CS:      r.IntN(4), Until: 150, Pending: 1 + r.IntN(40)}
	do := sim.ActRequest
	if spec.Family == sim.Election {
		do = sim.ActElect
	}
	for k := 0; k < 10; k++ {
		cfg.Actions = append(cfg.Actions, sim.Action{At: r.IntN(100), Do: do, Node: r.IntN(n)})
	}
	randomAction := func() sim.Action {
		a := sim.Action{Do: sim.ActionKind(r.IntN(9)), Node: r.IntN(n + 1), From: r.IntN(n+1) - 1,
			To: r.IntN(n+1) - 1, Msg: int64(r.IntN(20))}
		if r.IntN(3) == 0 {
			a.Type = []string{msgPing, msgPong, msgCoord}[r.IntN(3)]
		}
		if a.Do == sim.ActPartition {
			for g := 0; g < 1+r.IntN(2); g++ {
				a.Groups = append(a.Groups, []int{r.IntN(n), r.IntN(n)})
			}
		}
		return a
	}
	h := start(t, cfg)
	for {
		if r.IntN(4) == 0 {
			a := randomAction()
			var ae *sim.ActionError
			if err := h.s.Apply(a); err != nil && !errors.As(err, &ae) {
				t.Fatalf("seed %d: Apply(%s) = %v, want nil or *ActionError", seed, a.Do, err)
			}
		}
		ok, err := h.s.Step()
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !ok {
			break
		}
		h.steps++
	}
	if err := h.s.End(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	checkTotals(t, seed, h.rec.Events, h.steps)
}

// ---------------------------------------------------------------------------------
// 12. Workload

func TestWorkload_CSTimeReleasesAutomatically(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Mode: []string{modeSilent}}, 1)
	cfg.CS = 4
	cfg.Actions = []sim.Action{req(2, 0)}
	checkEvents(t, cfg.Seed, runEvents(t, cfg), []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t2 request n0",
		"t2 rule n0 PA1",
		"t2 rule n0 PE1",
		"t2 enter n0",
		"t6 rule n0 PR1",
		"t6 exit n0",
		"t6 end msgs=0 delivered=0 dropped=0 entries=1 elections=0 violations=0 steps=2",
	})
}

// A release before the CS time is up makes the scheduled end of CS moot: it must not
// keep the run from being quiescent, or the deadlock of n1 goes unreported.
func TestWorkload_EarlyReleaseLeavesNoPhantomWork(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Mode: []string{modeSilent, modeHang}}, 1)
	cfg.CS = 10
	cfg.Actions = []sim.Action{req(0, 0), rel(1, 0), req(2, 1)}
	h := start(t, cfg)
	evs := h.finish()
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t0 request n0",
		"t0 rule n0 PA1",
		"t0 rule n0 PE1",
		"t0 enter n0",
		"t1 rule n0 PR1",
		"t1 exit n0",
		"t2 request n1",
		"t2 rule n1 PA1",
		"t2 violation deadlock: nothing is in flight and no timer is armed, yet P20 still wait for the CS",
		"t2 end msgs=0 delivered=0 dropped=0 entries=1 elections=0 violations=1 steps=3",
	})
}

// The same with a crash inside the CS instead of a release.
func TestWorkload_CrashInCSLeavesNoPhantomWork(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Mode: []string{modeSilent, modeHang}}, 1)
	cfg.CS = 10
	cfg.Actions = []sim.Action{req(0, 0), crash(1, 0), req(2, 1)}
	h := start(t, cfg)
	h.stepAll()
	if !h.s.Quiescent() {
		t.Fatal("not quiescent although only a dead node's end of CS remains")
	}
	want := []string{"deadlock: nothing is in flight and no timer is armed, yet P20 still wait for the CS"}
	if got := violations(h.rec.Events); !slices.Equal(got, want) {
		t.Fatalf("violations %q, want %q", got, want)
	}
}

func TestWorkload_RequestWhilePendingOrInside(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{Mode: []string{modeHang, modeSilent}}, 1)
	cfg.Actions = []sim.Action{req(0, 0), req(1, 0), req(2, 1), req(3, 1), rel(4, 0)}
	h := start(t, cfg)
	h.stepAll()
	// Scheduled: the second request of each node and the release of a node outside the
	// CS are skipped without a trace.
	if got := len(ofType(h.rec.Events, sim.EvRequest)); got != 2 {
		t.Fatalf("%d request events, want 2: %v", got, shows(h.rec.Events))
	}
	if h.steps != 5 {
		t.Fatalf("%d steps, want 5 (skipped actions still take a step)", h.steps)
	}
	h.refused(req(0, 0)) // pending
	h.refused(req(0, 1)) // inside
	h.refused(rel(0, 0)) // not inside
	h.apply(rel(0, 1))
	h.apply(req(0, 1))
	if got := len(ofType(h.rec.Events, sim.EvEnter)); got != 2 {
		t.Fatalf("%d entries, want 2", got)
	}
}

func TestWorkload_UntilStopsTheRun(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{
		Init:    [][]timerOp{{{Name: "tick", After: 3}}},
		OnTimer: map[string][]timerOp{"tick": {{Name: "tick", After: 3}}},
	}, 1)
	cfg.Until = 10
	cfg.Actions = []sim.Action{req(11, 1)}
	h := start(t, cfg)
	evs := h.finish()
	checkEvents(t, cfg.Seed, evs, []string{
		"t0 rule n0 PI1",
		"t0 rule n1 PI1",
		"t3 timer n0 tick",
		"t3 rule n0 PT1",
		"t6 timer n0 tick",
		"t6 rule n0 PT1",
		"t9 timer n0 tick",
		"t9 rule n0 PT1",
		// Run observes the run up to Until; the request at t11 never comes.
		"t10 end msgs=0 delivered=0 dropped=0 entries=0 elections=0 violations=0 steps=3",
	})
	if h.s.HasNext() {
		t.Fatal("HasNext after Until")
	}
	if err := h.s.End(); err != nil || len(h.rec.Events) != len(evs) {
		t.Fatalf("a second End emitted something or failed: %v", err)
	}
}

// checkTotals: the end event is the last one and its figures are the counts of events.
func checkTotals(t *testing.T, seed uint64, evs []sim.Event, steps int) {
	t.Helper()
	checkSeq(t, seed, evs)
	if len(evs) == 0 || evs[len(evs)-1].Type != sim.EvEnd {
		t.Fatalf("seed %d: the trace does not close with end", seed)
	}
	if c := simtest.Count(evs, sim.EvEnd); c != 1 {
		t.Fatalf("seed %d: %d end events", seed, c)
	}
	got := *evs[len(evs)-1].Totals
	want := sim.Totals{
		Messages:   simtest.Count(evs, sim.EvSend),
		Delivered:  simtest.Count(evs, sim.EvDeliver),
		Dropped:    simtest.Count(evs, sim.EvDrop),
		Entries:    simtest.Count(evs, sim.EvEnter),
		Elections:  simtest.Count(evs, sim.EvElect),
		Violations: simtest.Count(evs, sim.EvViolation),
		Steps:      steps,
	}
	if got != want {
		t.Fatalf("seed %d: end totals %+v, counted %+v", seed, got, want)
	}
}

func TestWorkload_EndTotalsMatchTheEvents(t *testing.T) {
	drops, entries := 0, 0
	for seed := uint64(1); seed <= 10; seed++ {
		cfg := busyCfg(seed)
		cfg.Network.Loss = 0.2
		cfg.Actions = append(cfg.Actions, part(50, []int{0, 1}), heal(60), dropWhere(5, -1, -1, msgPong))
		h := start(t, cfg)
		evs := h.finish()
		checkTotals(t, seed, evs, h.steps)
		if h.s.Totals() != *evs[len(evs)-1].Totals {
			t.Fatalf("seed %d: Totals() %+v differs from the end event", seed, h.s.Totals())
		}
		drops += simtest.Count(evs, sim.EvDrop)
		entries += simtest.Count(evs, sim.EvEnter)
	}
	if drops == 0 || entries == 0 {
		t.Fatalf("%d drops, %d entries over all seeds: the runs test nothing", drops, entries)
	}
	cfg := cfgOf(&electSpec, []int{10, 20, 30}, &params{Announce: true}, 2)
	cfg.Actions = []sim.Action{elect(0, 0), elect(1, 2), elect(9, 1)}
	h := start(t, cfg)
	checkTotals(t, cfg.Seed, h.finish(), h.steps)
}

// ---------------------------------------------------------------------------------
// 13. Limits and validation

func TestValidate_RejectsBadConfigNamingTheField(t *testing.T) {
	base := func() sim.Config {
		return cfgOf(&pingSpec, []int{10, 20, 30}, &params{}, 1)
	}
	many := make([]int, 129)
	for i := range many {
		many[i] = i
	}
	tests := []struct {
		name string
		mod  func(c *sim.Config)
		want []string
	}{
		{"one node", func(c *sim.Config) { c.IDs = []int{10} }, []string{"nodes"}},
		{"129 nodes", func(c *sim.Config) { c.IDs = many }, []string{"nodes", "129"}},
		{"no spec", func(c *sim.Config) { c.Spec = nil }, []string{"algorithm"}},
		{"delay min above max", func(c *sim.Config) { c.Network.DelayMin, c.Network.DelayMax = 3, 2 }, []string{"network.delay"}},
		{"negative delay", func(c *sim.Config) { c.Network.DelayMin = -1 }, []string{"network.delay"}},
		{"delay too long", func(c *sim.Config) { c.Network.DelayMax = sim.MaxDelay + 1 }, []string{"network.delay"}},
		{"negative loss", func(c *sim.Config) { c.Network.Loss = -0.1 }, []string{"network.loss"}},
		{"loss above 1", func(c *sim.Config) { c.Network.Loss = 1.5 }, []string{"network.loss"}},
		{"loss NaN", func(c *sim.Config) { c.Network.Loss = math.NaN() }, []string{"network.loss"}},
		{"negative until", func(c *sim.Config) { c.Until = -1 }, []string{"until"}},
		{"until too late", func(c *sim.Config) { c.Until = sim.MaxTime + 1 }, []string{"until"}},
		{"negative cs", func(c *sim.Config) { c.CS = -1 }, []string{"cs"}},
		{"action at negative time", func(c *sim.Config) { c.Actions = []sim.Action{req(-1, 0)} }, []string{"events[0].at"}},
		{"action node out of range", func(c *sim.Config) { c.Actions = []sim.Action{req(0, 0), req(0, 3)} }, []string{"events[1]", "node"}},
		{"action node negative", func(c *sim.Config) { c.Actions = []sim.Action{crash(0, -1)} }, []string{"events[0]", "node"}},
		{"partition node in two groups", func(c *sim.Config) { c.Actions = []sim.Action{part(0, []int{0, 1}, []int{1, 2})} }, []string{"events[0]", "groups", "20", "two groups"}},
		{"partition unknown node", func(c *sim.Config) { c.Actions = []sim.Action{part(0, []int{0, 5})} }, []string{"groups"}},
		{"partition without groups", func(c *sim.Config) { c.Actions = []sim.Action{part(0)} }, []string{"groups"}},
		{"deliver without id", func(c *sim.Config) { c.Actions = []sim.Action{{Do: sim.ActDeliver}} }, []string{"msg"}},
		{"drop from no such node", func(c *sim.Config) { c.Actions = []sim.Action{dropWhere(0, 3, -1, "")} }, []string{"from: index 3"}},
		{"elect in mutual exclusion", func(c *sim.Config) { c.Actions = []sim.Action{elect(0, 0)} }, []string{"do"}},
		{"request in an election", func(c *sim.Config) { c.Spec = &electSpec; c.Actions = []sim.Action{req(0, 0)} }, []string{"do"}},
		{"unknown action", func(c *sim.Config) { c.Actions = []sim.Action{{Do: sim.ActionKind(99)}} }, []string{"do"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.mod(&cfg)
			s, err := sim.New(cfg, nil)
			if err == nil {
				t.Fatalf("New accepted it")
			}
			if s != nil {
				t.Errorf("New returned a run with its error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}

func TestValidate_LimitsThemselvesAreAccepted(t *testing.T) {
	for _, n := range []int{sim.MinNodes, sim.MaxNodes} {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = 1000 + i
		}
		cfg := cfgOf(&pingSpec, ids, &params{}, sim.MaxDelay)
		cfg.Network.DelayMin = 0
		cfg.Network.Loss = 1
		cfg.Until = sim.MaxTime
		if _, err := sim.New(cfg, nil); err != nil {
			t.Fatalf("%d nodes: %v", n, err)
		}
	}
}

func TestLimits_MaxEvents(t *testing.T) {
	cfg := busyCfg(4)
	total := len(runEvents(t, cfg))

	cfg.MaxEvents = total
	if err := mustNew(t, cfg).Run(); err != nil {
		t.Fatalf("a run of exactly MaxEvents=%d events failed: %v", total, err)
	}
	cfg.MaxEvents = total - 1
	err := mustNew(t, cfg).Run()
	if !errors.Is(err, sim.ErrEventLimit) {
		t.Fatalf("MaxEvents=%d of %d: Run() = %v, want ErrEventLimit", total-1, total, err)
	}
	cfg.MaxEvents = 2 // the three Init rules already exceed it
	if _, err := sim.New(cfg, nil); !errors.Is(err, sim.ErrEventLimit) {
		t.Fatalf("New with MaxEvents=2 = %v, want ErrEventLimit", err)
	}
}

func mustNew(t *testing.T, cfg sim.Config) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return s
}

// ---------------------------------------------------------------------------------
// 14. Snapshot and replay

func TestSnapshot_ShowsTheRun(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 2}, 3)
	cfg.Actions = []sim.Action{req(0, 0), crash(1, 2)}
	h := start(t, cfg)
	for k := 0; k < 4; k++ { // the request, the crash, both PINGs delivered at t3
		if ok, err := h.s.Step(); !ok || err != nil {
			t.Fatalf("step %d: %v %v", k, ok, err)
		}
	}
	got := h.s.Snapshot()
	want := sim.Snapshot{
		Step: 4, T: 3,
		Nodes: []sim.NodeView{
			{ID: 10, Alive: true, Leader: -1,
				State: []byte(`{"state":"waiting","seq":1,"pongs":0,"got":[],"fired":0,"last":"","leader":-1,"recovered":false}`)},
			{ID: 20, Alive: true, Leader: -1,
				State: []byte(`{"state":"idle","seq":0,"pongs":0,"got":[1,2],"fired":0,"last":"","leader":-1,"recovered":false}`)},
			{ID: 30, Alive: false, Leader: -1,
				State: []byte(`{"state":"idle","seq":0,"pongs":0,"got":[],"fired":0,"last":"","leader":-1,"recovered":false}`)},
		},
		InFlight: []sim.InFlight{
			{Msg: sim.Message{ID: 3, Type: msgPong, From: 1, To: 0, TS: 1, Arg: 1, Vec: []int{20, 1}, Queue: []int{1}}, At: 6},
			{Msg: sim.Message{ID: 4, Type: msgPong, From: 1, To: 0, TS: 1, Arg: 2, Vec: []int{20, 2}, Queue: []int{2}}, At: 6},
		},
		Groups: []int{0, 0, 0},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot\n got %s\nwant %s", dump(got), dump(want))
	}
	for i, nv := range got.Nodes {
		if !json.Valid(nv.State) {
			t.Errorf("node %d state is not JSON: %s", i, nv.State)
		}
		if !bytes.Equal(nv.State, sim.EncodeState(h.s.Node(i))) {
			t.Errorf("node %d: snapshot state differs from EncodeState", i)
		}
	}
	h.stepAll()
	snap := h.s.Snapshot()
	if !snap.Nodes[0].InCS || !h.s.InCS(0) {
		t.Fatalf("n0 not in the CS at the end: %s", dump(snap))
	}
}

func TestSnapshot_LeaderAndGroups(t *testing.T) {
	cfg := cfgOf(&electSpec, []int{10, 20, 30}, &params{Leader: []int{30, 30, 30}}, 1)
	cfg.Actions = []sim.Action{part(0, []int{2}), elect(0, 0)}
	h := start(t, cfg)
	h.stepAll()
	snap := h.s.Snapshot()
	if got := leaders(h.s); !slices.Equal(got, []int{30, -1, -1}) {
		t.Fatalf("leaders %v", got)
	}
	if snap.Groups[2] == snap.Groups[0] || snap.Groups[0] != snap.Groups[1] {
		t.Fatalf("groups %v", snap.Groups)
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Nothing a caller does to a snapshot reaches the run.
func TestSnapshot_DoesNotAliasTheRun(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 2}, 3)
	cfg.Actions = []sim.Action{req(0, 0), part(1, []int{2})}
	var out []byte
	enc := sim.NewEncoder(cfg.Spec, cfg.IDs)
	s := mustNewSink(t, cfg, enc.Lines(&out))
	for k := 0; k < 4; k++ {
		s.Step()
	}
	before := dump(s.Snapshot()) // a copy that shares nothing
	a := s.Snapshot()
	if len(a.InFlight) < 2 || a.InFlight[0].Msg.Vec == nil {
		t.Fatal("no PONGs in flight to tamper with")
	}
	for i := range a.Nodes {
		a.Nodes[i].State[1] = 'X'
		a.Nodes[i].Alive = !a.Nodes[i].Alive
	}
	a.InFlight[0].Msg.Vec[0] = 999
	a.InFlight[0].Msg.Queue[0] = 999
	a.InFlight[0].At = 999
	a.Groups[0] = 7
	f := s.InFlight()
	f[1].Msg.Vec[1] = 999
	f[1].Msg.Queue[0] = 999
	if after := dump(s.Snapshot()); after != before {
		t.Fatalf("the run changed with its snapshot\nbefore %s\n after %s", before, after)
	}
	// And the rest of the run, payloads included, is the one it would have been.
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if clean := trace(t, cfg); !bytes.Equal(out, clean) {
		t.Fatalf("tampering with snapshots changed the trace:\n%s\nwant\n%s", out, clean)
	}
}

func mustNewSink(t *testing.T, cfg sim.Config, sink sim.Sink) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg, sink)
	if err != nil {
		t.Fatalf("seed %d: %v", cfg.Seed, err)
	}
	return s
}

// replayCfg has random delays, a CS time, a timer and enough traffic for the
// interventions below to land on a busy run.
func replayCfg() (sim.Config, []sim.Intervention) {
	cfg := sim.Config{Spec: &pingSpec, IDs: []int{10, 20, 30}, Seed: 5,
		Params: &params{Burst: 2, Init: [][]timerOp{nil, {{Name: "tick", After: 3}}},
			OnTimer: map[string][]timerOp{"tick": {{Name: "tick", After: 3}}}},
		Network: sim.Network{DelayMin: 1, DelayMax: 4},
		CS:      2, Until: 100,
		Actions: []sim.Action{req(0, 0), req(1, 1), req(3, 2), req(20, 0), req(21, 1)},
	}
	ivs := []sim.Intervention{
		{Step: 0, Action: sim.Action{Do: sim.ActDrop, From: -1, To: -1, Type: msgPong}},
		{Step: 3, Action: crash(0, 2)},
		{Step: 6, Action: part(0, []int{0}, []int{1, 2})},
		{Step: 6, Action: recov(0, 2)},
		{Step: 9, Action: heal(0)},
		{Step: 12, Action: req(0, 2)},
	}
	return cfg, ivs
}

// A live run with interventions applied just before their steps, snapshotted before
// every step, must be what Replay rebuilds for every k.
func TestReplay_MatchesTheLiveRunAtEveryStep(t *testing.T) {
	cfg, ivs := replayCfg()
	var rec sim.Recorder
	s, err := sim.New(cfg, rec.Sink())
	if err != nil {
		t.Fatal(err)
	}
	var snaps []sim.Snapshot
	k := 0
	for {
		for k < len(ivs) && ivs[k].Step == s.Steps() {
			if err := s.Apply(ivs[k].Action); err != nil {
				t.Fatalf("live step %d: Apply(%s): %v", s.Steps(), ivs[k].Action.Do, err)
			}
			k++
		}
		snaps = append(snaps, s.Snapshot())
		ok, err := s.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
	}
	if k != len(ivs) || len(snaps) < 20 {
		t.Fatalf("the run is too short (%d steps, %d interventions applied)", len(snaps)-1, k)
	}
	for step, want := range snaps {
		r, err := sim.Replay(cfg, ivs, step, nil)
		if err != nil {
			t.Fatalf("Replay to %d: %v", step, err)
		}
		if r.Steps() != step {
			t.Fatalf("Replay to %d stopped at %d", step, r.Steps())
		}
		if got := r.Snapshot(); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d:\nreplay %s\n  live %s", step, dump(got), dump(want))
		}
	}
	// Past the end, Replay stops at the end, with the same trace.
	var again sim.Recorder
	r, err := sim.Replay(cfg, ivs, len(snaps)+10, again.Sink())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Snapshot(), snaps[len(snaps)-1]) {
		t.Fatal("Replay past the end differs from the live end")
	}
	if !slices.Equal(shows(again.Events), shows(rec.Events)) {
		t.Fatal("Replay's trace differs from the live run's")
	}
}

// In hold mode the user's choices are interventions too; each delivery is a step.
func TestReplay_HoldModeChoices(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3}, 1)
	cfg.Network.Hold = true
	ivs := []sim.Intervention{
		{Step: 0, Action: req(0, 0)},
		{Step: 0, Action: sim.Action{Do: sim.ActDeliver, Msg: 2}},
		{Step: 1, Action: sim.Action{Do: sim.ActDrop, Msg: 1}},
		{Step: 1, Action: sim.Action{Do: sim.ActDeliver, Msg: 4}},
	}
	h := start(t, cfg)
	for _, iv := range ivs {
		h.apply(iv.Action)
	}
	var rec sim.Recorder
	r, err := sim.Replay(cfg, ivs, 2, rec.Sink())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.Snapshot(), h.s.Snapshot()) {
		t.Fatalf("replay %s\n  live %s", dump(r.Snapshot()), dump(h.s.Snapshot()))
	}
	if !slices.Equal(shows(rec.Events), shows(h.rec.Events)) {
		t.Fatalf("replay trace %v\nlive %v", shows(rec.Events), shows(h.rec.Events))
	}
}

// ---------------------------------------------------------------------------------
// 15. StateWriter

func TestStateWriter_CanonicalValidJSON(t *testing.T) {
	var w sim.StateWriter
	if got := string(w.Bytes()); got != "{}" {
		t.Fatalf("empty writer: %s", got)
	}
	nasty := "a\"b\\c\x01\n\t\x1f\x7fé"
	w.Str("s", nasty)
	w.Int("i", -3)
	w.Bool("b", true)
	w.Bool("f", false)
	w.Ints("none", nil)
	w.Ints("v", []int{1, -2})
	w.Pairs("p", [][2]int{{1, 2}, {3, -4}})
	w.Pairs("p0", nil)
	w.Str("k\"ey", "")
	got := w.Bytes()
	want := `{"s":"a\"b\\c\u0001\u000a\u0009\u001f` + "\x7fé" + `","i":-3,"b":true,"f":false,"none":[],"v":[1,-2],"p":[[1,2],[3,-4]],"p0":[],"k\"ey":""}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !json.Valid(got) {
		t.Fatalf("not valid JSON: %s", got)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if back["s"] != nasty || back[`k"ey`] != "" {
		t.Fatalf("strings do not round-trip: %q", back)
	}
	// Bytes again gives the same object; Reset starts a new one.
	if string(w.Bytes()) != want {
		t.Fatal("a second Bytes differs")
	}
	w.Reset()
	w.Int("x", 1)
	if got := string(w.Bytes()); got != `{"x":1}` {
		t.Fatalf("after Reset: %s", got)
	}
}

func TestStateWriter_EveryControlCharEscaped(t *testing.T) {
	for c := 0; c < 0x20; c++ {
		var w sim.StateWriter
		w.Str("k", string(rune(c)))
		got := w.Bytes()
		want := fmt.Sprintf(`{"k":"\u%04x"}`, c)
		if string(got) != want || !json.Valid(got) {
			t.Fatalf("char %#x: %q, want %q", c, got, want)
		}
	}
}

func TestEncodeState_SameStateSameBytes(t *testing.T) {
	cfg := busyCfg(2)
	s := mustNew(t, cfg)
	for k := 0; k < 30; k++ {
		s.Step()
	}
	for i := range cfg.IDs {
		n := s.Node(i)
		a, b, c := sim.EncodeState(n), sim.EncodeState(n), sim.EncodeState(n.Clone())
		if !bytes.Equal(a, b) || !bytes.Equal(a, c) || !json.Valid(a) {
			t.Fatalf("node %d: %s / %s / %s", i, a, b, c)
		}
	}
}

// ---------------------------------------------------------------------------------
// 16. Trace encoding

// traceLines runs cfg and decodes every line, checking it is a JSON object.
func traceLines(t *testing.T, cfg sim.Config) ([]string, []map[string]json.RawMessage) {
	t.Helper()
	raw := strings.Split(strings.TrimSuffix(string(trace(t, cfg)), "\n"), "\n")
	objs := make([]map[string]json.RawMessage, len(raw))
	for k, line := range raw {
		if !json.Valid([]byte(line)) {
			t.Fatalf("line %d is not JSON: %s", k, line)
		}
		if err := json.Unmarshal([]byte(line), &objs[k]); err != nil {
			t.Fatalf("line %d: %v", k, err)
		}
	}
	return raw, objs
}

var traceKeys = map[string][]string{
	"send":      {"msg"},
	"deliver":   {"msg"},
	"drop":      {"msg", "reason"},
	"rule":      {"rule"},
	"request":   {},
	"enter":     {},
	"exit":      {},
	"elect":     {},
	"leader":    {"leader"},
	"crash":     {},
	"recover":   {},
	"timer":     {"name"},
	"violation": {"property", "detail", "nodes"},
	"partition": {"groups"},
	"heal":      {},
	"end":       {"messages", "entries", "delivered", "dropped", "elections", "violations", "steps"},
}

var msgKeys = map[string][]string{
	msgPing:  {"id", "type", "from", "to", "ts", "n"},
	msgPong:  {"id", "type", "from", "to", "ts", "n", "seen", "q"},
	msgCoord: {"id", "type", "from", "to", "leader"},
}

// withNode lists the event types that name a node.
var withNode = []string{"send", "deliver", "drop", "rule", "request", "enter", "exit", "elect",
	"leader", "crash", "recover", "timer"}

func keysOf(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}

func checkTraceShape(t *testing.T, ids []int, objs []map[string]json.RawMessage, seen map[string]bool) {
	t.Helper()
	isID := func(raw json.RawMessage) bool {
		var v int
		return json.Unmarshal(raw, &v) == nil && slices.Contains(ids, v)
	}
	for k, o := range objs {
		var typ string
		var seq int64
		json.Unmarshal(o["type"], &typ)
		json.Unmarshal(o["seq"], &seq)
		if seq != int64(k) {
			t.Fatalf("line %d: seq %d", k, seq)
		}
		seen[typ] = true
		extra, ok := traceKeys[typ]
		if !ok {
			t.Fatalf("line %d: unknown type %q", k, typ)
		}
		want := append([]string{"seq", "t", "type"}, extra...)
		if slices.Contains(withNode, typ) {
			want = append(want, "node")
			if !isID(o["node"]) {
				t.Fatalf("line %d: node %s is not an id of %v", k, o["node"], ids)
			}
		}
		sort.Strings(want)
		if got := keysOf(o); !slices.Equal(got, want) {
			t.Fatalf("line %d (%s): keys %v, want %v", k, typ, got, want)
		}
		if raw, ok := o["msg"]; ok {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("line %d: msg: %v", k, err)
			}
			var mt string
			json.Unmarshal(m["type"], &mt)
			want := slices.Sorted(slices.Values(msgKeys[mt]))
			if got := keysOf(m); !slices.Equal(got, want) {
				t.Fatalf("line %d: msg keys %v, want %v", k, got, want)
			}
			if !isID(m["from"]) || !isID(m["to"]) {
				t.Fatalf("line %d: msg from/to are not ids: %s", k, raw)
			}
		}
	}
}

func TestTrace_EveryEventTypeFollowsTheContract(t *testing.T) {
	ids := []int{10, 20, 30}
	mutex := cfgOf(&pingSpec, ids, &params{Peer: []int{-1, 0, -1}, Init: [][]timerOp{{{Name: "tick", After: 2}}}}, 1)
	mutex.CS = 1
	mutex.Actions = []sim.Action{req(0, 0), part(4, []int{0}, []int{1, 2}), req(4, 1), heal(5), crash(6, 2), recov(7, 2)}
	lines, objs := traceLines(t, mutex)
	golden := map[int]string{
		0:  `{"seq":0,"t":0,"type":"rule","node":10,"rule":"PI1"}`,
		3:  `{"seq":3,"t":0,"type":"request","node":10}`,
		5:  `{"seq":5,"t":0,"type":"send","node":10,"msg":{"id":1,"type":"PING","from":10,"to":20,"ts":1,"n":1}}`,
		6:  `{"seq":6,"t":1,"type":"deliver","node":20,"msg":{"id":1,"type":"PING","from":10,"to":20,"ts":1,"n":1}}`,
		8:  `{"seq":8,"t":1,"type":"send","node":20,"msg":{"id":2,"type":"PONG","from":20,"to":10,"ts":1,"n":1,"seen":[20,1],"q":[1]}}`,
		9:  `{"seq":9,"t":2,"type":"timer","node":10,"name":"tick"}`,
		14: `{"seq":14,"t":2,"type":"enter","node":10}`,
		16: `{"seq":16,"t":3,"type":"exit","node":10}`,
		17: `{"seq":17,"t":4,"type":"partition","groups":[[10],[20,30]]}`,
		21: `{"seq":21,"t":4,"type":"drop","node":20,"msg":{"id":3,"type":"PING","from":20,"to":10,"ts":1,"n":1},"reason":"partition"}`,
		22: `{"seq":22,"t":5,"type":"heal"}`,
		23: `{"seq":23,"t":6,"type":"crash","node":30}`,
		24: `{"seq":24,"t":7,"type":"recover","node":30}`,
		26: `{"seq":26,"t":7,"type":"violation","property":"deadlock","detail":"nothing is in flight and no timer is armed, yet P20 still wait for the CS","nodes":[20]}`,
		27: `{"seq":27,"t":7,"type":"end","messages":3,"entries":1,"delivered":2,"dropped":1,"elections":0,"violations":1,"steps":10}`,
	}
	if len(lines) != 28 {
		t.Fatalf("%d lines, want 28:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for k, want := range golden {
		if lines[k] != want {
			t.Errorf("line %d:\n got %s\nwant %s", k, lines[k], want)
		}
	}
	seen := map[string]bool{}
	checkTraceShape(t, ids, objs, seen)

	election := cfgOf(&electSpec, ids, &params{Announce: true}, 1)
	election.Actions = []sim.Action{elect(0, 2)}
	lines, objs = traceLines(t, election)
	golden = map[int]string{
		3:  `{"seq":3,"t":0,"type":"elect","node":30}`,
		5:  `{"seq":5,"t":0,"type":"leader","node":30,"leader":30}`,
		6:  `{"seq":6,"t":0,"type":"send","node":30,"msg":{"id":1,"type":"COORD","from":30,"to":10,"leader":30}}`,
		10: `{"seq":10,"t":1,"type":"leader","node":10,"leader":30}`,
		14: `{"seq":14,"t":1,"type":"end","messages":2,"entries":0,"delivered":2,"dropped":0,"elections":1,"violations":0,"steps":3}`,
	}
	if len(lines) != 15 {
		t.Fatalf("%d lines, want 15:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for k, want := range golden {
		if lines[k] != want {
			t.Errorf("line %d:\n got %s\nwant %s", k, lines[k], want)
		}
	}
	checkTraceShape(t, ids, objs, seen)

	for typ := range traceKeys {
		if !seen[typ] {
			t.Errorf("no %q event in the runs: the test misses part of the contract", typ)
		}
	}
}

func TestTrace_MessageEncoding(t *testing.T) {
	enc := sim.NewEncoder(&pingSpec, []int{10, 20, 30})
	tests := []struct {
		msg  sim.Message
		want string
	}{
		{sim.Message{ID: 9, Type: "RAW", From: 0, To: 2, TS: 5, Arg: 6, Vec: []int{1}},
			`{"id":9,"type":"RAW","from":10,"to":30}`},
		{sim.Message{ID: 1, Type: msgPong, From: 2, To: 1},
			`{"id":1,"type":"PONG","from":30,"to":20,"ts":0,"n":0,"seen":[],"q":[]}`},
		{sim.Message{ID: 2, Type: msgCoord, From: 1, To: 0, Arg: 30, TS: 7},
			`{"id":2,"type":"COORD","from":20,"to":10,"leader":30}`},
		{sim.Message{ID: 3, Type: `"odd"\`, From: 0, To: 1},
			`{"id":3,"type":"\"odd\"\\","from":10,"to":20}`},
	}
	for _, tc := range tests {
		got := string(enc.AppendMessage(nil, &tc.msg))
		if got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	ev := sim.Event{Seq: 4, T: 2, Type: sim.EvViolation, Node: 1, Property: "p", Detail: "a \"quoted\"\nline"}
	line := enc.AppendLine(nil, &ev)
	want := `{"seq":4,"t":2,"type":"violation","property":"p","detail":"a \"quoted\"\u000aline"}` + "\n"
	if string(line) != want {
		t.Errorf("violation line %q, want %q", line, want)
	}
}
