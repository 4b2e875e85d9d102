package pages

import (
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// ruleView is one rule of the pseudocode panel: an invented label (Ours) is marked
// "not in the notes" (docs/labels.md), and LabelTitle says where labels come from.
type ruleView struct {
	sim.Rule
	Ours       bool
	LabelTitle string
}

func newRuleView(r sim.Rule, legend string) ruleView {
	if r.Notes == "" {
		return ruleView{Rule: r, Ours: true,
			LabelTitle: r.Label + " is not in the notes: a label of this playground. " + legend}
	}
	return ruleView{Rule: r, LabelTitle: r.Label + " is the notes' label (" + notesList(r.Notes) + "), with their meaning. " + legend}
}

// NotesLegend says which notes give which labels, from every registered algorithm's
// rules: "Labels from the notes: Ricart-Agrawala (000) RI1 RA1-RA3 RE1 RH1 RR1; ...".
func NotesLegend() string {
	var parts []string
	for _, s := range algorithms.All() {
		var labels, notes []string
		for _, r := range s.Rules {
			if r.Notes == "" {
				continue
			}
			labels = append(labels, r.Label)
			for _, n := range strings.Fields(r.Notes) {
				if !slices.Contains(notes, n) {
					notes = append(notes, n)
				}
			}
		}
		if len(labels) > 0 {
			slices.Sort(notes)
			parts = append(parts, s.Title+" ("+strings.Join(notes, ", ")+") "+strings.Join(labelRanges(labels), " "))
		}
	}
	if len(parts) == 0 {
		return "No label here comes from the notes."
	}
	return "Labels from the notes: " + strings.Join(parts, "; ") + "."
}

// notesList writes a rule's Notes ("000 004") as a reader expects a list: "000, 004".
func notesList(notes string) string { return strings.Join(strings.Fields(notes), ", ") }

// labelRanges writes runs of labels with one prefix and consecutive numbers as a range,
// as the notes do: RA1 RA2 RA3 -> RA1-RA3. A pair stays two labels.
func labelRanges(labels []string) []string {
	var out []string
	for i := 0; i < len(labels); {
		p, n, ok := splitLabel(labels[i])
		j := i + 1
		for ok && j < len(labels) {
			q, m, ok2 := splitLabel(labels[j])
			if !ok2 || q != p || m != n+(j-i) {
				break
			}
			j++
		}
		if j-i >= 3 {
			out = append(out, labels[i]+"-"+labels[j-1])
		} else {
			out = append(out, labels[i:j]...)
		}
		i = j
	}
	return out
}

// splitLabel splits "RA12" into "RA" and 12.
func splitLabel(l string) (string, int, bool) {
	k := strings.IndexAny(l, "0123456789")
	if k <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(l[k:])
	return l[:k], n, err == nil
}
