package scenarios

import (
	"regexp"
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

// implementationWords are what a description shown to students must not say: the
// scenario file's or the code's words (issue 16: "params.variant" in a paragraph).
// A curated scenario's title, paragraph and captions name the setting as Run setup
// and the notes do ("the deadlock-free variant"), never as the file spells it.
var implementationWords = regexp.MustCompile(`\bparams\b|\bp\.[a-z]+=|\{"|"[a-zA-Z]+"\s*:|` + "`" +
	`|\.json\b|\.go\b|\bTest[A-Z]|\bnull\b|\bnil\b|\bSpec\b|\bcfg\b|\bstruct\b|\bslug\b|\bJSON\b`)

func TestCuratedTextsNameNoImplementationDetail(t *testing.T) {
	for _, spec := range algorithms.All() { // the catalogue's cards say these
		for where, s := range map[string]string{"title": spec.Title, "summary": spec.Summary} {
			if m := implementationWords.FindString(s); m != "" {
				t.Errorf("%s, %s: says %q: %q", spec.Slug, where, m, s)
			}
		}
	}
	for _, e := range Curated() {
		texts := map[string]string{"title": e.Scenario.Title, "about": e.Scenario.About}
		for k, c := range e.Scenario.Captions {
			texts["caption "+string(rune('0'+k%10))+" "+c.Text[:min(len(c.Text), 20)]] = c.Text
		}
		for where, s := range texts {
			if m := implementationWords.FindString(s); m != "" {
				t.Errorf("%s, %s: says %q: %q", e.Name, where, m, s)
			}
		}
	}
}

// The check catches what it is for, and lets the notes' notation through.
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
