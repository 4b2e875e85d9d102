package algorithms

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/runtime/sim/simtest"
)

// The page draws each algorithm's stage decorations (sim.Stage) from its processes'
// variables, read again at every step. These tests run each algorithm that declares
// one over seeded workloads and check, at every step, that what the page will draw is
// what the decoration claims: a tree, a pointer along it to the token, one
// coordinator, voting sets that meet, a ring that messages follow.

// stageRun steps one seeded run of spec over n processes and calls check with the
// snapshot and every process's variables after each step.
func stageRun(t *testing.T, spec *sim.Spec, n int, seed uint64, check func(snap sim.Snapshot, vars []map[string]json.RawMessage, sends []sim.Message)) {
	t.Helper()
	ids := spec.Defaults.IDs(n)
	p, err := spec.ParseParams(nil, ids)
	if spec.ParseParams == nil {
		p, err = nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var sends []sim.Message
	sink := func(ev *sim.Event) {
		if ev.Type == sim.EvSend {
			sends = append(sends, ev.Msg.Clone())
		}
	}
	cfg := sim.Config{Spec: spec, IDs: ids, Params: p, Seed: seed, Network: sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true},
		CS: 2, Until: 300, Actions: simtest.RandomActions(seed, n, spec.Family, simtest.Workload{Requests: 10, Span: 100})}
	s, err := sim.New(cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	for {
		snap := s.Snapshot()
		vars := make([]map[string]json.RawMessage, n)
		for i, nv := range snap.Nodes {
			if err := json.Unmarshal(nv.State, &vars[i]); err != nil {
				t.Fatalf("%s: P%d's state %s: %v", spec.Slug, nv.ID, nv.State, err)
			}
		}
		check(snap, vars, sends)
		sends = sends[:0]
		more, err := s.Step()
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return
		}
	}
}

// idVar reads a variable holding one id (-1: none).
func idVar(t *testing.T, slug string, v map[string]json.RawMessage, name string) int {
	t.Helper()
	var id int
	if err := json.Unmarshal(v[name], &id); err != nil {
		t.Fatalf("%s: variable %q is %s, want one id", slug, name, v[name])
	}
	return id
}

func TestStageDecorationsHoldAtEveryStep(t *testing.T) {
	declared := map[string]bool{}
	for _, spec := range All() {
		st := spec.Stage
		if st.Mark == "" && st.Edges == "" && st.Pointer == "" && st.Group == "" && !st.Ring {
			continue
		}
		declared[spec.Slug] = true
		t.Run(spec.Slug, func(t *testing.T) {
			n := spec.Defaults.Nodes
			for seed := uint64(1); seed <= 8; seed++ {
				stageRun(t, spec, n, seed, func(snap sim.Snapshot, vars []map[string]json.RawMessage, sends []sim.Message) {
					ids := spec.Defaults.IDs(n)
					index := func(id int) int { return slices.Index(ids, id) }
					if st.Mark != "" {
						// Every process names the same process of the run.
						want := idVar(t, spec.Slug, vars[0], st.Mark)
						for i := range vars {
							if got := idVar(t, spec.Slug, vars[i], st.Mark); got != want || index(got) < 0 {
								t.Fatalf("seed %d step %d: P%d marks P%d as %s, P%d marks P%d", seed, snap.Step, ids[i], got, st.MarkLabel, ids[0], want)
							}
						}
					}
					if st.Edges != "" {
						checkTree(t, spec, seed, snap.Step, ids, vars)
					}
					if st.Pointer != "" {
						checkPointers(t, spec, seed, snap, ids, vars)
					}
					if st.Group != "" {
						checkGroups(t, spec, seed, snap.Step, ids, vars)
					}
					if st.Ring {
						// No crash in these runs: every message goes to the next process in
						// ring order (the ids order), the direction the page draws, except
						// an ack, which answers the process before.
						for _, m := range sends {
							next := (m.From + 1) % n
							if m.To != next && !(m.Type == "ACK" && m.To == (m.From+n-1)%n) {
								t.Fatalf("seed %d step %d: %s from P%d to P%d, not to the next on the ring P%d", seed, snap.Step, m.Type, ids[m.From], ids[m.To], ids[next])
							}
						}
					}
				})
			}
		})
	}
	for _, slug := range []string{"central", "raymond", "maekawa", "token-ring", "ring", "ring-list"} {
		if !declared[slug] {
			t.Errorf("%s declares no stage decoration", slug)
		}
	}
}

// checkTree: the Edges variables form one tree over every process (one root, -1),
// never changing.
func checkTree(t *testing.T, spec *sim.Spec, seed uint64, step int, ids []int, vars []map[string]json.RawMessage) {
	t.Helper()
	roots := 0
	for i := range vars {
		seen := map[int]bool{}
		for k := i; ; {
			up := idVar(t, spec.Slug, vars[k], spec.Stage.Edges)
			if up < 0 {
				break
			}
			if seen[k] || slices.Index(ids, up) < 0 {
				t.Fatalf("seed %d step %d: following %s from P%d never reaches a root", seed, step, spec.Stage.Edges, ids[i])
			}
			seen[k] = true
			k = slices.Index(ids, up)
		}
		if idVar(t, spec.Slug, vars[i], spec.Stage.Edges) < 0 {
			roots++
		}
	}
	if roots != 1 {
		t.Fatalf("seed %d step %d: %d roots, want one tree", seed, step, roots)
	}
}

// checkPointers: a process points at itself exactly when it holds the token, and
// otherwise at a neighbour in the tree (its parent or one of its children).
func checkPointers(t *testing.T, spec *sim.Spec, seed uint64, snap sim.Snapshot, ids []int, vars []map[string]json.RawMessage) {
	t.Helper()
	st := spec.Stage
	for i := range vars {
		to := idVar(t, spec.Slug, vars[i], st.Pointer)
		if (to == ids[i]) != snap.Nodes[i].Token {
			t.Fatalf("seed %d step %d: P%d points at P%d but holds the token: %v", seed, snap.Step, ids[i], to, snap.Nodes[i].Token)
		}
		if to == ids[i] || st.Edges == "" {
			continue
		}
		j := slices.Index(ids, to)
		if j < 0 || (idVar(t, spec.Slug, vars[i], st.Edges) != to && idVar(t, spec.Slug, vars[j], st.Edges) != ids[i]) {
			t.Fatalf("seed %d step %d: P%d points at P%d, which is no neighbour in the tree", seed, snap.Step, ids[i], to)
		}
	}
}

// checkGroups: each process's group holds ids of the run, itself among them, and any
// two groups meet (Maekawa's voting sets: the reason a vote excludes).
func checkGroups(t *testing.T, spec *sim.Spec, seed uint64, step int, ids []int, vars []map[string]json.RawMessage) {
	t.Helper()
	groups := make([][]int, len(vars))
	for i := range vars {
		if err := json.Unmarshal(vars[i][spec.Stage.Group], &groups[i]); err != nil {
			t.Fatalf("%s: variable %q is %s, want a list of ids", spec.Slug, spec.Stage.Group, vars[i][spec.Stage.Group])
		}
		if !slices.Contains(groups[i], ids[i]) || slices.ContainsFunc(groups[i], func(id int) bool { return !slices.Contains(ids, id) }) {
			t.Fatalf("seed %d step %d: P%d's %s %v", seed, step, ids[i], spec.Stage.GroupLabel, groups[i])
		}
	}
	for i := range groups {
		for j := range i {
			if !slices.ContainsFunc(groups[i], func(id int) bool { return slices.Contains(groups[j], id) }) {
				t.Fatalf("seed %d step %d: the %ss of P%d %v and P%d %v do not meet", seed, step, spec.Stage.GroupLabel, ids[i], groups[i], ids[j], groups[j])
			}
		}
	}
}

// Only algorithms whose processes say who holds a token show one in the legend.
func TestHasToken(t *testing.T) {
	want := []string{"ricart-agrawala-token", "token-ring", "suzuki-kasami", "raymond"}
	var got []string
	for _, spec := range All() {
		if spec.HasToken() {
			got = append(got, spec.Slug)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("algorithms with a token %v, want %v", got, want)
	}
}
