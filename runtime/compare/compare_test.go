package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/sim"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"3-9", []int{3, 4, 5, 6, 7, 8, 9}},
		{"4,6,8", []int{4, 6, 8}},
		{"8, 3-5 ,4", []int{3, 4, 5, 8}},
		{"5", []int{5}},
		{"2-17", []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}},
		{"2-18", nil}, // 17 sizes
		{"1-4", nil},
		{"", nil},
		{"3-", nil},
		{"33", nil},
	}
	lim := DefaultLimits()
	for _, tc := range tests {
		got, err := ParseSizes(tc.in, lim)
		if tc.want == nil {
			if err == nil || err.Param != "n" {
				t.Errorf("%q: %v, %v; want an error about n", tc.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseSizes(SizesString(got), lim); !slices.Equal(back, got) {
			t.Errorf("%q: written back as %q", tc.in, SizesString(got))
		}
	}
}

// A query names the parameter it gets wrong; a good one has a canonical form that
// parses back to itself, and what it leaves out takes the defaults.
func TestParseQuery(t *testing.T) {
	tests := []struct{ query, param, canonical string }{
		{"", "", "alg=ricart-agrawala&alg=central&alg=lamport&n=3-9&seeds=3&workload=light"},
		{"alg=bully&alg=bully&n=5,3-4&workload=heavy&seeds=2", "", "alg=bully&n=3-5&seeds=2&workload=heavy"},
		{"alg=quicksort", "alg", ""},
		{"alg=ricart-agrawala&n=9-3", "n", ""},
		{"alg=ricart-agrawala&workload=medium", "workload", ""},
		{"alg=ricart-agrawala&seeds=0", "seeds", ""},
		{"alg=ricart-agrawala&colour=red", "colour", ""},
		{"alg=central&alg=lamport&alg=maekawa&alg=bully&n=2-17&seeds=10", "n", ""},        // too many runs
		{"alg=bakery&alg=token-ring&alg=raymond&n=17-32&seeds=4&workload=heavy", "n", ""}, // too much work
	}
	for _, tc := range tests {
		q, _ := url.ParseQuery(tc.query)
		cq, err := ParseQuery(q, DefaultLimits())
		if tc.param != "" {
			if err == nil || err.Param != tc.param {
				t.Errorf("%q: %v; want an error about %s", tc.query, err, tc.param)
			}
			continue
		}
		if err != nil || cq.Canonical() != tc.canonical {
			t.Errorf("%q: %q, %v; want %q", tc.query, cq.Canonical(), err, tc.canonical)
			continue
		}
		back, _ := url.ParseQuery(cq.Canonical())
		if again, err := ParseQuery(back, DefaultLimits()); err != nil || again.Canonical() != cq.Canonical() {
			t.Errorf("%q: the canonical form reads back as %q, %v", tc.query, again.Canonical(), err)
		}
	}
}

// A comparison is computed once per canonical query: the second ask is the first
// result; a context already ended computes nothing.
func TestEngineCachesByCanonicalQuery(t *testing.T) {
	e := New(Options{CacheSize: 1})
	parse := func(s string) Query {
		q, _ := url.ParseQuery(s)
		cq, err := ParseQuery(q, e.Limits())
		if err != nil {
			t.Fatal(err)
		}
		return cq
	}
	a, b := parse("alg=central&n=3&seeds=1"), parse("alg=central&n=4&seeds=1")
	first, err := e.Compare(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if c := first.Cells["central"][3]; c == nil || c.Runs != 1 || c.Entries == 0 {
		t.Fatalf("cell of central at N=3: %+v", c)
	}
	if again, _ := e.Compare(context.Background(), parse("seeds=1&n=3&alg=central")); again != first {
		t.Error("the same comparison was computed twice")
	}
	if _, err := e.Compare(context.Background(), b); err != nil { // evicts a (cache of one)
		t.Fatal(err)
	}
	if again, _ := e.Compare(context.Background(), a); again == first {
		t.Error("a result outlived the cache's size")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Compare(ctx, parse("alg=lamport&n=3&seeds=1")); !errors.Is(err, context.Canceled) {
		t.Errorf("an ended context: %v, want context.Canceled", err)
	}
}

// The notes compare the elections in one situation, the coordinator (the highest id)
// crashed before anyone calls (000: "the ring algorithm is more efficient on average
// than the bully algorithm"): every election algorithm's workload crashes it first and
// never has it call. Every election then settles on the highest live id. The ring
// elections need to skip a crashed successor for that: the lecture's case has the leader crashed.
func TestElectionsCompareFromACrashedLeader(t *testing.T) {
	for _, spec := range algorithms.All() {
		if spec.Family != sim.Election {
			continue
		}
		for _, workload := range []string{"light", "heavy"} {
			for _, n := range []int{4, 6} {
				for seed := uint64(1); seed <= 3; seed++ {
					name := fmt.Sprintf("%s %s N=%d seed %d", spec.Slug, workload, n, seed)
					cfg, err := WorkloadConfig(spec, n, workload, seed, DefaultLimits().MaxEvents)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					crashed := -1
					for _, a := range cfg.Actions {
						switch {
						case a.Do == sim.ActCrash && a.At == 0:
							crashed = a.Node
						case a.Do == sim.ActElect && a.Node == n-1:
							t.Errorf("%s: the crashed leader calls an election", name)
						}
					}
					if crashed != n-1 {
						t.Errorf("%s: crashed %d first, want the highest id %d", name, crashed, n-1)
					}
					res, err := cost.Replay(cfg, nil, math.MaxInt)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if len(res.Elections) == 0 {
						t.Errorf("%s: no election measured", name)
					}
					for _, el := range res.Elections {
						if el.Settled == nil || el.Leader != n-2 {
							t.Errorf("%s: election called by P%d settled on %d (settled: %v), want P%d", name, el.Start.Node, el.Leader, el.Settled != nil, n-2)
						}
					}
				}
			}
		}
	}
}

// On /compare the leader is crashed first, so a ring election goes round N-1 live
// processes: the notes' figures are those of n = N-1 and the cell says so. Measured
// runs never exceed 000's worst case 3n - 1 for that n, and ring-list's one starter
// costs exactly 002's 2N for it.
func TestRingElectionFiguresCountTheLiveRing(t *testing.T) {
	e := New(Options{CacheSize: 1})
	q, _ := url.ParseQuery("alg=ring&alg=ring-list&alg=bully&n=5,8&seeds=5")
	cq, err := ParseQuery(q, e.Limits())
	if err != nil {
		t.Fatal(err)
	}
	res, cerr := e.Compare(context.Background(), cq)
	if cerr != nil {
		t.Fatal(cerr)
	}
	notes := func(c *Cell, formula string) float64 {
		for _, th := range c.Theory[cost.ElectionMessages] {
			for _, f := range th.Notes {
				if strings.HasPrefix(f.Formula, formula) && f.Value != nil {
					return *f.Value
				}
			}
		}
		t.Fatalf("no notes' figure %q in %+v", formula, c.Theory[cost.ElectionMessages])
		return 0
	}
	for _, n := range []int{5, 8} {
		live := fmt.Sprintf("n = %d live processes", n-1)
		ring := res.Cells["ring"][n]
		if got := ring.TheoryOf[cost.ElectionMessages]; got != live {
			t.Errorf("ring N=%d: figures for %q, want %q", n, got, live)
		}
		if got, want := notes(ring, "3n - 1"), float64(3*(n-1)-1); got != want {
			t.Errorf("ring N=%d: 3n - 1 = %v, want %v", n, got, want)
		}
		if a := ring.Values[cost.ElectionMessages]; a.Max > notes(ring, "3n - 1") {
			t.Errorf("ring N=%d: measured up to %v, above the worst case", n, a.Max)
		}
		list := res.Cells["ring-list"][n]
		if got, want := notes(list, "Requires 2N"), float64(2*(n-1)); got != want {
			t.Errorf("ring-list N=%d: 2N = %v, want %v", n, got, want)
		}
		if a := list.Values[cost.ElectionMessages]; a.Min != notes(list, "Requires 2N") || a.Max != a.Min {
			t.Errorf("ring-list N=%d: measured %v to %v, want exactly 2N = %v", n, a.Min, a.Max, notes(list, "Requires 2N"))
		}
		bully := res.Cells["bully"][n]
		if got := bully.TheoryOf[cost.ElectionMessages]; got != fmt.Sprintf("n = %d processes", n) {
			t.Errorf("bully N=%d: figures for %q, want every process", n, got)
		}
	}
}
