package starlarkalg_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
	"github.com/teach-dist/playground/scenarios"
)

// loadTemplate loads the template of a Go algorithm under the Go algorithm's slug, so
// that the two traces can be compared byte for byte.
func loadTemplate(t testing.TB, slug string) *sim.Spec {
	t.Helper()
	src, ok := starlarkalg.Template(slug)
	if !ok {
		t.Fatalf("no template for %s", slug)
	}
	spec, err := starlarkalg.Load(slug, src)
	if err != nil {
		t.Fatalf("template %s: %v", slug, err)
	}
	return spec
}

// withSpec is cfg run by spec instead, its params parsed from raw by spec.
func withSpec(t testing.TB, cfg sim.Config, spec *sim.Spec, raw string) sim.Config {
	t.Helper()
	cfg.Spec = spec
	cfg.Params = nil
	if spec.ParseParams != nil {
		p, err := spec.ParseParams([]byte(raw), cfg.IDs)
		if err != nil {
			t.Fatalf("%s params %s: %v", spec.Slug, raw, err)
		}
		cfg.Params = p
	}
	return cfg
}

// sameRun runs the Go and the Starlark configuration side by side: after every step
// the two inspectors must show the same thing (states, token, CS, leaders, messages in
// flight), and at the end the two traces must be the same bytes.
func sameRun(t *testing.T, what string, goCfg, starCfg sim.Config, everyStep bool) {
	t.Helper()
	var goTrace, starTrace []byte
	gs, err := sim.New(goCfg, sim.NewEncoder(goCfg.Spec, goCfg.IDs).Lines(&goTrace))
	if err != nil {
		t.Fatalf("%s: go: %v", what, err)
	}
	ss, err := sim.New(starCfg, sim.NewEncoder(starCfg.Spec, starCfg.IDs).Lines(&starTrace))
	if err != nil {
		t.Fatalf("%s: starlark: %v", what, err)
	}
	for step := 0; ; step++ {
		gok, gerr := gs.Step()
		sok, serr := ss.Step()
		if gerr != nil || serr != nil {
			if fmt.Sprint(gerr) != fmt.Sprint(serr) {
				t.Fatalf("%s step %d: go error %v, starlark error %v", what, step, gerr, serr)
			}
			break
		}
		if gok != sok {
			t.Fatalf("%s step %d: go goes on %v, starlark %v", what, step, gok, sok)
		}
		if !gok {
			break
		}
		if everyStep || step%16 == 0 {
			if g, s := gs.Snapshot(), ss.Snapshot(); !reflect.DeepEqual(g, s) {
				t.Fatalf("%s step %d: inspectors differ\n  go       %s\n  starlark %s", what, step, views(g), views(s))
			}
		}
	}
	if err := gs.Run(); err != nil {
		t.Fatalf("%s: go: %v", what, err)
	}
	if err := ss.Run(); err != nil {
		t.Fatalf("%s: starlark: %v", what, err)
	}
	if !bytes.Equal(goTrace, starTrace) {
		t.Fatalf("%s: traces differ\n%s", what, firstDiff(goTrace, starTrace))
	}
	if bytes.Count(goTrace, []byte("\n")) < 3 {
		t.Fatalf("%s: a trace of %q proves nothing", what, goTrace)
	}
}

func views(s sim.Snapshot) string {
	var b strings.Builder
	for _, n := range s.Nodes {
		fmt.Fprintf(&b, "P%d alive=%v cs=%v token=%v leader=%d %s; ", n.ID, n.Alive, n.InCS, n.Token, n.Leader, n.State)
	}
	return b.String()
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n       go %s\n starlark %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("lengths differ: %d vs %d lines", len(g), len(w))
}

// templated is every registered algorithm: each has its template, and each template is
// tested beside the Go algorithm it must match, so an algorithm added to the registry
// needs no line here.
func templated() []string { return algorithms.Slugs() }

func TestTemplates_AreTheGoAlgorithmsOnEveryCuratedScenario(t *testing.T) {
	for _, slug := range templated() {
		spec := loadTemplate(t, slug)
		ran := 0
		for _, e := range scenarios.Curated() {
			if e.Scenario.Algorithm != slug {
				continue
			}
			// A challenge runs its own (wrong) rules: its configuration is taken with
			// the Go algorithm.
			goScenario := *e.Scenario
			goScenario.Source, goScenario.Challenge = "", nil
			cfg, err := goScenario.Config()
			if err != nil {
				t.Fatalf("%s: %v", e.Name, err)
			}
			sameRun(t, e.Name, cfg, withSpec(t, cfg, spec, string(e.Scenario.Params)), true)
			ran++
		}
		if ran == 0 {
			t.Errorf("%s: no curated scenario", slug)
		}
	}
}

// generated draws a scenario for slug from seed: nodes, ids (a shuffled ring order),
// delays, FIFO or not, a workload with crashes and recoveries, and params the
// algorithm allows; raw is its params JSON.
func generated(slug string, seed uint64) (cfg sim.Config, raw string) {
	goSpec, _ := algorithms.Lookup(slug)
	r := rand.New(rand.NewPCG(seed, 19))
	n := 2 + r.IntN(6)
	ids := r.Perm(n + 4)[:n]
	w := simtest.Workload{Requests: 1 + r.IntN(3*n), Span: 150, Crashes: r.IntN(n), Recover: r.IntN(2) == 0}
	acts := simtest.RandomActions(seed, n, goSpec.Family, w)
	for k := range acts {
		acts[k].From, acts[k].To = -1, -1
	}
	dmin := r.IntN(3)
	params := map[string]any{}
	fifo := false
	switch slug {
	case "central":
		params["coordinator"] = ids[r.IntN(n)]
		params["denied"] = r.IntN(2) == 0
	case "token-ring":
		params["holder"] = ids[r.IntN(n)]
		params["hop"] = 1 + r.IntN(3)
		if r.IntN(3) > 0 {
			params["regenerate"] = 20 + r.IntN(80)
		}
		for k := r.IntN(3); k > 0; k-- {
			acts = append(acts, sim.Action{At: r.IntN(150), Do: sim.ActDrop, From: -1, To: -1, Type: "TOKEN"})
		}
	case "bakery":
		if r.IntN(2) == 0 {
			params["poll"] = 1 + r.IntN(8)
		}
	case "raymond":
		if r.IntN(2) == 0 {
			tree := map[string]any{}
			for k := 1; k < n; k++ {
				tree[fmt.Sprint(ids[k])] = ids[r.IntN(k)]
			}
			params["tree"] = tree
		}
	case "ricart-agrawala-token", "suzuki-kasami":
		params["holder"] = ids[r.IntN(n)]
	case "maekawa":
		if r.IntN(2) == 0 {
			params["variant"] = "deadlock-free"
		}
		if r.IntN(3) == 0 {
			params["construction"] = "grid"
		}
	case "ring", "ring-list":
		params["skip"] = []string{"detector", "ack", "none"}[r.IntN(3)]
		if params["skip"] == "ack" && r.IntN(2) == 0 {
			params["ackTimeout"] = 1 + r.IntN(10)
		}
		params["restart"] = r.IntN(3) == 0
		params["check"] = r.IntN(3) > 0
		if slug == "ring-list" && r.IntN(2) == 0 {
			// The ids variant needs FIFO channels, and with acknowledgements its
			// rounds can chase each other for ever (AL-8): runs that never end.
			params["variant"] = "ids"
			params["announce"] = r.IntN(2) == 0
			params["skip"] = []string{"detector", "none"}[r.IntN(2)]
			delete(params, "ackTimeout")
			fifo = true
		}
	case "bully":
		if r.IntN(2) == 0 {
			params["answerTimeout"] = 1 + r.IntN(12)
		}
		if r.IntN(2) == 0 {
			params["heartbeat"] = map[string]any{"period": 5 + r.IntN(20), "delay": r.IntN(6)}
		}
	}
	b, _ := json.Marshal(params)
	cfg = sim.Config{
		Spec: goSpec, IDs: ids, Seed: seed, CS: 1 + r.IntN(4), Until: 400, Actions: acts,
		Network: sim.Network{DelayMin: dmin, DelayMax: dmin + r.IntN(5), FIFO: r.IntN(2) == 0},
	}
	if fifo {
		cfg.Network.FIFO = true
	}
	if goSpec.Family == sim.Election {
		cfg.CS = 0
	}
	return cfg, string(b)
}

func TestTemplates_AreTheGoAlgorithmsOnASeedSweep(t *testing.T) {
	const seeds = 50
	for _, slug := range templated() {
		spec := loadTemplate(t, slug)
		for seed := uint64(1); seed <= seeds; seed++ {
			cfg, raw := generated(slug, seed)
			goCfg := withSpec(t, cfg, cfg.Spec, raw)
			sameRun(t, fmt.Sprintf("%s seed %d %s", slug, seed, raw), goCfg, withSpec(t, cfg, spec, raw), false)
		}
	}
}

// A template describes itself as its Go algorithm does: the same rules (labels, notes,
// groups, pseudocode, narration), variables, messages, params, defaults and stage, so
// the page shows the same thing whichever runs.
func TestTemplates_DeclareWhatTheGoAlgorithmsDeclare(t *testing.T) {
	for _, slug := range templated() {
		goSpec, _ := algorithms.Lookup(slug)
		spec := loadTemplate(t, slug)
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"title", spec.Title, goSpec.Title},
			{"family", spec.Family, goSpec.Family},
			{"summary", spec.Summary, goSpec.Summary},
			{"rules", spec.Rules, goSpec.Rules},
			{"vars", spec.Vars, goSpec.Vars},
			{"messages", spec.Messages, goSpec.Messages},
			{"params", spec.Params, goSpec.Params},
			{"defaults", spec.Defaults, goSpec.Defaults},
			{"stage", spec.Stage, goSpec.Stage},
			{"background timers", spec.BackgroundTimers, goSpec.BackgroundTimers},
			{"background messages", spec.BackgroundMessages, goSpec.BackgroundMessages},
			{"crash leader first", spec.CrashLeaderFirst, goSpec.CrashLeaderFirst},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%s %s:\n got %+v\nwant %+v", slug, f.name, f.got, f.want)
			}
		}
	}
}

// The Maekawa template builds the Go algorithm's voting sets at every size: the notes'
// sets, the extended planes of orders 1 to 7 and the grid, short last rows included
// (the inspector shows each process's set and the construction's words).
func TestTemplates_MaekawaBuildsTheGoVotingSets(t *testing.T) {
	spec := loadTemplate(t, "maekawa")
	goSpec, _ := algorithms.Lookup("maekawa")
	sizes := []int{2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 20, 31, 36, 40, 57, 60}
	for _, n := range sizes {
		for _, raw := range []string{`{"construction":"plane"}`, `{"construction":"grid","variant":"deadlock-free"}`} {
			ids := make([]int, n)
			for i := range ids {
				ids[i] = i + 1
			}
			cfg := sim.Config{Spec: goSpec, IDs: ids, Seed: uint64(n), CS: 1, Until: 60,
				Network: sim.Network{DelayMin: 1, DelayMax: 2, FIFO: true},
				Actions: []sim.Action{{At: 0, Do: sim.ActRequest, Node: 0, From: -1, To: -1}, {At: 1, Do: sim.ActRequest, Node: n - 1, From: -1, To: -1}}}
			sameRun(t, fmt.Sprintf("maekawa n=%d %s", n, raw), withSpec(t, cfg, goSpec, raw), withSpec(t, cfg, spec, raw), true)
		}
	}
}

// Every algorithm of the registry has its template, so every play page offers Edit
// rules and every curated scenario may carry a source.
func TestTemplates_EveryAlgorithmHasOne(t *testing.T) {
	slugs := algorithms.Slugs()
	slices.Sort(slugs)
	if got := starlarkalg.Templates(); !reflect.DeepEqual(got, slugs) {
		t.Errorf("Templates() = %v, want the registry's %v (algorithms/starlarkalg/templates/<slug>.star)", got, slugs)
	}
}
