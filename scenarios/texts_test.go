package scenarios

import (
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

// The catalogue's cards say each algorithm's title and summary to students: the same
// rule as the curated texts (TestCuratedTextsNameNoImplementationDetail).
func TestAlgorithmSummariesNameNoImplementationDetail(t *testing.T) {
	for _, spec := range algorithms.All() {
		for where, s := range map[string]string{"title": spec.Title, "summary": spec.Summary} {
			if m := implementationWords.FindString(s); m != "" {
				t.Errorf("%s, %s: says %q: %q", spec.Slug, where, m, s)
			}
		}
	}
}

// The check catches what it is for ("params.variant" in a paragraph), and
// lets the notes' set notation through.
func TestImplementationWordsAreCaught(t *testing.T) {
	for s, caught := range map[string]bool{
		"set params.variant to deadlock-free":          true,
		`with {"variant": "ids"}`:                      true,
		"open /play/maekawa?p.variant=deadlock-free":   true,
		"see maekawa.go":                               true,
		"V1 = {P1, P2}, V2 = {P2, P3}":                 false,
		"The deadlock-free variant (in Run setup)":     false,
		"'Ties are broken by favoring the smaller id'": false,
	} {
		if got := implementationWords.MatchString(s); got != caught {
			t.Errorf("%q: caught %v, want %v", s, got, caught)
		}
	}
}
