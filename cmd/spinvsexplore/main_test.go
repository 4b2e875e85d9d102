package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// needSpin returns spin and the C compiler, or skips: CI does not install SPIN
// (.ci/run), so these tests only run where someone has.
func needSpin(t *testing.T) (string, string) {
	t.Helper()
	spin, cc, err := spinTools("spin", "cc")
	if err != nil {
		t.Skipf("skipped, SPIN is not here: %v", err)
	}
	return spin, cc
}

// testSpin builds pan unoptimised (quicker to compile than to run here), with room
// for the small searches of the tests.
func testSpin(t *testing.T) *spinSetup {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped with -short: builds and runs pan, about a minute on a busy machine")
	}
	spin, cc := needSpin(t)
	return &spinSetup{spin: spin, cc: cc, workDir: t.TempDir(), optimize: "-O0", depth: 100000, memLimitMB: 512, timeout: 5 * time.Minute}
}

func TestScenarioIsTheTwinsQuestion(t *testing.T) {
	for n := minNodes; n <= maxNodes; n++ {
		b, err := scenarioJSON(n)
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		sc, err := scenarios.Parse(b)
		if err != nil {
			t.Fatalf("N=%d: the scenario file is refused: %v", n, err)
		}
		cfg, err := sc.Config()
		if err != nil {
			t.Fatalf("N=%d: %v", n, err)
		}
		// The twin's ids are 0..N-1 (its tie-break compares them), its channels FIFO
		// and lossless, and a process may leave the CS (cs > 0).
		ids := make([]int, n)
		for p := range ids {
			ids[p] = p
		}
		if cfg.Spec.Slug != "ricart-agrawala" || !slices.Equal(cfg.IDs, ids) || !cfg.Network.FIFO ||
			cfg.Network.Loss != 0 || cfg.Network.Hold || cfg.CS <= 0 {
			t.Errorf("N=%d: algorithm %q, ids %v, network %+v, cs %d; want ricart-agrawala, ids %v, FIFO, no loss, a CS one may leave",
				n, cfg.Spec.Slug, cfg.IDs, cfg.Network, cfg.CS, ids)
		}
		// Each process asks once, at time 0, in id order: the twin's start.
		if len(sc.Events) != n {
			t.Fatalf("N=%d: %d events, want %d requests", n, len(sc.Events), n)
		}
		for p, e := range sc.Events {
			if e.At != 0 || e.Do != "request" || e.Node == nil || *e.Node != p {
				t.Errorf("N=%d: event %d is %+v, want a request of node %d at 0", n, p, e, p)
			}
		}
	}
	for _, n := range []int{1, 9} {
		if _, err := scenarioJSON(n); err == nil || !strings.Contains(err.Error(), "2 to 8") {
			t.Errorf("N=%d: error %v, want one naming the range 2 to 8", n, err)
		}
	}
}

func TestParseNodes(t *testing.T) {
	tests := []struct {
		in   string
		want []int // nil: refused
	}{
		{in: "4", want: []int{4}},
		{in: "4, 5", want: []int{4, 5}},
		{in: "1"},
		{in: "9"},
		{in: "4,x"},
		{in: ""},
	}
	for _, tt := range tests {
		got, err := parseNodes(tt.in)
		if (err != nil) != (tt.want == nil) || !slices.Equal(got, tt.want) {
			t.Errorf("parseNodes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

// The explorer's row says how many workers it ran, as its summary reports them.
func TestExploreRowSaysTheWorkers(t *testing.T) {
	tests := []struct {
		full    bool
		workers int
		want    string
	}{
		{full: false, workers: 2, want: "playground explore (reductions the algorithm declares, 2 workers)"},
		{full: true, workers: 1, want: "playground explore --full (1 worker)"},
	}
	for _, tt := range tests {
		r := &exploreRun{res: &explore.Result{Result: "ok", States: 10, Workers: tt.workers}, run: &measured{}}
		if got := exploreRow(4, r, time.Minute, tt.full); got.checker != tt.want || got.verdict != "ok" {
			t.Errorf("full %v, %d workers: %q %q, want %q", tt.full, tt.workers, got.checker, got.verdict, tt.want)
		}
	}
}

// Pan's reports, cut to the lines the parser reads (SPIN 6.5.2).
const (
	panOK = `State-vector 176 byte, depth reached 32, errors: 0
      871 states, stored
      740 states, matched
     1611 transitions (= stored+matched)
pan: elapsed time 0 seconds
`
	panAssert = `pan:1: assertion violated (incs<=1) (at depth 29)
pan: wrote ricart-agrawala.pml.trail
State-vector 176 byte, depth reached 32, errors: 1
       21 states, stored
       21 transitions (= stored+matched)
`
	panEnd = `pan:1: invalid end state (at depth 26)
pan: wrote ricart-agrawala.pml.trail
State-vector 176 byte, depth reached 27, errors: 1
       16 states, stored
       16 transitions (= stored+matched)
`
	panMemory = `pan: reached -DMEMLIM bound
	3.14512e+08 bytes used
Warning: Search not completed
State-vector 284 byte, depth reached 49, errors: 0
   726288 states, stored
  2288632 transitions (= stored+matched)
`
	panProgress = `Depth=      49 States=    1e+06 Transitions= 3.5e+06 Memory=   298.745	t=     10.9 R=   9e+04
Depth=      51 States=    2e+06 Transitions=   7e+06 Memory=   530.120	t=     22.3 R=   9e+04
`
)

func TestParsePanReport(t *testing.T) {
	tests := []struct {
		name, out               string
		timedOut                bool
		result, property, bound string
		states, transitions     int64
		depth                   int
		detail                  string
	}{
		{name: "holds", out: panOK, result: "ok", states: 871, transitions: 1611, depth: 32},
		{name: "assertion", out: panAssert, result: "violation", property: "mutual-exclusion",
			states: 21, transitions: 21, depth: 32, detail: "assertion violated (incs<=1) (at depth 29)"},
		{name: "invalid end state", out: panEnd, result: "violation", property: "deadlock",
			states: 16, transitions: 16, depth: 27, detail: "invalid end state (at depth 26)"},
		{name: "memory bound", out: panMemory, result: "bounded", bound: "memory",
			states: 726288, transitions: 2288632, depth: 49},
		{name: "killed at the deadline", out: panProgress, timedOut: true, states: 2000000, depth: 51,
			detail: "stopped at Depth= 51 States= 2e+06 Transitions= 7e+06 Memory= 530.120 t= 22.3 R= 9e+04"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &spinRun{run: &measured{timedOut: tt.timedOut}}
			if err := r.parse(tt.out); err != nil {
				t.Fatal(err)
			}
			if r.result != tt.result || r.property != tt.property || r.bound != tt.bound ||
				r.states != tt.states || r.transitions != tt.transitions || r.depth != tt.depth || r.detail != tt.detail {
				t.Errorf("got %+v", *r)
			}
		})
	}
	if err := (&spinRun{}).parse("pan: something else\n"); err == nil {
		t.Error("a report without its summary line was read without an error")
	}
}

// TestModelParsesForEveryN runs SPIN's parser (spin -a) on the twin for every N it
// takes, and checks that it refuses the others.
func TestModelParsesForEveryN(t *testing.T) {
	spin, _ := needSpin(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, modelFile), model, 0o644); err != nil {
		t.Fatal(err)
	}
	for n := minNodes - 1; n <= maxNodes+1; n++ {
		out, err := runIn(context.Background(), dir, spin, "-DN="+strconv.Itoa(n), "-a", modelFile)
		ok := n >= minNodes && n <= maxNodes
		if (err == nil) != ok {
			t.Errorf("spin -a with N=%d: error %v, want an error: %v\n%s", n, err, !ok, out)
		}
		if !ok && !strings.Contains(out, "N is 2 to 8") {
			t.Errorf("spin -a with N=%d says %q, want the range", n, out)
		}
	}
}

// TestTwinAgreesWithExplorer: SPIN on the twin and the explorer on the scenario give
// the same verdict and visit the same states. The explorer starts after the requests
// of time 0; SPIN also stores the N+2 states before that (init at its start, after
// its assert, after it started the processes, and after each of the first N-1
// requests), and nothing more: each d_step is one kernel Step, each SPIN state one
// explorer state of the full search (--full): the reduced one visits fewer.
func TestTwinAgreesWithExplorer(t *testing.T) {
	s := testSpin(t)
	for _, tt := range []struct {
		n int
		v spinVariant
	}{
		{2, variantPOR},
		{3, variantPOR},
		{3, variantNoPOR},
	} {
		t.Run(strconv.Itoa(tt.n)+"/"+tt.v.name, func(t *testing.T) {
			r, err := runSpin(context.Background(), s, tt.v, tt.n)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenario(tt.n)
			if err != nil {
				t.Fatal(err)
			}
			x, err := explore.Explore(context.Background(), sc, explore.Options{NoReduce: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.result != "ok" || x.Result != "ok" {
				t.Fatalf("SPIN says %s %s (%s), the explorer %s %s; both should find the properties hold",
					r.result, r.property, r.detail, x.Result, x.Property)
			}
			if want := x.States + int64(tt.n) + 2; r.states != want {
				t.Errorf("SPIN stored %d states, the explorer %d: want the explorer's + N + 2 = %d", r.states, x.States, want)
			}
		})
	}
}

// TestWrongTwinsAreCaught: the model's checks can fail. Without the id tie-break two
// processes with equal timestamps both answer and both enter; leaving the CS without
// answering the queued requests leaves their senders waiting for ever.
func TestWrongTwinsAreCaught(t *testing.T) {
	s := testSpin(t)
	for _, tt := range []struct {
		v    spinVariant
		want string
	}{
		{variantNoTieBreak, "mutual-exclusion"},
		{variantForget, "deadlock"},
	} {
		t.Run(tt.v.name, func(t *testing.T) {
			r, err := runSpin(context.Background(), s, tt.v, 3)
			if err != nil {
				t.Fatal(err)
			}
			if r.result != "violation" || r.property != tt.want {
				t.Errorf("SPIN says %s %q (%s), want a violation of %s", r.result, r.property, r.detail, tt.want)
			}
		})
	}
	// The frozen clock keeps the verdict: an abstraction, not a mistake.
	r, err := runSpin(context.Background(), s, variantFrozen, 3)
	if err != nil {
		t.Fatal(err)
	}
	if r.result != "ok" {
		t.Errorf("frozen clock: SPIN says %s %s (%s), want ok", r.result, r.property, r.detail)
	}
}
