package session

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

const raHold = `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":1,"network":{"hold":true}}`

func deliverCmd(id int64) Command {
	return Command{Kind: Act, Act: sim.ActionJSON{Do: "deliver", Msg: id}}
}

func netCmd(c sim.NetChange) Command {
	j, err := sim.ActionJSONOf(&sim.Action{Do: sim.ActNetwork, Net: c}, nil)
	if err != nil {
		panic(err)
	}
	return Command{Kind: Act, Act: j}
}

// inflightIDs lists a snapshot's messages in flight as id@arrival.
func inflightIDs(t *testing.T, f frame) []string {
	t.Helper()
	var out []string
	for _, x := range f.Inflight {
		var m struct{ ID int64 }
		if err := json.Unmarshal(x.Msg, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join([]string{itoa(int(m.ID)), itoa(x.At)}, "@"))
	}
	return out
}

func itoa(v int) string { return strconv.Itoa(v) }

// deliverIDs lists the ids of the messages delivered in the trace's events, in order.
func deliverIDs(t *testing.T, evs []json.RawMessage) []int64 {
	t.Helper()
	var out []int64
	for _, e := range evs {
		var ev struct {
			Type string
			Msg  struct{ ID int64 }
		}
		if err := json.Unmarshal(e, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type == "deliver" {
			out = append(out, ev.Msg.ID)
		}
	}
	return out
}

// Each delivery the user picks is a step of its own: the timeline stops between two
// picks, a step forward from there replays the next pick, and sim.Replay of the
// session's recipe agrees at every step.
func TestUserDeliveriesAreSeparateSteps(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, raHold)
	do(t, s, c, act(sim.ActRequest, 0)) // REQUEST #1 -> P1, #2 -> P2, held
	c.next(t, "events")
	for k, id := range []int64{2, 1} { // not the send order
		do(t, s, c, deliverCmd(id))
		f := c.next(t, "events", "error")
		if f.Type != "events" || f.Step != k+1 || f.Horizon != k+1 || len(f.Batches) != 1 || f.Batches[0].Step != k+1 {
			t.Fatalf("delivering #%d: want one batch at step %d: %s", id, k+1, f.raw)
		}
		if got := deliverIDs(t, f.Batches[0].Events); !slices.Equal(got, []int64{id}) {
			t.Fatalf("delivering #%d delivered %v", id, got)
		}
	}
	// Seek lands between the two picks.
	snaps := map[int]frame{}
	for _, step := range []int{1, 0, 2, 1} {
		do(t, s, c, Command{Kind: Seek, Step: step})
		f := c.next(t, "snapshot")
		if f.Step != step {
			t.Fatalf("seek %d went to step %d", step, f.Step)
		}
		snaps[step] = f
	}
	held := func(step int) []string { return inflightIDs(t, snaps[step]) }
	if got := held(0); !slices.Equal(got, []string{"1@-1", "2@-1"}) {
		t.Fatalf("step 0: in flight %v", got)
	}
	if got := held(1); !slices.Contains(got, "1@-1") || slices.Contains(got, "2@-1") {
		t.Fatalf("step 1, between the picks: in flight %v; want #1 still held and #2 delivered", got)
	}
	if got := held(2); slices.Contains(got, "1@-1") || slices.Contains(got, "2@-1") {
		t.Fatalf("step 2: in flight %v", got)
	}
	if snaps[0].Interventions != 1 || snaps[1].Interventions != 2 || snaps[2].Interventions != 3 {
		t.Fatalf("interventions shown at steps 0, 1, 2: %d %d %d", snaps[0].Interventions, snaps[1].Interventions, snaps[2].Interventions)
	}
	// sim.Replay of the recipe gives the session's view at every step.
	r, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{r.Interventions[0].Step, r.Interventions[1].Step, r.Interventions[2].Step}; !slices.Equal(got, []int{0, 0, 1}) {
		t.Fatalf("recorded at steps %v, want [0 0 1]", got)
	}
	for step, f := range snaps {
		sm, err := sim.Replay(r.Setup.Config, r.Interventions, step, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sm.Steps() != step {
			t.Fatalf("sim.Replay to %d stopped at %d", step, sm.Steps())
		}
		snap := sm.Snapshot()
		for i, n := range f.Nodes {
			if !bytes.Equal(snap.Nodes[i].State, n.State) {
				t.Fatalf("step %d node %d: replayed %s, shown %s", step, i, snap.Nodes[i].State, n.State)
			}
		}
		if len(snap.InFlight) != len(f.Inflight) {
			t.Fatalf("step %d: replay has %d in flight, the session %d", step, len(snap.InFlight), len(f.Inflight))
		}
	}
	// From step 0, a step forward replays the first pick, and only it.
	do(t, s, c, Command{Kind: Seek, Step: 0})
	c.next(t, "snapshot")
	for k, want := range []int64{2, 1} {
		do(t, s, c, Command{Kind: Step})
		f := c.next(t, "events")
		if f.Step != k+1 || !slices.Equal(deliverIDs(t, f.Batches[0].Events), []int64{want}) {
			t.Fatalf("step %d forward: %s", k+1, f.raw)
		}
	}
	// A different pick at step 1 rewrites the future from there.
	do(t, s, c, Command{Kind: Seek, Step: 1})
	c.next(t, "snapshot")
	do(t, s, c, deliverCmd(3)) // P2's REPLY to P0
	f := c.next(t, "events", "error")
	if f.Type != "events" || f.Step != 2 || f.Horizon != 2 || f.Interventions != 3 {
		t.Fatalf("a new pick after seeking back: %s", f.raw)
	}
	r, _ = s.Recipe(context.Background())
	if n := len(r.Interventions); n != 3 || r.Interventions[2].Action.Msg != 3 {
		t.Fatalf("recorded %+v; want the request and the picks #2, #3", r.Interventions)
	}
}

// The network changed live is an intervention: recorded, streamed with the new model
// and the messages' new arrival times, and replayed by a seek.
func TestNetworkChangeIsRecordedAndReplayed(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"seed":2,"network":{"delay":[2,2]}}`)
	do(t, s, c, act(sim.ActRequest, 0)) // #1, #2 arrive at t=2
	c.next(t, "events")
	do(t, s, c, netCmd(sim.NetChange{Set: sim.NetHold, Hold: true}))
	f := c.next(t, "events", "error")
	if f.Type != "events" {
		t.Fatalf("hold on: %s", f.raw)
	}
	var b struct {
		Network struct {
			Delay []int
			FIFO  bool
			Loss  float64
			Hold  bool
		}
		Retime map[string]int
	}
	if err := json.Unmarshal(firstBatch(t, f.raw), &b); err != nil {
		t.Fatal(err)
	}
	if !b.Network.Hold || !slices.Equal(b.Network.Delay, []int{2, 2}) || len(b.Retime) != 2 || b.Retime["1"] != -1 || b.Retime["2"] != -1 {
		t.Fatalf("hold on: the batch should carry the network and both messages held: %s", f.raw)
	}
	do(t, s, c, Command{Kind: Step})
	if f := c.next(t, "state", "events"); f.Type != "state" || !f.Quiet {
		t.Fatalf("hold on: a step moved a message: %s", f.raw)
	}
	do(t, s, c, deliverCmd(1)) // step 1; P1 sends REPLY #3, held
	c.next(t, "events")
	do(t, s, c, netCmd(sim.NetChange{Set: sim.NetHold | sim.NetDelay, DelayMin: 5, DelayMax: 5}))
	f = c.next(t, "events")
	b.Retime = nil
	if err := json.Unmarshal(firstBatch(t, f.raw), &b); err != nil {
		t.Fatal(err)
	}
	if b.Network.Hold || len(b.Retime) != 2 || b.Retime["2"] != 5 || b.Retime["3"] != 5 {
		t.Fatalf("hold off: both held messages should arrive at t=5: %s", f.raw)
	}
	// A change of FIFO alone carries the network, and retimes nothing.
	do(t, s, c, netCmd(sim.NetChange{Set: sim.NetFIFO, FIFO: true}))
	f = c.next(t, "events")
	if !strings.Contains(string(f.raw), `"network":{"delay":[5,5],"fifo":true,"loss":0,"hold":false}`) || strings.Contains(string(f.raw), `"retime"`) {
		t.Fatalf("fifo on: %s", f.raw)
	}
	// The snapshot says which network is in force at its step.
	for step, want := range []string{
		`"network":{"delay":[2,2],"fifo":false,"loss":0,"hold":true}`,
		`"network":{"delay":[5,5],"fifo":true,"loss":0,"hold":false}`,
	} {
		do(t, s, c, Command{Kind: Seek, Step: step})
		if f := c.next(t, "snapshot"); !strings.Contains(string(f.raw), want) {
			t.Fatalf("seek %d: %s", step, f.raw)
		}
	}
	evs := stepAll(t, s, c)
	if got := deliverIDs(t, evs); len(got) < 2 || got[0] != 2 || got[1] != 3 {
		t.Fatalf("after the replay the run delivered %v, want #2 and #3 first", got)
	}
	r, _ := s.Recipe(context.Background())
	if len(r.Interventions) != 5 || r.Interventions[1].Action.Do != sim.ActNetwork || r.Interventions[3].Step != 1 {
		t.Fatalf("recorded %+v", r.Interventions)
	}
}

func firstBatch(t *testing.T, raw []byte) []byte {
	t.Helper()
	var f struct{ Batches []json.RawMessage }
	if err := json.Unmarshal(raw, &f); err != nil || len(f.Batches) == 0 {
		t.Fatalf("no batch: %s", raw)
	}
	return f.Batches[0]
}

// Partition and heal from the playground: ids in, groups on the nodes out; messages
// across the cut are dropped.
func TestPartitionAndHealFromThePlayground(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"ids":[10,20,30],"seed":2}`)
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "partition", Groups: [][]int{{10, 20}, {30}}}})
	f := c.next(t, "events", "error")
	if f.Type != "events" || !strings.Contains(string(f.raw), `"type":"partition","groups":[[10,20],[30]]`) {
		t.Fatalf("partition: %s", f.raw)
	}
	do(t, s, c, act(sim.ActRequest, 10))
	f = c.next(t, "events")
	if !strings.Contains(string(f.raw), `"reason":"partition"`) {
		t.Fatalf("a request across the cut was not dropped: %s", f.raw)
	}
	do(t, s, c, Command{Kind: Act, Act: sim.ActionJSON{Do: "heal"}})
	if f := c.next(t, "events", "error"); !strings.Contains(string(f.raw), `"type":"heal"`) {
		t.Fatalf("heal: %s", f.raw)
	}
	for _, tc := range []struct {
		cmd  Command
		want string
	}{
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "partition"}}, "groups:"},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "partition", Groups: [][]int{{10}, {99}}}}, "groups[1][0]: 99"},
		{Command{Kind: Act, Act: sim.ActionJSON{Do: "partition", Groups: [][]int{{10, 20}, {20}}}}, "groups[1][0]: 20 is in two groups"},
		{netCmd(sim.NetChange{}), "network:"},
		{netCmd(sim.NetChange{Set: sim.NetDelay, DelayMin: 4, DelayMax: 2}), "delay:"},
		{netCmd(sim.NetChange{Set: sim.NetLoss, Loss: 3}), "loss:"},
	} {
		do(t, s, c, tc.cmd)
		f := c.next(t, "error")
		if f.Code != protocol.CodeBadField || !strings.Contains(f.Error, tc.want) {
			t.Errorf("%+v: %s, want bad-field naming %q", tc.cmd, f.raw, tc.want)
		}
	}
}

// A pick recorded while the run had a step of its own to take (the end of a stay in
// the CS) is replayed as that step, before the run's own: stepping forward again gives
// the very events seen live.
func TestStepForwardReplaysAPickBeforeTheRunsOwnStep(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, c := start(t, m, `{"version":1,"algorithm":"ricart-agrawala","nodes":2,"seed":1,"cs":2,"network":{"hold":true}}`)
	var live [][]json.RawMessage // events per step, live
	collect := func() {
		t.Helper()
		f := c.next(t, "events", "error")
		if f.Type != "events" {
			t.Fatalf("%s", f.raw)
		}
		for _, b := range f.Batches {
			for len(live) <= b.Step {
				live = append(live, nil)
			}
			live[b.Step] = append(live[b.Step], b.Events...)
		}
	}
	do(t, s, c, act(sim.ActRequest, 0)) // REQUEST #1, held
	collect()
	do(t, s, c, deliverCmd(1)) // step 1: P1 replies, REPLY #2 held
	collect()
	do(t, s, c, deliverCmd(2)) // step 2: P0 enters; its CS ends at t=2
	collect()
	do(t, s, c, act(sim.ActRequest, 1)) // REQUEST #3, held
	collect()
	do(t, s, c, deliverCmd(3)) // step 3, although the end of the CS is due
	collect()
	do(t, s, c, Command{Kind: Step}) // step 4: the CS ends
	collect()
	if len(live) != 5 || !bytes.Contains(joinRaw(live[3]), []byte(`"type":"deliver"`)) {
		t.Fatalf("live steps: %d, step 3 %s", len(live), joinRaw(live[3]))
	}
	do(t, s, c, Command{Kind: Seek, Step: 0})
	c.next(t, "snapshot")
	for step := 1; step <= 4; step++ {
		do(t, s, c, Command{Kind: Step})
		f := c.next(t, "events")
		var got []json.RawMessage
		for _, b := range f.Batches {
			got = append(got, b.Events...)
		}
		if f.Step != step || !bytes.Equal(joinRaw(got), joinRaw(live[step])) {
			t.Fatalf("step %d forward again:\n got %s\nlive %s", step, joinRaw(got), joinRaw(live[step]))
		}
	}
}

func joinRaw(evs []json.RawMessage) []byte {
	var b []byte
	for _, e := range evs {
		b = append(append(b, e...), '\n')
	}
	return b
}
