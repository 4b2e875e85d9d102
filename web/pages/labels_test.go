package pages

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

func TestLabelRanges(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"RI1 RA1 RA2 RA3 RE1 RH1 RR1", "RI1 RA1-RA3 RE1 RH1 RR1"},
		{"RI1 RI2 RA1 RH1 RH2 RR1 RR2", "RI1 RI2 RA1 RH1 RH2 RR1 RR2"},
		{"RH1 RH2 RH3 RH5", "RH1-RH3 RH5"},
		{"RA3 RA2 RA1", "RA3 RA2 RA1"},
		{"X", "X"},
	} {
		if got := strings.Join(labelRanges(strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("labelRanges(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// The panel marks exactly the rules without notes as ours, and every tooltip names
// which notes give which labels.
func TestPseudocodeMarksInventedLabels(t *testing.T) {
	legend := NotesLegend()
	for _, want := range []string{"Ricart-Agrawala (000) RI1 RA1-RA3 RE1 RH1 RR1", "Ricart-Agrawala token algorithm (000, 004) RI1 RI2 RA1 RH1 RH2 RR1 RR2"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the legend %q does not say %q", legend, want)
		}
	}
	for _, tc := range []struct {
		slug     string
		ours     []string // the rules marked ours, in order
		wantsKey bool
		notes    string // the notes a notes' label's tooltip names
	}{
		{"ricart-agrawala", nil, false, "000"},
		{"ricart-agrawala-token", nil, false, "000, 004"},
		{"central", []string{"CI-1", "CA-1", "CG-1", "CD-1", "CE-1", "CL-1", "CG-2"}, true, ""},
	} {
		spec, _ := algorithms.Lookup(tc.slug)
		p := BuildPlay(spec, "")
		var ours []string
		for _, g := range p.Groups {
			for _, r := range g.Rules {
				if r.Ours {
					ours = append(ours, r.Label)
				} else if want := r.Label + " is the notes' label (" + tc.notes + ")"; !strings.HasPrefix(r.LabelTitle, want) {
					t.Errorf("%s %s: tooltip %q, want it to start %q", tc.slug, r.Label, r.LabelTitle, want)
				}
				if !strings.HasSuffix(r.LabelTitle, legend) {
					t.Errorf("%s %s: tooltip %q does not name the notes' labels", tc.slug, r.Label, r.LabelTitle)
				}
			}
		}
		if !slices.Equal(ours, tc.ours) {
			t.Errorf("%s: marked ours %v, want %v", tc.slug, ours, tc.ours)
		}
		if (p.OursKey != "") != tc.wantsKey {
			t.Errorf("%s: key %q", tc.slug, p.OursKey)
		}
	}
}

// A rule under the notes' label that does something else than the note's rule says
// so beside it, visibly (sim.Rule.Differs): Bully's RE1 tells the lower ids only where
// 000's RE1 "sends a coordinator message to all processes".
func TestPseudocodeShowsWhereARuleDiffersFromTheNotes(t *testing.T) {
	spec, _ := algorithms.Lookup("bully")
	var buf bytes.Buffer
	if err := PlayPage(BuildPlay(spec, "")).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i := strings.Index(page, `data-rule="RE1"`)
	if i < 0 {
		t.Fatal("no RE1 on the page")
	}
	rule := page[i:]
	rule = rule[:strings.Index(rule, "</li>")]
	for _, want := range []string{`class="differs"`, "differs from the notes", "all processes", "lower ids only"} {
		if !strings.Contains(rule, want) {
			t.Errorf("RE1 on the page does not show %q: %s", want, rule)
		}
	}
	// Every rule that differs is one under the notes' label.
	for _, s := range algorithms.All() {
		for _, r := range s.Rules {
			if r.Differs != "" && r.Notes == "" {
				t.Errorf("%s %s: an invented label says it differs from the notes", s.Slug, r.Label)
			}
		}
	}
}
