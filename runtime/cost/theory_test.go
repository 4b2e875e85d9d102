package cost

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// Every figure says where it comes from: the notes' formulas name notes that exist
// and have a text; a cost with no note must carry the project's own figure.
func TestCostsNameTheirSource(t *testing.T) {
	note := regexp.MustCompile(`^00[0-4]$`)
	for _, spec := range algorithms.All() {
		for _, c := range spec.Costs {
			if len(c.Notes) == 0 && c.Formula == "" {
				t.Errorf("%s: %q has neither the notes' formula nor a derived one", spec.Slug, c.Name)
			}
			for _, f := range c.Notes {
				if f.Formula == "" || len(f.In) == 0 {
					t.Errorf("%s: %q: a notes' formula %+v without its text or its notes", spec.Slug, c.Name, f)
				}
				for _, in := range f.In {
					if !note.MatchString(in) {
						t.Errorf("%s: %q: %q is not a note (000 ... 004)", spec.Slug, c.Name, in)
					}
				}
			}
		}
	}
}

// Each row's arithmetic: a delay's figures are in message times T, and Time gives
// them in time units at the run's T (here 2: 2T is 4, T is 2), the unit the run
// measures in and the panel's head states; a count has no Time.
func TestTheoryDelaysInTimeUnits(t *testing.T) {
	const n, meanDelay = 5, 2.0
	delays := []string{ClientDelay, SyncDelay, ElectionTime}
	rows := 0
	for _, spec := range algorithms.All() {
		for _, key := range []string{PerEntry, ToEnter, OnExit, ClientDelay, SyncDelay, ElectionMessages, ElectionTime} {
			isDelay := slices.Contains(delays, key)
			check := func(what string, v, tm *float64) {
				rows++
				switch {
				case v == nil && tm != nil:
					t.Errorf("%s %s %s: a time without a value", spec.Slug, key, what)
				case v != nil && isDelay && (tm == nil || *tm != *v*meanDelay):
					t.Errorf("%s %s %s: value %v T, time %v; want %v", spec.Slug, key, what, *v, tm, *v*meanDelay)
				case !isDelay && tm != nil:
					t.Errorf("%s %s %s: a count with a time %v", spec.Slug, key, what, *tm)
				}
			}
			for _, th := range TheoryFor(spec, key, n, meanDelay) {
				check("derived "+th.Formula, th.Value, th.Time)
				for _, f := range th.Notes {
					check("notes "+f.Formula, f.Value, f.Time)
				}
			}
		}
	}
	// The ones the issue names: central's 2T is 4 time units, Ricart-Agrawala's T is 2.
	for _, tc := range []struct {
		slug, key string
		want      float64
	}{{"central", SyncDelay, 4}, {"central", ClientDelay, 4}, {"ricart-agrawala", SyncDelay, 2}, {"lamport", SyncDelay, 2}} {
		th := TheoryFor(spec(t, tc.slug), tc.key, n, meanDelay)
		if len(th) == 0 || th[0].Time == nil || *th[0].Time != tc.want {
			t.Errorf("%s %s: %+v, want %v time units", tc.slug, tc.key, th, tc.want)
		}
	}
	if rows == 0 {
		t.Fatal("no figure checked")
	}
}

// The notes' Bully figures, as 000, 002 and 003 give them, apart from the derived ones
// that count the ELECTION lost to the crashed coordinator and the ANSWERs.
func TestBullyNotesFigures(t *testing.T) {
	th := TheoryFor(spec(t, "bully"), ElectionMessages, 6, 0)
	if len(th) != 2 {
		t.Fatalf("%d figures, want best and worst case: %+v", len(th), th)
	}
	best, worst := th[0], th[1]
	for _, f := range best.Notes {
		if f.Value == nil || *f.Value != 4 {
			t.Errorf("best case, notes %v: %q worth %v, want N-2 = 4", f.In, f.Formula, f.Value)
		}
	}
	if *best.Value != 5 {
		t.Errorf("derived best case %v, want N-1 = 5", *best.Value)
	}
	k := slices.IndexFunc(worst.Notes, func(f NoteFigure) bool { return slices.Equal(f.In, []string{"002"}) })
	if k < 0 || worst.Notes[k].Formula != "((N-1) + (N-2) + … + 1) + N-1 ⇒ O(N²)" || *worst.Notes[k].Value != 20 {
		t.Errorf("worst case: %+v, want 002's ((N-1) + ... + 1) + N-1 = 20", worst.Notes)
	}
	if *worst.Value != 29 {
		t.Errorf("derived worst case %v, want N²-N-1 = 29", *worst.Value)
	}
}

// A range is one figure with two bounds, not its upper bound alone: "0 to 2(N-1)" for
// N = 5 is 0 to 8, with no single Value; a delay's bounds come in time units too.
func TestTheoryOfARange(t *testing.T) {
	spec := &sim.Spec{Slug: "range", Family: sim.Mutex, Costs: []sim.Cost{
		{Name: "messages per CS entry", Formula: "0 to 2(N-1): none when nobody else asked",
			Low: func(int) float64 { return 0 }, High: func(n int) float64 { return float64(2 * (n - 1)) }},
		{Name: "client delay", Formula: "T to 2T",
			Low: func(int) float64 { return 1 }, High: func(int) float64 { return 2 }},
	}}
	th := TheoryFor(spec, PerEntry, 5, 2)
	if len(th) != 1 || th[0].Value != nil || th[0].Range == nil || th[0].Range.Low != 0 || th[0].Range.High != 8 ||
		th[0].Range.LowTime != nil || th[0].Range.HighTime != nil {
		t.Fatalf("messages per entry: %+v, want the range 0 to 8 and no single value", th)
	}
	th = TheoryFor(spec, ClientDelay, 5, 2)
	if r := th[0].Range; r == nil || r.Low != 1 || r.High != 2 || r.LowTime == nil || *r.LowTime != 2 || r.HighTime == nil || *r.HighTime != 4 {
		t.Fatalf("client delay: %+v, want 1 to 2 T, 2 to 4 time units", th[0].Range)
	}
	b, err := json.Marshal(th[0])
	if err != nil || !strings.Contains(string(b), `"value":null`) || !strings.Contains(string(b), `"range":{"low":1,"high":2,"lowTime":2,"highTime":4}`) {
		t.Errorf("the JSON the pages read: %s %v", b, err)
	}
}
