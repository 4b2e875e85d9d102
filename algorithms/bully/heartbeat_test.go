package bully

import (
	"slices"
	"strconv"
	"testing"

	"github.com/teach-dist/playground/algorithms/heartbeat"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

func withHeartbeat(cfg sim.Config, period, timeout int) sim.Config {
	p, err := ParseParams([]byte(`{"heartbeat":{"period":`+strconv.Itoa(period)+`,"timeout":`+strconv.Itoa(timeout)+`}}`), cfg.IDs)
	if err != nil {
		panic(err)
	}
	cfg.Params = p
	return cfg
}

func TestBU6_SuspectedCoordinatorStartsAnElection(t *testing.T) {
	ids := []int{3, 9, 1, 7}
	setup := &sim.Setup{IDs: ids, MaxDelay: 3, Params: Params{Heartbeat: heartbeat.Params{Period: 4, Timeout: 10}}}
	ctx := sim.NewContext(3, ids) // P7 watches P9, the highest
	n := Spec.New(3, setup)
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
	setup := &sim.Setup{IDs: ids, MaxDelay: 3, Params: Params{Heartbeat: heartbeat.Params{Period: 4, Timeout: 10}}}
	ctx := sim.NewContext(2, ids)
	leader := Spec.New(2, setup)
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
		cfg := withHeartbeat(config(5, seed, crash(20, 4)), 4, 12)
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

// A time-out shorter than the heartbeat period suspects a coordinator that is alive:
// elections start although nothing failed.
func TestRunHeartbeatTimeoutTooShortSuspectsTheLiving(t *testing.T) {
	cfg := withHeartbeat(config(5, 1), 6, 3)
	cfg.Until = 100
	evs := run(t, cfg).evs
	if simtest.Count(evs, sim.EvCrash) != 0 {
		t.Fatal("the scenario must not crash anyone")
	}
	rs1 := 0
	for _, e := range evs {
		if e.Type == sim.EvRule && e.Rule == "BU-6" {
			rs1++
		}
	}
	if rs1 == 0 {
		t.Fatal("no process suspected the live coordinator")
	}
	if simtest.CountMsgs(evs, MsgElection) == 0 {
		t.Fatal("suspicion started no election")
	}
	leader, _ := finalLeaders(evs, 5)
	for i, l := range leader {
		if l != 4 {
			t.Fatalf("P%d follows %d: the live highest id must keep winning", i, l)
		}
	}
}

// With a time-out well above period + delay, nobody is ever suspected.
func TestRunHeartbeatPatientDetectorNeverSuspects(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := withHeartbeat(config(6, seed), 4, 4+2*3+1)
		cfg.Until = 300
		evs := run(t, cfg).evs
		for _, e := range evs {
			if e.Type == sim.EvRule && e.Rule == "FD-3" {
				t.Fatalf("seed %d: P%d suspected a live coordinator at t=%d", seed, e.Node, e.T)
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
