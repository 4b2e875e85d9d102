package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// testPool is one pool for the package's tests; its workers are this test binary
// started again (the package's init serves them).
var testPool = New(Options{Workers: 2})

func loadRemote(t testing.TB, p *Pool, slug, source string) *sim.Spec {
	t.Helper()
	spec, err := p.Load(slug, source)
	if err != nil {
		t.Fatalf("load %s in the sandbox: %v", slug, err)
	}
	return spec
}

func withSpec(t testing.TB, cfg sim.Config, spec *sim.Spec, raw []byte) sim.Config {
	t.Helper()
	cfg.Spec, cfg.Params = spec, nil
	if spec.ParseParams != nil {
		p, err := spec.ParseParams(raw, cfg.IDs)
		if err != nil {
			t.Fatalf("%s params %s: %v", spec.Slug, raw, err)
		}
		cfg.Params = p
	}
	return cfg
}

// sameRun steps the two configurations side by side: the inspectors agree after every
// step and the traces are the same bytes.
func sameRun(t *testing.T, what string, want, got sim.Config) {
	t.Helper()
	var wantTrace, gotTrace []byte
	ws, err := sim.New(want, sim.NewEncoder(want.Spec, want.IDs).Lines(&wantTrace))
	if err != nil {
		t.Fatalf("%s: in process: %v", what, err)
	}
	gs, err := sim.New(got, sim.NewEncoder(got.Spec, got.IDs).Lines(&gotTrace))
	if err != nil {
		t.Fatalf("%s: sandbox: %v", what, err)
	}
	for step := 0; ; step++ {
		wok, werr := ws.Step()
		gok, gerr := gs.Step()
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || wok != gok {
			t.Fatalf("%s step %d: in process (%v, %v), sandbox (%v, %v)", what, step, wok, werr, gok, gerr)
		}
		if !wok || werr != nil {
			break
		}
		if w, g := ws.Snapshot(), gs.Snapshot(); !reflect.DeepEqual(w, g) {
			t.Fatalf("%s step %d: inspectors differ\n in process %+v\n sandbox    %+v", what, step, w.Nodes, g.Nodes)
		}
	}
	if !bytes.Equal(wantTrace, gotTrace) {
		t.Fatalf("%s: traces differ:\n%s\n---\n%s", what, wantTrace, gotTrace)
	}
	if bytes.Count(wantTrace, []byte("\n")) < 3 {
		t.Fatalf("%s: a trace of %q proves nothing", what, wantTrace)
	}
}

// Every template, run by the sandbox, is the template run in process: on every curated
// scenario of its algorithm, step by step.
func TestSandbox_RunsTheTemplatesAsInProcess(t *testing.T) {
	for _, slug := range starlarkalg.Templates() {
		src, _ := starlarkalg.Template(slug)
		local, err := starlarkalg.Load(slug, src)
		if err != nil {
			t.Fatal(err)
		}
		remote := loadRemote(t, testPool, slug, src)
		ran := 0
		for _, e := range scenarios.Curated() {
			if e.Scenario.Algorithm != slug || e.Scenario.Source != "" {
				continue
			}
			cfg, err := e.Scenario.Config()
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			sameRun(t, e.Name, withSpec(t, cfg, local, e.Scenario.Params), withSpec(t, cfg, remote, e.Scenario.Params))
			ran++
		}
		if ran == 0 {
			t.Errorf("%s: no curated scenario to compare on", slug)
		}
	}
}

// A source's declarations reach the server as the source gives them, and a load error
// keeps its line.
func TestSandbox_LoadGivesTheDeclarationsAndPlacedErrors(t *testing.T) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	local, _ := starlarkalg.Load("ricart-agrawala", src)
	remote := loadRemote(t, testPool, "ricart-agrawala", src)
	if !reflect.DeepEqual(local.Rules, remote.Rules) || !reflect.DeepEqual(local.Messages, remote.Messages) ||
		local.Title != remote.Title || local.Defaults != remote.Defaults || !reflect.DeepEqual(local.Params, remote.Params) {
		t.Fatalf("declarations differ:\n in process %+v\n sandbox    %+v", local, remote)
	}
	broken := strings.Replace(src, "def init(setup):", "def init(setup)", 1)
	_, err := testPool.Load("ricart-agrawala", broken)
	var se *starlarkalg.Error
	if !asError(err, &se) || se.Line == 0 {
		t.Fatalf("a syntax error: %v, want a *starlarkalg.Error with its line", err)
	}
	if _, lerr := starlarkalg.Load("ricart-agrawala", broken); lerr.Error() != err.Error() {
		t.Fatalf("sandbox says %q, in process %q", err, lerr)
	}
}

func asError(err error, se **starlarkalg.Error) bool {
	e, ok := err.(*starlarkalg.Error)
	*se = e
	return ok
}

// The kernel's Go algorithm agrees with the sandboxed template too (the template
// tests' claim, through the sandbox).
func TestSandbox_TemplateIsTheGoAlgorithm(t *testing.T) {
	src, _ := starlarkalg.Template("central")
	remote := loadRemote(t, testPool, "central", src)
	goSpec, _ := algorithms.Lookup("central")
	sc, ok := scenarios.Lookup("central-queue")
	if !ok {
		for _, e := range scenarios.Curated() {
			if e.Scenario.Algorithm == "central" && e.Scenario.Source == "" {
				sc = e.Scenario
				break
			}
		}
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, "central", withSpec(t, cfg, goSpec, sc.Params), withSpec(t, cfg, remote, sc.Params))
}

// fakeWorker is a pool whose workers are a shell script: the pool's own handling of a
// worker that dies or hangs, whatever ran in it.
func fakeWorker(script string, timeout time.Duration) *Pool {
	return New(Options{Workers: 1, CallTimeout: timeout,
		Command: func(string) *exec.Cmd { return exec.Command("/bin/sh", "-c", script) }})
}

// A worker the runtime kills for its memory is reported as the memory bound; one that
// does not answer in time is killed and reported as the time bound; one that dies
// otherwise says what it wrote. Each time the pool forgets the worker and goes on.
func TestPool_NamesTheBoundAWorkerHit(t *testing.T) {
	for _, c := range []struct {
		name, script string
		timeout      time.Duration
		bound, says  string
	}{
		{"memory", `cat >/dev/null & echo "fatal error: runtime: out of memory" >&2; exit 2`, time.Minute, "memory", "MiB of memory"},
		{"time", `exec sleep 600`, 50 * time.Millisecond, "time", "stopped it after 50ms"},
		{"other", `echo "sandbox: something broke" >&2; exit 2`, time.Minute, "", "sandbox: something broke"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := fakeWorker(c.script, c.timeout)
			defer p.Close()
			for range 2 { // the second call gets a new worker
				_, err := p.Load("central", "x = 1")
				var se *starlarkalg.Error
				if !errors.As(err, &se) || !strings.Contains(se.Msg, c.says) {
					t.Fatalf("load: %v, want a *starlarkalg.Error saying %q", err, c.says)
				}
				var le *LoadError
				if !errors.As(err, &le) || !le.Temporary() {
					t.Fatalf("load: %v is not a temporary LoadError", err)
				}
				if alive, busy := p.Workers(); alive != 0 || busy != 0 {
					t.Fatalf("after the failure: %d workers alive, %d busy; want none", alive, busy)
				}
			}
		})
	}
}

// A search of a source runs in a worker of its own, and the client's cancel kills it:
// the search ends at once, bounded "cancelled", whatever the worker was doing.
func TestPool_ExploreCancelKillsTheWorker(t *testing.T) {
	p := fakeWorker(`exec sleep 600`, time.Minute)
	defer p.Close()
	sc, ok := scenarios.Lookup("challenge-ra-tie-break")
	if !ok {
		t.Fatal("the curated library has no challenge-ra-tie-break")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *explore.Result, 1)
	go func() {
		res, err := p.Explore(ctx, sc, explore.Options{})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	cancel()
	res := <-done
	if res == nil || res.Bound != explore.BoundCancelled {
		t.Fatalf("cancelled search: %+v, want bounded by cancellation", res)
	}
}

// What a source written from scratch declares reaches the server as figures: its own
// name and its costs, the same numbers as in process for every number of processes,
// though the server runs none of the source.
func TestSandbox_OwnNameAndCostsReachTheServer(t *testing.T) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	src = strings.Replace(src, `title = "Ricart-Agrawala"`, `title = "My broadcast mutex"
name = "my-broadcast"
costs = [cost("messages per CS entry", "2(N-1)", value = lambda n: 2 * (n - 1)),
         cost("synchronisation delay", "T to 2T", low = 1, high = 2)]`, 1)
	local, err := starlarkalg.Load("ricart-agrawala", src)
	if err != nil {
		t.Fatal(err)
	}
	remote := loadRemote(t, testPool, "ricart-agrawala", src)
	if remote.Name != "my-broadcast" || remote.Title != "My broadcast mutex" || len(remote.Costs) != len(local.Costs) || len(local.Costs) != 2 {
		t.Fatalf("remote name %q title %q, %d costs (in process %d)", remote.Name, remote.Title, len(remote.Costs), len(local.Costs))
	}
	for k := range local.Costs {
		l, r := local.Costs[k], remote.Costs[k]
		if l.Name != r.Name || l.Formula != r.Formula {
			t.Errorf("cost %d: %q %q, in process %q %q", k, r.Name, r.Formula, l.Name, l.Formula)
		}
		// A value, or a range's two bounds: each the same function of n on both sides.
		for _, f := range [][2]func(int) float64{{l.Value, r.Value}, {l.Low, r.Low}, {l.High, r.High}} {
			if (f[0] == nil) != (f[1] == nil) {
				t.Fatalf("cost %q: in process and remote declare different figures", l.Name)
			}
			for n := sim.MinNodes; f[0] != nil && n <= sim.MaxNodes; n++ {
				if f[0](n) != f[1](n) {
					t.Fatalf("cost %q for %d: %v, in process %v", l.Name, n, f[1](n), f[0](n))
				}
			}
		}
	}
}

// A handler that runs past its CPU time is interrupted by its worker, an error at its
// line naming the bound, before the server's deadline kills the worker; the worker
// then serves the next call.
func TestSandbox_CPUTimeInterruptsAHandler(t *testing.T) {
	p := New(Options{Workers: 1, Steps: 1 << 50, CallCPU: 100 * time.Millisecond, CallTimeout: time.Minute})
	defer p.Close()
	src, _ := starlarkalg.Template("central")
	// A loop the work bound (raised here) would let run for minutes: only the
	// watchdog stops it.
	spin := strings.Replace(src, "def on_request(ctx, s):", "def on_request(ctx, s):\n    n = 0\n    for i in range(60000):\n        for j in range(60000):\n            n += 1", 1)
	if spin == src {
		t.Fatal("the central template has no on_request to change")
	}
	spec := loadRemote(t, p, "central", spin)
	sc, _ := scenarios.Lookup("central-queue")
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg = withSpec(t, cfg, spec, sc.Params)
	s, err := sim.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run()
	var se *starlarkalg.Error
	if !errors.As(err, &se) || se.Handler != "on_request" || se.Line == 0 || !strings.Contains(se.Msg, "interrupted") {
		t.Fatalf("run: %v, want on_request interrupted at its line", err)
	}
	if alive, _ := p.Workers(); alive != 1 {
		t.Fatalf("%d workers alive, want the one that interrupted its call", alive)
	}
	loadRemote(t, p, "central", src) // and it serves the next call
}

// Sources that keep memory in their globals do not crowd each other out of a worker:
// past half its memory the least recently used are evicted (and loaded again when
// needed), so every load of a long row succeeds where, kept, they would pass the
// worker's limit and kill it.
func TestSandbox_KeptSourcesMakeRoomForTheNext(t *testing.T) {
	p := New(Options{Workers: 1, Memory: 256 << 20})
	defer p.Close()
	src, _ := starlarkalg.Template("central")
	for k := range 24 { // about 16 MiB kept by each: 380 MiB in all
		keep := fmt.Sprintf("keep%d = list(range(65536)) * 15\n", k) + src
		if _, err := p.Load("central", keep); err != nil {
			t.Fatalf("load %d: %v", k, err)
		}
	}
	spec := loadRemote(t, p, "central", "keep0 = list(range(65536)) * 15\n"+src) // evicted: loaded again
	sc, _ := scenarios.Lookup("central-queue")
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(withSpec(t, cfg, spec, sc.Params), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatalf("a run of the first source, loaded again: %v", err)
	}
}

// A worker exits as soon as it has written its result: every quick search in a row
// still returns that result, never the kill at its time limit.
func TestPool_ExploreReturnsTheResultOfAWorkerThatHasExited(t *testing.T) {
	p := New(Options{Workers: 1, Nice: -1})
	defer p.Close()
	sc, _ := scenarios.Lookup("challenge-ra-tie-break")
	for k := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := p.Explore(ctx, sc, explore.Options{MaxStates: 100_000})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.Result != explore.ResultViolation {
			t.Fatalf("search %d: %s %s: %s", k, res.Result, res.Bound, res.Message)
		}
	}
}
