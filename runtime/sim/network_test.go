package sim_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// ---------------------------------------------------------------------------------
// The network changed live (ActNetwork), and the user's deliveries in hold mode as
// steps of their own.

func setDelay(lo, hi int) sim.NetChange {
	return sim.NetChange{Set: sim.NetDelay, DelayMin: lo, DelayMax: hi}
}
func setFIFO(on bool) sim.NetChange   { return sim.NetChange{Set: sim.NetFIFO, FIFO: on} }
func setLoss(p float64) sim.NetChange { return sim.NetChange{Set: sim.NetLoss, Loss: p} }
func setHold(on bool) sim.NetChange   { return sim.NetChange{Set: sim.NetHold, Hold: on} }
func deliver(id int64) sim.Action     { return sim.Action{Do: sim.ActDeliver, Msg: id, From: -1, To: -1} }
func dropMsg(id int64) sim.Action     { return sim.Action{Do: sim.ActDrop, Msg: id, From: -1, To: -1} }
func request(node int) sim.Action {
	return sim.Action{Do: sim.ActRequest, Node: node, From: -1, To: -1}
}
func electNow(node int) sim.Action { return sim.Action{Do: sim.ActElect, Node: node, From: -1, To: -1} }
func netAct(cs ...sim.NetChange) sim.Action {
	a := sim.Action{Do: sim.ActNetwork, From: -1, To: -1}
	for _, c := range cs {
		a.Net.Set |= c.Set
		if c.Set&sim.NetDelay != 0 {
			a.Net.DelayMin, a.Net.DelayMax = c.DelayMin, c.DelayMax
		}
		if c.Set&sim.NetFIFO != 0 {
			a.Net.FIFO = c.FIFO
		}
		if c.Set&sim.NetLoss != 0 {
			a.Net.Loss = c.Loss
		}
		if c.Set&sim.NetHold != 0 {
			a.Net.Hold = c.Hold
		}
	}
	return a
}

// announceCfg: node 0 announces itself to everyone on Elect (COORD to 1 and 2), so a
// test can put messages on the channel 0 -> 1 whenever it likes.
func announceCfg(delay int, fifo bool) sim.Config {
	cfg := cfgOf(&electSpec, []int{10, 20, 30}, &params{Announce: true}, delay)
	cfg.Network.FIFO = fifo
	return cfg
}

// inFlight lists the messages in the network as #id@arrival (-1: held).
func inFlight(s *sim.Sim) []string {
	var out []string
	for _, f := range s.InFlight() {
		out = append(out, fmt.Sprintf("#%d@%d", f.Msg.ID, f.At))
	}
	return out
}

// delivered lists the ids of the messages delivered to node i, in order.
func delivered(evs []sim.Event, i int) []int64 {
	var out []int64
	for _, e := range ofType(evs, sim.EvDeliver) {
		if e.Msg.To == i {
			out = append(out, e.Msg.ID)
		}
	}
	return out
}

// FIFO switched with messages in flight: COORD #1 (0 -> 1) is on its way, slow; the
// network gets fast; a second COORD #3 on the same channel overtakes #1 unless FIFO is
// on from then on.
func TestNetwork_FIFOSwitchWithMessagesInFlight(t *testing.T) {
	tests := []struct {
		name      string
		fifo      bool // at the start
		change    sim.Action
		wantAt3   int     // arrival of #3
		wantOrder []int64 // deliveries at node 1
	}{
		{"stays off: the fast one overtakes", false, netAct(setDelay(1, 1)), 1, []int64{3, 1}},
		{"turned on: it waits behind #1", false, netAct(setDelay(1, 1), setFIFO(true)), 10, []int64{1, 3}},
		{"turned off: it overtakes", true, netAct(setDelay(1, 1), setFIFO(false)), 1, []int64{3, 1}},
		{"stays on: it waits behind #1", true, netAct(setDelay(1, 1)), 10, []int64{1, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, announceCfg(10, tc.fifo))
			h.apply(electNow(0)) // #1 -> n1, #2 -> n2, both at t=10
			h.apply(tc.change)
			h.apply(electNow(0)) // #3 -> n1, #4 -> n2
			var at3 int
			for _, f := range h.s.InFlight() {
				if f.Msg.ID == 3 {
					at3 = f.At
				}
			}
			if at3 != tc.wantAt3 {
				t.Errorf("seed %d: #3 arrives at %d, want %d (in flight %v)", h.seed, at3, tc.wantAt3, inFlight(h.s))
			}
			evs := h.finish()
			if got := delivered(evs, 1); !slices.Equal(got, tc.wantOrder) {
				t.Errorf("seed %d: node 1 got %v, want %v", h.seed, got, tc.wantOrder)
			}
		})
	}
}

// With FIFO on, the send order holds on every channel from the switch on, whatever the
// delays drawn: checked over many seeds with a wide uniform delay.
func TestNetwork_FIFOOnKeepsSendOrderFromTheSwitch(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		cfg := announceCfg(1, false)
		cfg.Seed = seed
		cfg.Network.DelayMin, cfg.Network.DelayMax = 1, 20
		h := start(t, cfg)
		h.apply(electNow(0))
		h.apply(netAct(setFIFO(true)))
		for range 5 {
			h.apply(electNow(0))
		}
		evs := h.finish()
		for node := 1; node <= 2; node++ {
			got := delivered(evs, node)
			// The first COORD was sent before the switch: it may land anywhere. The ones
			// after it come in send order.
			var after []int64
			for _, id := range got {
				if id > 2 {
					after = append(after, id)
				}
			}
			if !slices.IsSorted(after) {
				t.Fatalf("seed %d: node %d got %v; after the switch the order must be the send order", seed, node, got)
			}
		}
	}
}

// A delay change applies to messages sent from then on; those in flight keep their time.
func TestNetwork_DelayChange(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi int
	}{
		{"slower fixed", 7, 7},
		{"faster fixed", 0, 0},
		{"uniform", 2, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, announceCfg(3, false))
			h.apply(electNow(0)) // #1, #2 at t=3
			h.apply(netAct(setDelay(tc.lo, tc.hi)))
			if got := h.s.Network(); got.DelayMin != tc.lo || got.DelayMax != tc.hi || h.s.Config().Network.DelayMin != 3 {
				t.Fatalf("Network() = %+v, Config().Network = %+v: the change must show in the first, not the second", got, h.s.Config().Network)
			}
			for range 10 {
				h.apply(electNow(0))
			}
			for _, f := range h.s.InFlight() {
				if f.Msg.ID <= 2 {
					if f.At != 3 {
						t.Errorf("seed %d: #%d was in flight before the change and now arrives at %d, want 3", h.seed, f.Msg.ID, f.At)
					}
				} else if f.At < tc.lo || f.At > tc.hi {
					t.Errorf("seed %d: #%d arrives at %d, outside the new delay [%d, %d]", h.seed, f.Msg.ID, f.At, tc.lo, tc.hi)
				}
			}
		})
	}
}

// A loss change applies to messages sent from then on.
func TestNetwork_LossChange(t *testing.T) {
	tests := []struct {
		name     string
		before   float64
		after    float64
		wantLost []int64 // dropped as lost
	}{
		{"everything lost from now on", 0, 1, []int64{3, 4}},
		{"nothing lost any more", 1, 0, []int64{1, 2}},
		{"unchanged", 0, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := announceCfg(2, false)
			cfg.Network.Loss = tc.before
			h := start(t, cfg)
			h.apply(electNow(0)) // #1, #2
			h.apply(netAct(setLoss(tc.after)))
			h.apply(electNow(0)) // #3, #4
			evs := h.finish()
			var lost []int64
			for _, e := range ofType(evs, sim.EvDrop) {
				if e.Reason != sim.ReasonLost {
					t.Errorf("seed %d: unexpected %s", h.seed, show(&e))
				}
				lost = append(lost, e.Msg.ID)
			}
			if !slices.Equal(lost, tc.wantLost) {
				t.Errorf("seed %d: lost %v, want %v", h.seed, lost, tc.wantLost)
			}
			want := 4 - len(tc.wantLost)
			if got := len(ofType(evs, sim.EvDeliver)); got != want {
				t.Errorf("seed %d: %d delivered, want %d", h.seed, got, want)
			}
		})
	}
}

// Hold switched on parks every message in flight, in send order; switched off, every
// held message gets an arrival time drawn then.
func TestNetwork_HoldOnAndOffLive(t *testing.T) {
	tests := []struct {
		name        string
		fifo        bool
		lo, hi      int
		wantRelease []string // in flight after hold goes off at t=0
	}{
		{"fixed delay", false, 4, 4, []string{"#2@4", "#3@4", "#4@4"}},
		// FIFO: #4 was sent on 0 -> 2 after #2, so it never arrives before it.
		{"fifo keeps each channel in order", true, 1, 9, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := announceCfg(5, tc.fifo)
			cfg.Seed = 3
			h := start(t, cfg)
			h.apply(electNow(0)) // #1 -> n1, #2 -> n2 at t=5
			h.apply(netAct(setHold(true), setDelay(tc.lo, tc.hi)))
			if got, want := inFlight(h.s), []string{"#1@-1", "#2@-1"}; !slices.Equal(got, want) {
				t.Fatalf("seed %d: after hold on, in flight %v, want %v", h.seed, got, want)
			}
			if h.s.HasNext() {
				t.Fatalf("seed %d: HasNext with every message held", h.seed)
			}
			steps := h.s.Steps()
			h.apply(deliver(1)) // n1 takes COORD: nothing sent
			if h.s.Steps() != steps+1 {
				t.Fatalf("seed %d: a delivery by the user took %d steps, want 1", h.seed, h.s.Steps()-steps)
			}
			h.apply(electNow(0)) // #3 -> n1, #4 -> n2: held at once
			if got, want := inFlight(h.s), []string{"#2@-1", "#3@-1", "#4@-1"}; !slices.Equal(got, want) {
				t.Fatalf("seed %d: in flight %v, want %v", h.seed, got, want)
			}
			h.apply(netAct(setHold(false)))
			got := inFlight(h.s)
			if tc.wantRelease != nil && !slices.Equal(got, tc.wantRelease) {
				t.Fatalf("seed %d: after hold off, in flight %v, want %v", h.seed, got, tc.wantRelease)
			}
			for _, f := range h.s.InFlight() {
				if f.At < tc.lo || f.At > tc.hi {
					t.Errorf("seed %d: #%d released to arrive at %d, outside [%d, %d]", h.seed, f.Msg.ID, f.At, tc.lo, tc.hi)
				}
			}
			evs := h.finish()
			if d := delivered(evs, 2); tc.fifo && !slices.Equal(d, []int64{2, 4}) {
				t.Errorf("seed %d: FIFO: node 2 got %v, want [2 4]", h.seed, d)
			}
			if n := len(ofType(evs, sim.EvDeliver)); n != 4 {
				t.Errorf("seed %d: %d deliveries, want 4 (none lost, none twice)", h.seed, n)
			}
		})
	}
}

// With FIFO channels the user may deliver only the oldest held message of a channel.
func TestNetwork_HoldWithFIFODeliversChannelHeadsOnly(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3}, 1)
	cfg.Network.Hold, cfg.Network.FIFO = true, true
	h := start(t, cfg)
	h.apply(request(0)) // #1 #2 #3 on 0 -> 1
	h.refused(deliver(2))
	err := h.s.Apply(deliver(3))
	if err == nil || !strings.Contains(err.Error(), "FIFO") || !strings.Contains(err.Error(), "behind message 1") {
		t.Fatalf("seed %d: delivering #3 first = %v, want a FIFO refusal naming #1", h.seed, err)
	}
	h.apply(deliver(1))
	h.apply(netAct(setFIFO(false))) // now any order goes
	h.apply(deliver(3))
	h.apply(deliver(2))
	if got := delivered(h.rec.Events, 1); !slices.Equal(got, []int64{1, 3, 2}) {
		t.Fatalf("seed %d: node 1 got %v", h.seed, got)
	}
}

// Each delivery the user picks is a step: replaying to step k stops between two picks,
// and the live run and sim.Replay agree at every step. A timer of node 2 is due all
// along: the picks are the steps, not the timer.
func TestNetwork_UserDeliveriesAreSteps(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3, Init: [][]timerOp{nil, nil, {{Name: "t", After: 5}}}}, 1)
	cfg.Network.Hold = true
	h := start(t, cfg)
	var ivs []sim.Intervention
	snaps := map[int]sim.Snapshot{}
	do := func(a sim.Action) {
		t.Helper()
		ivs = append(ivs, sim.Intervention{Step: h.s.Steps(), Action: a})
		h.apply(a)
		snaps[h.s.Steps()] = h.s.Snapshot()
	}
	do(request(0)) // #1 #2 #3
	do(deliver(3))
	do(deliver(1))
	do(dropMsg(2)) // not a step: shown with step 2
	do(deliver(5))
	do(deliver(4))
	if h.s.Steps() != 4 {
		t.Fatalf("seed %d: %d steps after four deliveries", h.seed, h.s.Steps())
	}
	for step := 0; step <= 4; step++ {
		r, err := sim.Replay(cfg, ivs, step, nil)
		if err != nil {
			t.Fatalf("seed %d: Replay to %d: %v", h.seed, step, err)
		}
		if r.Steps() != step {
			t.Fatalf("seed %d: Replay to %d stopped at %d", h.seed, step, r.Steps())
		}
		if want, ok := snaps[step]; ok && !reflect.DeepEqual(r.Snapshot(), want) {
			t.Fatalf("seed %d: step %d:\nreplay %s\n  live %s", h.seed, step, dump(r.Snapshot()), dump(want))
		}
	}
	r, _ := sim.Replay(cfg, ivs, 1, nil)
	if got, want := inFlight(r), []string{"#1@-1", "#2@-1", "#4@-1"}; !slices.Equal(got, want) {
		t.Fatalf("seed %d: at step 1 (after the first pick), in flight %v, want %v", h.seed, got, want)
	}
	// A deliver event scheduled by the scenario is one step, not two.
	cfg.Params = &params{Burst: 3}
	cfg.Actions = []sim.Action{req(0, 0), {At: 0, Do: sim.ActDeliver, Msg: 1, From: -1, To: -1}}
	evs := runEvents(t, cfg)
	if got := evs[len(evs)-1].Totals.Steps; got != 2 {
		t.Fatalf("seed %d: a scheduled request and deliver took %d steps, want 2", cfg.Seed, got)
	}
}

// The same interventions give the same trace, byte for byte, live and replayed; and a
// scenario's scheduled network events do too.
func TestNetwork_DeterministicBytes(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30, 40}, &params{Burst: 2}, 1)
	cfg.Seed = 42
	cfg.Network.DelayMin, cfg.Network.DelayMax = 1, 6
	cfg.Network.Loss = 0.1
	plan := map[int][]sim.Action{
		0: {request(0), request(2)},
		2: {netAct(setHold(true))},
		3: {netAct(setFIFO(true), setDelay(2, 9))},
		5: {netAct(setHold(false), setLoss(0.3))},
		8: {request(1), netAct(setFIFO(false))},
	}
	var ivs []sim.Intervention
	var live []byte
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&live))
	if err != nil {
		t.Fatal(err)
	}
	for s.Steps() < 40 {
		for _, a := range plan[s.Steps()] {
			ivs = append(ivs, sim.Intervention{Step: s.Steps(), Action: a})
			if err := s.Apply(a); err != nil {
				t.Fatalf("seed %d: step %d: %v", cfg.Seed, s.Steps(), err)
			}
			delete(plan, s.Steps())
		}
		// In hold mode, pick the newest held message: not the send order.
		if fl := s.InFlight(); len(fl) > 0 && fl[len(fl)-1].At < 0 {
			a := deliver(fl[len(fl)-1].Msg.ID)
			ivs = append(ivs, sim.Intervention{Step: s.Steps(), Action: a})
			if err := s.Apply(a); err != nil {
				t.Fatalf("seed %d: %v", cfg.Seed, err)
			}
			continue
		}
		if ok, err := s.Step(); err != nil || !ok {
			break
		}
	}
	end := s.Steps()
	for range 2 {
		var again []byte
		if _, err := sim.Replay(cfg, ivs, end, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&again)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, live) {
			t.Fatalf("seed %d: the replay's trace differs from the live one\n%s", cfg.Seed, firstLineDiff(again, live))
		}
	}
	if !bytes.Contains(live, []byte(`"type":"deliver"`)) || len(ivs) < 8 {
		t.Fatalf("seed %d: the run did too little to prove anything (%d interventions)", cfg.Seed, len(ivs))
	}

	// Scheduled: the network changes as events of the scenario.
	cfg.Actions = []sim.Action{req(0, 0), req(0, 2)}
	for _, at := range []int{2, 4, 6} {
		a := netAct(setDelay(at-1, at+3), setFIFO(at%4 == 0), setLoss(0.05*float64(at)))
		a.At = at
		cfg.Actions = append(cfg.Actions, a)
	}
	cfg.Actions = append(cfg.Actions, req(7, 1), req(7, 3))
	cfg.Until = 200
	a, b := trace(t, cfg), trace(t, cfg)
	if !bytes.Equal(a, b) {
		t.Fatalf("seed %d: two runs of the same scenario differ", cfg.Seed)
	}
	cfg.Actions[2].Net.DelayMax++ // a different change, a different run
	if c := trace(t, cfg); bytes.Equal(a, c) {
		t.Fatalf("seed %d: a scheduled network change made no difference", cfg.Seed)
	}
}

func firstLineDiff(a, b []byte) string {
	x, y := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(x), len(y)) {
		if x[i] != y[i] {
			return fmt.Sprintf("line %d:\n replay %s\n   live %s", i, x[i], y[i])
		}
	}
	return fmt.Sprintf("%d lines vs %d", len(x), len(y))
}

// A change that is no change, or one out of range, is refused with the field named:
// live as an *ActionError, scheduled as a configuration error.
func TestNetwork_BadChangesNameTheField(t *testing.T) {
	tests := []struct {
		change sim.NetChange
		field  string
	}{
		{sim.NetChange{}, "network"},
		{sim.NetChange{Set: 1 << 6}, "network"},
		{setDelay(3, 1), "delay"},
		{setDelay(-1, 2), "delay"},
		{setDelay(1, sim.MaxDelay+1), "delay"},
		{setLoss(-0.1), "loss"},
		{setLoss(1.5), "loss"},
		{setLoss(math.NaN()), "loss"},
	}
	for _, tc := range tests {
		a := netAct()
		a.Net = tc.change
		h := start(t, announceCfg(1, false))
		h.refused(a)
		err := h.s.Apply(a)
		if !strings.Contains(err.Error(), tc.field+":") {
			t.Errorf("%+v: %v, want the field %q named", tc.change, err, tc.field)
		}
		cfg := announceCfg(1, false)
		cfg.Actions = []sim.Action{a}
		if _, err := sim.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "events[0]: "+tc.field+":") {
			t.Errorf("%+v scheduled: %v, want events[0]: %s: ...", tc.change, err, tc.field)
		}
		var ae *sim.ActionError
		if !errors.As(h.s.Apply(a), &ae) {
			t.Errorf("%+v: not an *ActionError", tc.change)
		}
	}
}

// The liveness bound follows the slowest network the run has had: a request made
// while the network crawls is not reported as pending for the crawl.
func TestNetwork_SlowerNetworkRaisesThePendingBound(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20}, &params{}, 1) // bound 2 x (0 + 4 + 4) = 16
	h := start(t, cfg)
	h.apply(netAct(setDelay(100, 100)))
	h.apply(request(0)) // PING and PONG take 200
	evs := h.finish()
	if v := violations(evs); len(v) != 0 {
		t.Fatalf("seed %d: %v", h.seed, v)
	}
	if len(ofType(evs, sim.EvEnter)) != 1 {
		t.Fatalf("seed %d: node 0 never entered", h.seed)
	}
}

// Hold switched on parks the messages in send order even when their slots were reused
// out of order: with FIFO channels the oldest message of a channel is the one to go.
func TestNetwork_HoldOnParksInSendOrder(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3, Peer: []int{1, 0, 0}}, 1)
	cfg.Network.FIFO = true
	h := start(t, cfg)
	h.apply(request(0)) // #1 #2 #3 on 0 -> 1
	h.apply(dropMsg(1))
	h.apply(dropMsg(2))
	if ok, err := h.s.Step(); !ok || err != nil { // delivers #3; n1 answers PONG #4 on 1 -> 0
		t.Fatalf("seed %d: step: %v %v", h.seed, ok, err)
	}
	h.apply(request(1)) // #5 #6 #7 on 1 -> 0, #5 in a slot freed before #4's
	h.apply(netAct(setHold(true)))
	if got, want := inFlight(h.s), []string{"#4@-1", "#5@-1", "#6@-1", "#7@-1"}; !slices.Equal(got, want) {
		t.Fatalf("seed %d: in flight %v, want %v", h.seed, got, want)
	}
	h.refused(deliver(5))
	h.apply(deliver(4))
	h.apply(deliver(5))
}

// FIFO after hold: messages the user already delivered do not hold back the ones sent
// after hold goes off; only messages still in flight on the channel do.
func TestNetwork_HoldOffForgetsDeliveredMessages(t *testing.T) {
	h := start(t, announceCfg(9, true))
	h.apply(electNow(0)) // #1 -> n1, #2 -> n2, at t=9
	h.apply(netAct(setHold(true)))
	h.apply(deliver(1))
	h.apply(netAct(setHold(false), setDelay(1, 1))) // #2 now arrives at t=1
	h.apply(electNow(0))                            // #3 -> n1 (channel empty), #4 -> n2 (behind #2)
	if got, want := inFlight(h.s), []string{"#2@1", "#3@1", "#4@1"}; !slices.Equal(got, want) {
		t.Fatalf("seed %d: in flight %v, want %v", h.seed, got, want)
	}
	if got := delivered(h.finish(), 2); !slices.Equal(got, []int64{2, 4}) {
		t.Fatalf("seed %d: node 2 got %v, want [2 4]", h.seed, got)
	}
}

// Due answers as InFlight does, message by message: the arrival time of a message in
// the network, -1 while it is held, NotInFlight once it was delivered or dropped, or
// for an id never sent.
func TestNetwork_DueAgreesWithInFlight(t *testing.T) {
	check := func(t *testing.T, h *harness, ids []int64) {
		t.Helper()
		want := map[int64]int{}
		for _, f := range h.s.InFlight() {
			want[f.Msg.ID] = f.At
		}
		due := make([]int, len(ids))
		h.s.Due(ids, due)
		for k, id := range ids {
			w, ok := want[id]
			if !ok {
				w = sim.NotInFlight
			}
			if due[k] != w {
				t.Errorf("seed %d: message #%d due %d, InFlight says %d", h.seed, id, due[k], w)
			}
		}
	}
	all := func(n int64) []int64 {
		ids := make([]int64, 0, n)
		for id := int64(1); id <= n; id++ {
			ids = append(ids, id)
		}
		return ids
	}
	t.Run("timed", func(t *testing.T) {
		cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3}, 2)
		cfg.Network.DelayMax = 6
		h := start(t, cfg)
		h.apply(request(0))
		h.apply(request(1))
		sent := len(h.s.InFlight())
		if sent < 4 {
			t.Fatalf("seed %d: %d messages in flight, want a few", h.seed, sent)
		}
		for range 3 {
			check(t, h, all(8))
			if _, err := h.s.Step(); err != nil {
				t.Fatal(err)
			}
		}
		if f := h.s.InFlight(); len(f) == 0 || f[len(f)-1].Msg.ID-f[0].Msg.ID+1 == int64(len(f)) {
			t.Fatalf("seed %d: in flight %v, want some delivered among those still on their way", h.seed, f)
		}
		check(t, h, all(8))
		check(t, h, []int64{2, 5, 6})
		check(t, h, nil)
	})
	t.Run("held", func(t *testing.T) {
		cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Burst: 3}, 1)
		cfg.Network.Hold = true
		h := start(t, cfg)
		h.apply(request(0)) // #1 #2 #3, held
		h.apply(deliver(2))
		h.apply(dropMsg(3))
		check(t, h, all(4))
	})
}
