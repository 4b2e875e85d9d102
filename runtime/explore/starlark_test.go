//go:build unix

package explore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// starlarkConfig is a testdata scenario run by the Starlark template of its algorithm
// (algorithms/starlarkalg) instead of the Go algorithm.
func starlarkConfig(t testing.TB, file string) (goCfg, starCfg sim.Config) {
	t.Helper()
	sc := load(t, file)
	goCfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	src, ok := starlarkalg.Template(sc.Algorithm)
	if !ok {
		t.Fatalf("no Starlark template for %s", sc.Algorithm)
	}
	spec, err := starlarkalg.Load(sc.Algorithm, src)
	if err != nil {
		t.Fatal(err)
	}
	starCfg = goCfg
	starCfg.Spec, starCfg.Params = spec, nil
	if spec.ParseParams != nil {
		if starCfg.Params, err = spec.ParseParams(sc.Params, goCfg.IDs); err != nil {
			t.Fatal(err)
		}
	}
	return goCfg, starCfg
}

// The explorer takes a Starlark algorithm as it is: on the same configuration, the
// Ricart-Agrawala and Bully templates give the very state space of the Go algorithms
// (same states, transitions, depth and verdict, and every node state met in the same
// order), liveness pass included.
func TestExplore_StarlarkTemplatesGiveTheGoStateSpace(t *testing.T) {
	for _, c := range []struct {
		file  string
		timed bool
	}{
		{"ricart-agrawala-3.json", false},
		{"ricart-agrawala-3-anytime.json", false},
		{"bully-synchronous-4.json", true},
		{"bully-short-timeout-4.json", true},
	} {
		goCfg, starCfg := starlarkConfig(t, c.file)
		type summary struct {
			states, transitions, depth int
			property, bound            string
			entryBound                 int
			nodeStates                 string // every node state met, sorted (their numbering varies with the workers)
		}
		var got [2]summary
		// The full search: a Starlark source declares no canonical forms (sim.Spec.Canon), so
		// the Go algorithm's reductions would make the two spaces differ by design.
		for k, cfg := range []sim.Config{goCfg, starCfg} {
			x, err := newSearch(cfg, c.timed, &Options{MaxStates: 1 << 24, MaxMemory: 1 << 30, NoReduce: true})
			if err != nil {
				t.Fatal(err)
			}
			out, err := x.run(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			if out.found == nil && out.bound == "" && !x.m.election {
				var bound int
				if out, bound, err = x.liveness(context.Background()); err != nil {
					t.Fatal(err)
				}
				got[k].entryBound = bound
			}
			got[k].states, got[k].transitions, got[k].depth, got[k].bound = x.st.count, int(x.transitions), x.depth, out.bound
			if out.found != nil {
				got[k].property = out.found.property
			}
			for i := range x.it.nodes {
				got[k].nodeStates += strings.Join(slices.Sorted(slices.Values(x.it.encodings(i))), "\n") + "\n\n"
			}
		}
		if got[0] != got[1] || got[0].states < 10 {
			g, s := got[0], got[1]
			g.nodeStates, s.nodeStates = "", ""
			t.Errorf("%s: go %+v, starlark %+v (node states alike: %v)", c.file, g, s, got[0].nodeStates == got[1].nodeStates)
		}
	}
}

// The explorer's figures for a Starlark algorithm beside BenchmarkRicartAgrawala3 and
// the others (docs/benchmarks.md, "Algorithms in Starlark").
func BenchmarkStarlarkRicartAgrawala3(b *testing.B) {
	_, cfg := starlarkConfig(b, "ricart-agrawala-3.json")
	benchExploreConfig(b, cfg, false, true)
}

func BenchmarkStarlarkRicartAgrawala3Anytime(b *testing.B) {
	_, cfg := starlarkConfig(b, "ricart-agrawala-3-anytime.json")
	benchExploreConfig(b, cfg, false, true)
}

func BenchmarkStarlarkRicartAgrawala3Twice(b *testing.B) {
	_, cfg := starlarkConfig(b, "ricart-agrawala-3-twice.json")
	benchExploreConfig(b, cfg, false, true)
}

func BenchmarkStarlarkBully4Synchronous(b *testing.B) {
	_, cfg := starlarkConfig(b, "bully-synchronous-4.json")
	benchExploreConfig(b, cfg, true, true)
}

// A student's change that breaks the algorithm is found: Ricart-Agrawala without the id
// to break ties lets two processes that ask with the same timestamp both enter.
func TestExplore_FindsTheBugInAnEditedTemplate(t *testing.T) {
	_, cfg := starlarkConfig(t, "ricart-agrawala-3.json")
	src, _ := starlarkalg.Template("ricart-agrawala")
	edited := strings.Replace(src, "return s.ts < m.ts or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))", "return s.ts < m.ts", 1)
	if edited == src {
		t.Fatal("the template no longer has the line this test edits")
	}
	spec, err := starlarkalg.Load("ra-without-ids", edited)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Spec = spec
	x, err := newSearch(cfg, false, &Options{MaxStates: 1 << 20, MaxMemory: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	out, err := x.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.found == nil || out.found.property != sim.PropMutex {
		t.Fatalf("found %+v, want a mutual exclusion violation", out.found)
	}
}

// The skeletons of an algorithm written from scratch are small algorithms that work:
// the explorer proves every property of their family on three processes, and its
// summary calls them by their own title and name.
func TestExplore_SkeletonsAreProved(t *testing.T) {
	for _, c := range []struct {
		host  string
		scene string
	}{
		{"central", `{"version": 2, "algorithm": "central", "nodes": 3, "seed": 1,
		  "events": [{"at": 0, "do": "request", "node": 0}, {"at": 0, "do": "request", "node": 1}, {"at": 0, "do": "request", "node": 2}]}`},
		{"bully", `{"version": 2, "algorithm": "bully", "nodes": 3, "seed": 1,
		  "events": [{"at": 0, "do": "crash", "node": 2}, {"at": 1, "do": "elect", "node": 0}]}`},
	} {
		host, _ := algorithms.Lookup(c.host)
		src, ok := starlarkalg.Skeleton(host.Family)
		if !ok {
			t.Fatalf("no skeleton for %s", host.Family)
		}
		sc, err := scenarios.Parse([]byte(strings.TrimSuffix(c.scene, "}") + `, "source": ` + strconv.Quote(src) + "}"))
		if err != nil {
			t.Fatalf("%s: %v", host.Family, err)
		}
		res, err := Explore(context.Background(), sc, Options{MaxStates: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Result != ResultOK || res.Name != "my-"+map[sim.Family]string{sim.Mutex: "mutex", sim.Election: "election"}[host.Family] ||
			!strings.HasPrefix(res.Title, "My ") || res.Algorithm != c.host {
			t.Errorf("%s skeleton: %s %q %q on %s: %s", host.Family, res.Result, res.Name, res.Title, res.Algorithm, res.Message)
		}
	}
}

// BenchmarkStarlarkTwins runs the Starlark templates beside their Go algorithms on the
// default setups at five processes (docs/benchmarks.md, "Tree compression ..."): the
// same search for both (a Starlark source declares no canonical forms, so the full
// search; Bully, Central and the token ring declare none either), one worker. Ricart-
// Agrawala at five processes is out of the full search's reach: it runs at four, on
// FIFO channels.
//
//	go test -run '^$' -bench StarlarkTwins -benchtime 1x -cpu 1 ./runtime/explore/
func BenchmarkStarlarkTwins(b *testing.B) {
	for _, c := range []struct {
		name, scenario string
		timed          bool
	}{
		{"bully-5", `{"version":1,"algorithm":"bully","nodes":5,"events":[{"at":0,"do":"crash","node":4},{"at":0,"do":"elect","node":0}]}`, true},
		{"central-5", `{"version":1,"algorithm":"central","nodes":5}`, false},
		{"token-ring-5", `{"version":1,"algorithm":"token-ring","nodes":5}`, true},
		{"ricart-agrawala-4-fifo", `{"version":1,"algorithm":"ricart-agrawala","nodes":4,"network":{"delay":[1,3],"fifo":true}}`, false},
	} {
		sc, err := scenarios.Parse([]byte(c.scenario))
		if err != nil {
			b.Fatal(err)
		}
		if sc, _, err = DefaultWorkload(sc); err != nil {
			b.Fatal(err)
		}
		goCfg, err := sc.Config()
		if err != nil {
			b.Fatal(err)
		}
		src, _ := starlarkalg.Template(sc.Algorithm)
		spec, err := starlarkalg.Load(sc.Algorithm, src)
		if err != nil {
			b.Fatal(err)
		}
		starCfg := goCfg
		starCfg.Spec, starCfg.Params = spec, nil
		if spec.ParseParams != nil {
			if starCfg.Params, err = spec.ParseParams(sc.Params, goCfg.IDs); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(c.name+"/go", func(b *testing.B) { benchExploreConfig(b, goCfg, c.timed, true) })
		b.Run(c.name+"/starlark", func(b *testing.B) { benchExploreConfig(b, starCfg, c.timed, true) })
	}
}
