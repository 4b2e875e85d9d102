package pages

import (
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
		{"central", []string{"CI-1", "CA-1", "CG-1", "CD-1", "CE-1", "CR-1", "CG-2"}, true, ""},
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
