package algorithms

import (
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// fromNotes is, for every algorithm, the exact set of rule labels the course notes give
// (with the notes that give them): those and only those keep the notes' spelling. Every
// algorithm not listed takes none of its labels from the notes.
var fromNotes = map[string]map[string]string{
	"ricart-agrawala": {
		"RI1": "000", "RA1": "000", "RA2": "000", "RA3": "000", "RE1": "000", "RH1": "000", "RR1": "000",
	},
	"ricart-agrawala-token": {
		// 000 and 004 both give these seven, with the same meaning.
		"RI1": "000 004", "RI2": "000 004", "RA1": "000 004", "RH1": "000 004", "RH2": "000 004", "RR1": "000 004", "RR2": "000 004",
	},
	"bully": {"RE1": "000", "RH1": "000", "RH2": "000"},
}

// invented is the form of a label the project makes up (docs/labels.md): a tag, a
// hyphen, a number. The notes never write a hyphen, so the two cannot be confused.
var invented = regexp.MustCompile(`^[A-Z]{2,3}-[0-9]+$`)

// notesLike is a tag that reads like one of the notes' (RI, RA, RE, RH, RR ...).
var notesLike = regexp.MustCompile(`^R[IAEHR]`)

var notesFiles = regexp.MustCompile(`^[0-9]{3}( [0-9]{3})*$`)

func TestLabelsFromTheNotes(t *testing.T) {
	for _, s := range All() {
		t.Run(s.Slug, func(t *testing.T) {
			got := map[string]string{}
			for _, r := range s.Rules {
				if r.Notes == "" {
					if !invented.MatchString(r.Label) {
						t.Errorf("%s: invented label %q does not match %s", s.Slug, r.Label, invented)
					}
					if notesLike.MatchString(r.Label) {
						t.Errorf("%s: invented label %q has a tag that reads like the notes' (R then I, A, E, H or R)", s.Slug, r.Label)
					}
					continue
				}
				if !notesFiles.MatchString(r.Notes) {
					t.Errorf("%s: rule %s: Notes %q is not a list of notes numbers such as \"000\" or \"000 004\"", s.Slug, r.Label, r.Notes)
				}
				got[r.Label] = r.Notes
			}
			want := fromNotes[s.Slug]
			if !maps.Equal(got, want) {
				t.Errorf("%s: labels from the notes %v, want %v", s.Slug, sorted(got), sorted(want))
			}
		})
	}
}

func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"("+v+")")
	}
	slices.Sort(out)
	return out
}

// An invented tag belongs to one algorithm: "CR-1" was both the central coordinator's
// "Leaving the CS" and Chang-Roberts' initialisation. A tag may appear in two
// algorithms only for rules they share (ringnext's DT and AK, the same rules word
// for word in both ring elections).
func TestInventedTagsAreUniqueAcrossAlgorithms(t *testing.T) {
	type owner struct {
		slug string
		rule sim.Rule
	}
	byLabel := map[string][]owner{}
	tags := map[string][]string{}
	for _, s := range All() {
		seen := map[string]bool{}
		for _, r := range s.Rules {
			if r.Notes != "" {
				continue
			}
			byLabel[r.Label] = append(byLabel[r.Label], owner{s.Slug, r})
			if tag, _, _ := strings.Cut(r.Label, "-"); !seen[tag] {
				seen[tag] = true
				tags[tag] = append(tags[tag], s.Slug)
			}
		}
	}
	for tag, slugs := range tags {
		if len(slugs) < 2 {
			continue
		}
		// Shared: every label with this tag is the same rule in every algorithm using it.
		for label, owners := range byLabel {
			if !strings.HasPrefix(label, tag+"-") {
				continue
			}
			for _, o := range owners[1:] {
				if !reflect.DeepEqual(o.rule, owners[0].rule) {
					t.Errorf("tag %s is used by %v: %s means different things in %s and %s", tag, slugs, label, owners[0].slug, o.slug)
				}
			}
			if len(owners) != len(slugs) {
				t.Errorf("tag %s is used by %v, but %s only by %d of them", tag, slugs, label, len(owners))
			}
		}
	}
}
