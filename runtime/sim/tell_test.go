package sim_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// ---------------------------------------------------------------------------------
// Application messages (ActTell): one process tells another something outside the
// algorithm. The message goes through the network model like any other, is traced as
// send / deliver / drop of type APP, and is never handed to the algorithm.

func tell(at, from, to int) sim.Action {
	return sim.Action{At: at, Do: sim.ActTell, Node: from, To: to, From: -1}
}

// nodeState is node i's canonical state, as the inspector shows it.
func nodeState(s *sim.Sim, i int) string { return string(s.Snapshot().Nodes[i].State) }

func TestTell_GoesThroughTheNetworkModel(t *testing.T) {
	cases := []struct {
		name  string
		setup func(cfg *sim.Config)
		want  []string // every event but the rules of Init and the end
	}{
		{
			name: "delivered after the delay, never to the algorithm",
			want: []string{"t2 send #1 APP 0>1", "t5 deliver #1 APP 0>1"},
		},
		{
			name:  "lost with loss 1",
			setup: func(cfg *sim.Config) { cfg.Network.Loss = 1 },
			want:  []string{"t2 send #1 APP 0>1", "t2 drop #1 APP 0>1 at n0: lost"},
		},
		{
			name: "cut by a partition at the send",
			setup: func(cfg *sim.Config) {
				cfg.Actions = append([]sim.Action{part(1, []int{0}, []int{1, 2})}, cfg.Actions...)
			},
			want: []string{"t1 partition [[10] [20 30]]", "t2 send #1 APP 0>1", "t2 drop #1 APP 0>1 at n0: partition"},
		},
		{
			name: "cut by a partition on the way",
			setup: func(cfg *sim.Config) {
				cfg.Actions = append(cfg.Actions, part(3, []int{0}, []int{1, 2}))
			},
			want: []string{"t2 send #1 APP 0>1", "t3 partition [[10] [20 30]]", "t5 drop #1 APP 0>1 at n1: partition"},
		},
		{
			name: "lost when the receiver crashes",
			setup: func(cfg *sim.Config) {
				cfg.Actions = append(cfg.Actions, crash(3, 1))
			},
			want: []string{"t2 send #1 APP 0>1", "t3 crash n1", "t3 drop #1 APP 0>1 at n1: receiver crashed"},
		},
		{
			name: "dropped by a filter on its type",
			setup: func(cfg *sim.Config) {
				cfg.Actions = append(cfg.Actions, dropWhere(3, -1, -1, sim.AppMessage))
			},
			want: []string{"t2 send #1 APP 0>1", "t3 drop #1 APP 0>1 at n1: dropped by the user"},
		},
		{
			name: "a crashed teller tells nothing",
			setup: func(cfg *sim.Config) {
				cfg.Actions = append([]sim.Action{crash(1, 0)}, cfg.Actions...)
			},
			want: []string{"t1 crash n0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 3)
			cfg.Actions = []sim.Action{tell(2, 0, 1)}
			if tc.setup != nil {
				tc.setup(&cfg)
			}
			h := start(t, cfg)
			before := nodeState(h.s, 1)
			evs := h.finish()
			checkSeq(t, cfg.Seed, evs)
			var got []string
			for _, e := range evs {
				if e.Type != sim.EvEnd && !(e.Type == sim.EvRule && e.T == 0) {
					got = append(got, show(&e))
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("seed %d: events\n got %q\nwant %q", cfg.Seed, got, tc.want)
			}
			if after := nodeState(h.s, 1); tc.name != "lost when the receiver crashes" && after != before {
				t.Errorf("seed %d: the receiver's state changed from %s to %s: the algorithm saw the APP", cfg.Seed, before, after)
			}
			end := evs[len(evs)-1].Totals
			sent := 1
			if tc.name == "a crashed teller tells nothing" {
				sent = 0
			}
			if end.App != sent || end.Messages != 0 || end.Delivered != 0 || end.Dropped != 0 {
				t.Errorf("seed %d: totals %+v: an APP counts in app only", cfg.Seed, *end)
			}
		})
	}
}

// In hold mode an APP waits like any message until the user picks it; delivering it
// is a step of its own and still reaches no algorithm.
func TestTell_HeldInHoldMode(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 2)
	cfg.Network.Hold = true
	h := start(t, cfg)
	h.apply(tell(0, 2, 0))
	if got := inFlight(h.s); !slices.Equal(got, []string{"#1@-1"}) {
		t.Fatalf("seed %d: in flight %v, want the APP held", cfg.Seed, got)
	}
	h.stepAll()
	if got := inFlight(h.s); !slices.Equal(got, []string{"#1@-1"}) {
		t.Fatalf("seed %d: the network delivered a held APP by itself: %v", cfg.Seed, got)
	}
	if h.s.Quiescent() {
		t.Fatalf("seed %d: quiescent with an APP still held", cfg.Seed)
	}
	before, steps := nodeState(h.s, 0), h.s.Steps()
	h.apply(deliver(1))
	evs := h.rec.Events
	if last := show(&evs[len(evs)-1]); last != "t0 deliver #1 APP 2>0" {
		t.Fatalf("seed %d: last event %q, want the APP delivered and nothing after it", cfg.Seed, last)
	}
	if nodeState(h.s, 0) != before {
		t.Errorf("seed %d: the receiver's state changed: the algorithm saw the APP", cfg.Seed)
	}
	if h.s.Steps() != steps+1 {
		t.Errorf("seed %d: delivering a held APP took %d steps, want 1", cfg.Seed, h.s.Steps()-steps)
	}
	if !h.s.Quiescent() {
		t.Errorf("seed %d: not quiescent once the APP is delivered", cfg.Seed)
	}
}

// FIFO channels are shared: an algorithm message sent after an APP on the same
// channel does not overtake it.
func TestTell_FIFOKeepsAppAndAlgorithmMessagesInOrder(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		cfg := cfgOf(&pingSpec, []int{10, 20, 30}, &params{Peer: []int{1, 0, 0}}, 0)
		cfg.Seed = seed
		cfg.Network = sim.Network{DelayMin: 1, DelayMax: 6, FIFO: true}
		cfg.Actions = []sim.Action{tell(0, 0, 1), req(0, 0)} // APP #1, then PING #2 on 0 -> 1
		evs := runEvents(t, cfg)
		if got := delivered(evs, 1); len(got) < 2 || got[0] != 1 || got[1] != 2 {
			t.Fatalf("seed %d: node 1 received %v, want the APP #1 before the PING #2", seed, got)
		}
	}
}

// The same run gives the same bytes; the APP has no payload keys, and the end event
// counts it apart from the algorithm's messages.
func TestTell_TraceIsDeterministicAndPinned(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 0)
	cfg.Seed = 42
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 5}
	cfg.CS = 1
	cfg.Actions = []sim.Action{tell(0, 0, 1), tell(0, 0, 2), tell(1, 2, 1), req(2, 1)}
	a, b := trace(t, cfg), trace(t, cfg)
	if !bytes.Equal(a, b) {
		t.Fatalf("seed %d: two runs differ", cfg.Seed)
	}
	want := `{"seq":0,"t":0,"type":"rule","node":10,"rule":"PI1"}
{"seq":1,"t":0,"type":"rule","node":20,"rule":"PI1"}
{"seq":2,"t":0,"type":"rule","node":30,"rule":"PI1"}
{"seq":3,"t":0,"type":"send","node":10,"msg":{"id":1,"type":"APP","from":10,"to":20}}
{"seq":4,"t":0,"type":"send","node":10,"msg":{"id":2,"type":"APP","from":10,"to":30}}
{"seq":5,"t":1,"type":"send","node":30,"msg":{"id":3,"type":"APP","from":30,"to":20}}
{"seq":6,"t":2,"type":"request","node":20}
{"seq":7,"t":2,"type":"rule","node":20,"rule":"PA1"}
{"seq":8,"t":2,"type":"send","node":20,"msg":{"id":4,"type":"PING","from":20,"to":30,"ts":1,"n":1}}
{"seq":9,"t":3,"type":"deliver","node":20,"msg":{"id":1,"type":"APP","from":10,"to":20}}
{"seq":10,"t":4,"type":"deliver","node":30,"msg":{"id":4,"type":"PING","from":20,"to":30,"ts":1,"n":1}}
{"seq":11,"t":4,"type":"rule","node":30,"rule":"PH1"}
{"seq":12,"t":4,"type":"send","node":30,"msg":{"id":5,"type":"PONG","from":30,"to":20,"ts":1,"n":1,"seen":[30,1],"q":[1]}}
{"seq":13,"t":5,"type":"deliver","node":30,"msg":{"id":2,"type":"APP","from":10,"to":30}}
{"seq":14,"t":5,"type":"deliver","node":20,"msg":{"id":3,"type":"APP","from":30,"to":20}}
{"seq":15,"t":9,"type":"deliver","node":20,"msg":{"id":5,"type":"PONG","from":30,"to":20,"ts":1,"n":1,"seen":[30,1],"q":[1]}}
{"seq":16,"t":9,"type":"rule","node":20,"rule":"PH2"}
{"seq":17,"t":9,"type":"rule","node":20,"rule":"PE1"}
{"seq":18,"t":9,"type":"enter","node":20}
{"seq":19,"t":10,"type":"rule","node":20,"rule":"PR1"}
{"seq":20,"t":10,"type":"exit","node":20}
{"seq":21,"t":10,"type":"end","messages":2,"entries":1,"delivered":2,"dropped":0,"elections":0,"violations":0,"steps":10,"app":3}
`
	if string(a) != want {
		t.Fatalf("seed %d: trace\n%s\nwant\n%s", cfg.Seed, a, want)
	}
}

// Without a tell the end event has no app key: traces of older runs do not change.
func TestTell_EndHasNoAppKeyWithoutTells(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 1)
	cfg.Actions = []sim.Action{req(0, 0)}
	if b := trace(t, cfg); bytes.Contains(b, []byte(`"app"`)) {
		t.Fatalf("seed %d: %s", cfg.Seed, b)
	}
}

func TestTell_BadActionsAreRejected(t *testing.T) {
	cases := []struct {
		name string
		a    sim.Action
		want string
	}{
		{"to itself", tell(0, 1, 1), "to: P20 would tell itself"},
		{"to nobody", tell(0, 1, 3), "to: index 3 does not exist"},
		{"to missing", tell(0, 1, -1), "to: tell needs the id of the process to tell"},
		{"from nobody", tell(0, 3, 0), "node: index 3 does not exist"},
		{"from missing", tell(0, -1, 0), `node: "tell" needs a node`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 1)
			cfg.Actions = []sim.Action{tc.a}
			if _, err := sim.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "events[0]: "+tc.want) {
				t.Fatalf("scheduled: %v, want %q", err, tc.want)
			}
			cfg.Actions = nil
			h := start(t, cfg)
			h.refused(tc.a)
		})
	}
	t.Run("from a crashed process, live", func(t *testing.T) {
		h := start(t, cfgOf(&pingSpec, []int{10, 20, 30}, nil, 1))
		h.apply(crash(0, 0))
		h.refused(tell(0, 0, 1))
	})
}

// appSender is an algorithm that (wrongly) sends a message typed APP: the kernel
// would take it for a tell and keep it from the receiver, so it is an error.
type appSender struct{}

func (appSender) Step(ctx *sim.Context, in *sim.Input) {
	if in.Kind == sim.Request {
		ctx.Send((ctx.Self()+1)%ctx.N(), sim.Message{Type: sim.AppMessage})
	}
}
func (appSender) Clone() sim.Node           { return appSender{} }
func (appSender) Encode(w *sim.StateWriter) {}

func TestTell_AlgorithmsCannotSendTheAppType(t *testing.T) {
	spec := sim.Spec{Slug: "test-app", Family: sim.Mutex, New: func(int, *sim.Setup) sim.Node { return appSender{} }}
	cfg := sim.Config{Spec: &spec, IDs: []int{1, 2}, Network: sim.Network{DelayMin: 1, DelayMax: 1},
		Actions: []sim.Action{req(0, 0)}}
	s, err := sim.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run()
	if err == nil || !strings.Contains(err.Error(), "reserved for application messages") || errors.As(err, new(*sim.ActionError)) {
		t.Fatalf("Run = %v, want the kernel to refuse an algorithm message typed APP", err)
	}
}

// A tell recorded as a live intervention replays to the same run.
func TestTell_ReplayOfALiveTell(t *testing.T) {
	cfg := cfgOf(&pingSpec, []int{10, 20, 30}, nil, 0)
	cfg.Network = sim.Network{DelayMin: 1, DelayMax: 4}
	cfg.Seed = 9
	cfg.Actions = []sim.Action{req(3, 1)}
	var live []byte
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&live))
	if err != nil {
		t.Fatal(err)
	}
	iv := sim.Intervention{Step: 0, Action: tell(0, 2, 1)}
	if err := s.Apply(iv.Action); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 4; k++ {
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	var replayed []byte
	if _, err := sim.Replay(cfg, []sim.Intervention{iv}, 4, sim.NewEncoder(cfg.Spec, cfg.IDs).Lines(&replayed)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(live, replayed) || !bytes.Contains(live, []byte(`"type":"APP"`)) {
		t.Fatalf("seed %d: live\n%s\nreplayed\n%s", cfg.Seed, live, replayed)
	}
}
