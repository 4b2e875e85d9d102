package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The load children of cluster mode are this program run again: under test, the test
// binary is that program, and it becomes the child here.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := run(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "lectureload child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A timed follower's reads become one latency per step sent; a step read twice counts
// once, a step never read is missing, a frame of a step before the run is not counted.
func TestTimedLatencies(t *testing.T) {
	st := sendTimes{Step0: 10, Sent: []int64{1_000_000, 2_000_000, 3_000_000}}
	for _, tt := range []struct {
		name    string
		recv    []stepAt
		lat     []int64
		missing int
	}{
		{"every step once", []stepAt{{11, 1_500_000}, {12, 2_250_000}, {13, 3_001_000}}, []int64{500, 250, 1}, 0},
		{"a step read twice", []stepAt{{11, 1_500_000}, {11, 1_600_000}, {12, 2_250_000}, {13, 3_001_000}}, []int64{500, 250, 1}, 0},
		{"a step never read", []stepAt{{11, 1_500_000}, {13, 3_001_000}}, []int64{500, 1}, 1},
		{"the step before the run", []stepAt{{10, 900_000}, {11, 1_500_000}, {12, 2_250_000}, {13, 3_001_000}}, []int64{500, 250, 1}, 0},
		{"nothing read", nil, nil, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lat, missing := timedLatencies(tt.recv, st)
			if fmt.Sprint(lat) != fmt.Sprint(tt.lat) || missing != tt.missing {
				t.Fatalf("latencies %v, missing %d; want %v, %d", lat, missing, tt.lat, tt.missing)
			}
		})
	}
}

// Loss shows across processes: a gap, a repeat, a missing step, or the followers of one
// process ending short of the others' last frame.
func TestSummaryFindsLossInAnyProcess(t *testing.T) {
	good := func() childResult {
		return childResult{Followers: 10, Timed: 2, N: [3]int{0, 0, 10}, LastMin: [3]int64{-1, -1, 40}, LastMax: [3]int64{0, 0, 40},
			Latencies: []int64{3000, 1000, 2000}}
	}
	for _, tt := range []struct {
		name   string
		change func(*childResult)
		noLoss bool
	}{
		{"all well", func(*childResult) {}, true},
		{"a gap", func(r *childResult) { r.Gaps = 1 }, false},
		{"a repeat", func(r *childResult) { r.Repeats = 1 }, false},
		{"a missing step", func(r *childResult) { r.Missing = 1 }, false},
		{"a follower let go", func(r *childResult) { r.Dropped = 1 }, false},
		{"one process short of the end", func(r *childResult) { r.LastMin[2], r.LastMax[2] = 39, 39 }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			second := good()
			tt.change(&second)
			s := summarize([]childResult{good(), second})
			if s.noLoss() != tt.noLoss {
				t.Fatalf("noLoss() = %v, want %v (%+v)", s.noLoss(), tt.noLoss, s.sum)
			}
			if s.sum.Followers != 20 || len(s.lat) != 6 || s.lat[0] != 1000 || s.pct(1).Microseconds() != 3000 {
				t.Fatalf("the sum: %d followers, latencies %v", s.sum.Followers, s.lat)
			}
		})
	}
}

// The tool end to end, small, with a real nats-server for the cluster: every step
// reaches every follower once, whether it reads through gorilla (timed) or is swept
// outside the poller (the untimed ones past the sample: rawfollower.go).
func TestLoadDeliversEveryStep(t *testing.T) {
	for _, tt := range []struct {
		name    string
		cluster bool
		args    []string
		want    []string
	}{
		{"cluster, every follower timed", true,
			[]string{"-cluster", "2", "-followers", "40", "-rate", "20", "-duration", "500ms", "-proto", "both"},
			[]string{
				"gaps 0, repeats 0; every follower read to the same last frame: true",
				"let go during the run (too slow to take their frames): 0",
				"40 followers (protocol both) over 2 load processes",
				"steps they read: 440 of 440 (missing 0)", // 11 steps, every follower timed at this size
				"protocol 1 (20 followers)", "protocol 2 (20 followers)",
				"no loss, no repeat: met",
			}},
		{"cluster, a sample timed and the others swept", true,
			[]string{"-cluster", "2", "-followers", "400", "-rate", "20", "-duration", "500ms", "-proto", "2", "-pace", "100ms"},
			[]string{
				"by 400 followers; gaps 0, repeats 0; every follower read to the same last frame: true",
				"let go during the run (too slow to take their frames): 0",
				"timed followers: 200; steps they read: 2200 of 2200 (missing 0)", // two in every four of 200 per process
				"protocol 2 (400 followers)",
				"unreadable 0",
				"no loss, no repeat: met",
			}},
		{"one server, a sample timed and the others swept", false,
			[]string{"-followers", "300", "-slow", "0", "-rate", "20", "-duration", "500ms", "-proto", "2", "-pace", "100ms"},
			[]string{
				"frames delivered: 1100 of 1100 expected (100 timed followers x 11), gaps 0, repeats 0, still behind 30 s after the last step 0",
				"protocol 2 (300 followers)",
				"unreadable 0",
				"no loss, no repeat: met",
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.cluster {
				needNATS(t)
			}
			var out bytes.Buffer
			if err := run(tt.args, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Fatalf("the report lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func needNATS(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("nats-server"); err != nil {
		if _, err := os.Stat("/usr/sbin/nats-server"); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("nats-server is not installed")
			}
			t.Skip("nats-server is not installed (Debian: apt-get install nats-server)")
		}
	}
}
