package bully

import (
	"slices"
	"testing"

	"github.com/teach-dist/playground/algorithms/heartbeat"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// withHeartbeat turns the failure detector on with hb, its params as JSON.
func withHeartbeat(cfg sim.Config, hb string) sim.Config {
	p, err := ParseParams([]byte(`{"heartbeat":`+hb+`}`), cfg.IDs)
	if err != nil {
		panic(err)
	}
	cfg.Params = p
	return cfg
}

func TestBU6_SuspectedCoordinatorStartsAnElection(t *testing.T) {
	ids := []int{3, 9, 1, 7}
	setup := &sim.Setup{IDs: ids, MaxDelay: 3, Params: Params{Heartbeat: heartbeat.Params{Period: 4, Delay: 6}}}
	ctx := sim.NewContext(3, ids) // P7 watches P9, the highest
	n := Spec().New(3, setup)
	n.Step(ctx, &sim.Input{Kind: sim.Init})
	if got := string(sim.EncodeState(n)); got != `{"state":"ELECTION-OFF","waiting":"none","leader":9,"answered":[],"watching":9}` {
		t.Fatalf("state after init: %s", got)
	}
	ctx.Reset(3)
	n.Step(ctx, &sim.Input{Kind: sim.Timer, Timer: heartbeat.TimerSuspect})
	if got := ctx.Rules(); !slices.Equal(got, []string{"FD-3", "BU-6", "RE1"}) {
		t.Fatalf("rules %v, want FD-3 BU-6 RE1", got)
	}
	sent := ctx.Sent()
	if len(sent) != 1 || sent[0].Type != MsgElection || ids[sent[0].To] != 9 {
		t.Fatalf("sent %+v, want one ELECTION to P9", sent)
	}
}

func TestBU6_LeaderBeatsAndFollowersWatch(t *testing.T) {
	ids := []int{0, 1, 2}
	setup := &sim.Setup{IDs: ids, MaxDelay: 3, Params: Params{Heartbeat: heartbeat.Params{Period: 4, Delay: 6}}}
	ctx := sim.NewContext(2, ids)
	leader := Spec().New(2, setup)
	leader.Step(ctx, &sim.Input{Kind: sim.Init})
	if got := ctx.Rules(); !slices.Equal(got, []string{"BU-1", "FD-1"}) {
		t.Fatalf("leader at init: %v", got)
	}
	if len(ctx.Sent()) != 2 {
		t.Fatalf("leader sent %v, want a heartbeat to each other process", ctx.Sent())
	}
}

// The notes' point: with a failure detector, a crashed coordinator is noticed without
// anyone being told, and an election follows by itself.
func TestRunHeartbeatDetectsTheCrashAndElects(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		cfg := withHeartbeat(config(5, seed, crash(20, 4)), `{"period":4}`)
		cfg.Until = 200
		evs := run(t, cfg).evs
		crashSeq := -1
		suspected := false
		for _, e := range evs {
			if e.Type == sim.EvCrash {
				crashSeq = int(e.Seq)
			}
			if e.Type == sim.EvRule && e.Rule == "FD-3" {
				if crashSeq < 0 {
					t.Fatalf("seed %d: P%d suspected the coordinator before it crashed", seed, e.Node)
				}
				suspected = true
			}
			if e.Type == sim.EvRule && e.Rule == "BU-6" && crashSeq < 0 {
				t.Fatalf("seed %d: election before the crash", seed)
			}
		}
		if !suspected {
			t.Fatalf("seed %d: nobody suspected the crashed coordinator", seed)
		}
		leader, alive := finalLeaders(evs, 5)
		for i := range leader {
			if alive[i] && leader[i] != 3 {
				t.Fatalf("seed %d: P%d follows %d, want 3", seed, i, leader[i])
			}
		}
		// The only leader violation allowed is the one before anyone noticed.
		for _, e := range evs {
			if e.Type == sim.EvViolation && e.Detail != "all take P4 as leader, but P4 is crashed or cut off" {
				t.Fatalf("seed %d: unexpected violation %s: %s", seed, e.Property, e.Detail)
			}
		}
	}
}

// 003's asynchronous case: "D too small => inaccurate, alive reported dead". A D
// guessed below the real delays suspects a coordinator that is alive, elections start
// although nothing failed, and the live highest id keeps winning. The explicit
// timeout of earlier links (a silence shorter than the period) does the same.
func TestRunHeartbeatDTooSmallSuspectsTheLiving(t *testing.T) {
	slow := config(5, 1)
	slow.Network = sim.Network{DelayMin: 1, DelayMax: 5, FIFO: true}
	tests := []struct {
		name string
		cfg  sim.Config
	}{
		{"D=1 under delays up to 5", withHeartbeat(slow, `{"period":6,"delay":1}`)},
		{"earlier link: timeout 3 under period 6", withHeartbeat(config(5, 1), `{"period":6,"timeout":3}`)},
	}
	for _, tc := range tests {
		tc.cfg.Until = 100
		evs := run(t, tc.cfg).evs
		if simtest.Count(evs, sim.EvCrash) != 0 {
			t.Fatalf("%s: the scenario must not crash anyone", tc.name)
		}
		suspicions := 0
		for _, e := range evs {
			if e.Type == sim.EvRule && e.Rule == "BU-6" {
				suspicions++
			}
		}
		if suspicions == 0 {
			t.Fatalf("%s: no process suspected the live coordinator", tc.name)
		}
		if simtest.CountMsgs(evs, MsgElection) == 0 {
			t.Fatalf("%s: suspicion started no election", tc.name)
		}
		leader, _ := finalLeaders(evs, 5)
		for i, l := range leader {
			if l != 4 {
				t.Fatalf("%s: P%d follows %d: the live highest id must keep winning", tc.name, i, l)
			}
		}
	}
}

// 003's synchronous case: with D the network's largest delay (the default), a watcher
// waiting T+D never suspects a live coordinator, whatever the delays drawn.
func TestRunHeartbeatTPlusDNeverSuspectsTheLiving(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for _, nw := range []sim.Network{{DelayMin: 1, DelayMax: 3}, {DelayMin: 1, DelayMax: 5, FIFO: true}} {
			cfg := withHeartbeat(config(6, seed), `{"period":4}`)
			cfg.Network = nw
			cfg.Until = 300
			evs := run(t, cfg).evs
			for _, e := range evs {
				if e.Type == sim.EvRule && e.Rule == "FD-3" {
					t.Fatalf("seed %d, delays up to %d: P%d suspected a live coordinator at t=%d", seed, nw.DelayMax, e.Node, e.T)
				}
			}
			if got := simtest.CountMsgs(evs, heartbeat.Msg); got < 5*(300/4-1) {
				t.Fatalf("seed %d: only %d heartbeats", seed, got)
			}
			if v := simtest.Violations(evs); len(v) > 0 {
				t.Fatalf("seed %d: %v", seed, v)
			}
		}
	}
}
