package algorithms

import (
	"slices"
	"testing"
)

// What one caller does to the Spec it was given, no other caller sees: every Lookup and
// All builds its own.
func TestSpecsAreNotShared(t *testing.T) {
	for _, slug := range Slugs() {
		a, _ := Lookup(slug)
		b, _ := Lookup(slug)
		want, rule := a.Title, a.Rules[0].Label
		a.Title, a.Rules[0].Label, a.New = "changed", "changed", nil
		if b.Title != want || b.Rules[0].Label != rule || b.New == nil {
			t.Errorf("%s: changing one Lookup's Spec changed another's", slug)
		}
		for _, c := range All() {
			if c.Slug == slug && (c.Title != want || c.Rules[0].Label != rule || c.New == nil) {
				t.Errorf("%s: changing one Lookup's Spec changed All's", slug)
			}
		}
	}
}

func TestLookupFindsEverySlugAndNothingElse(t *testing.T) {
	var got []string
	for _, s := range All() {
		if l, ok := Lookup(s.Slug); !ok || l.Slug != s.Slug {
			t.Errorf("Lookup(%q) = %v, %v", s.Slug, l, ok)
		}
		got = append(got, s.Slug)
	}
	if !slices.Equal(got, Slugs()) || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
		t.Errorf("All's slugs %v, Slugs %v: want each registered algorithm once, in one order", got, Slugs())
	}
	if _, ok := Lookup("no-such-algorithm"); ok {
		t.Error("Lookup found an algorithm that is not registered")
	}
}

func BenchmarkLookup(b *testing.B) {
	for b.Loop() {
		Lookup("ring-list")
	}
}
