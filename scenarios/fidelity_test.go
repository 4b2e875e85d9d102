package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms"
)

// The course notes the playground teaches from, beside the repository
// (../shared/seeds, docs/fidelity.md), by number: "000" ... "004".
func courseNotes(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "seeds", "0*.txt"))
	if len(files) == 0 {
		t.Skip("the course notes are not beside the repository (../shared/seeds)")
	}
	notes := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		notes[filepath.Base(f)[:3]] = string(b)
	}
	return notes
}

// squash makes a quotation and a note comparable: lower case, without the notes'
// markup (TeX dollars and backslashes, Markdown emphasis, braces) and without any
// white space, which the notes' extraction breaks anywhere.
func squash(s string) string {
	s = strings.NewReplacer(`\sqrt`, "√", `\bmod`, "mod").Replace(strings.ToLower(s))
	return strings.Map(func(r rune) rune {
		switch r {
		case '$', '\\', '*', '_', '`', '{', '}', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, s)
}

var (
	// "quoted words" and the notes named in the parentheses just after them.
	quoteCited = regexp.MustCompile(`"([^"]{6,}?)"([^"|]{0,60}?)\((0\d\d(?:(?:, | and |, and )0\d\d)*)\)`)
	// a list of the notes' rule labels and the notes named after it: "RE1 RH1 RH2 (000)".
	labelsCited = regexp.MustCompile(`((?:\bR[IAEHR]\d(?:-R[IAEHR]\d)?,?\s+)+)\((0\d\d(?:, 0\d\d)*)\)`)
	noteNumber  = regexp.MustCompile(`0\d\d`)
)

// Every quotation in docs/fidelity.md is in the words of each note it names (a "..." or
// "…" leaves words out), and every list of the notes' rule labels names only notes
// that give each label: a claim attributed to a note is that note's.
func TestFidelityQuotesAreTheNotes(t *testing.T) {
	notes := courseNotes(t)
	squashed := map[string]string{}
	for k, v := range notes {
		squashed[k] = squash(v)
	}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "fidelity.md"))
	if err != nil {
		t.Fatal(err)
	}
	quotes, labels := 0, 0
	for n, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		for _, cell := range strings.Split(line, " | ") {
			for _, m := range quoteCited.FindAllStringSubmatch(cell, -1) {
				quotes++
				for _, note := range noteNumber.FindAllString(m[3], -1) {
					for _, part := range regexp.MustCompile(`\.\.\.|…`).Split(m[1], -1) {
						if p := squash(part); p != "" && !strings.Contains(squashed[note], p) {
							t.Errorf("line %d: %q is not in %s", n+1, strings.TrimSpace(part), note)
						}
					}
				}
			}
			for _, m := range labelsCited.FindAllStringSubmatch(cell, -1) {
				for _, note := range noteNumber.FindAllString(m[2], -1) {
					for _, label := range expandLabels(m[1]) {
						labels++
						if !strings.Contains(notes[note], "["+label+"]") {
							t.Errorf("line %d: label %s is not in %s", n+1, label, note)
						}
					}
				}
			}
		}
	}
	if quotes < 40 || labels < 5 {
		t.Errorf("checked %d quotations and %d labels: the patterns no longer find them", quotes, labels)
	}
}

// expandLabels turns "RI1 RA1-RA3" into RI1 RA1 RA2 RA3.
func expandLabels(list string) []string {
	var out []string
	for _, f := range strings.Fields(strings.ReplaceAll(list, ",", " ")) {
		lo, hi, ok := strings.Cut(f, "-")
		if !ok {
			out = append(out, f)
			continue
		}
		a, _ := strconv.Atoi(lo[2:])
		b, _ := strconv.Atoi(hi[2:])
		for k := a; k <= b; k++ {
			out = append(out, lo[:2]+strconv.Itoa(k))
		}
	}
	return out
}

// squashFormula is squash for formulas: TeX's \dots, \Rightarrow, ^2 and friends set
// as the plain text the project writes them in (docs/metrics.md: \sqrt{N} as √N).
func squashFormula(s string) string {
	return squash(strings.NewReplacer(`\dots`, "…", `\Rightarrow`, "⇒", "^2", "²", `\infty`, "∞", `\le`, "≤",
		"âˆ’", "-", "−", "-").Replace(s)) // a minus sign the notes' extraction garbled
}

// caseWords are the cases the notes file a figure under, as a cost's name says them.
var caseWords = map[string][]string{
	"best case":  {"best"},
	"worst case": {"worst"},
	"average":    {"average"},
}

// Every figure an algorithm gives as the notes' (sim.Cost.Notes) is in the words of
// each note it names, as docs/metrics.md promises ("exactly as a note writes it"); and
// a figure filed under a case (best case, worst case, on average) is one its note gives
// for that case: the nearest case the note names before the figure is that one.
func TestNotesFormulasAreTheNotesWords(t *testing.T) {
	notes := courseNotes(t)
	squashed := map[string]string{}
	for k, v := range notes {
		squashed[k] = squashFormula(v)
	}
	checked := 0
	for _, spec := range algorithms.All() {
		for _, cmp := range spec.Comparisons {
			for _, note := range cmp.In {
				checked++
				if !strings.Contains(squashed[note], squashFormula(cmp.Claim)) {
					t.Errorf("%s compared with %s: %q is not in %s's words", spec.Slug, cmp.Other, cmp.Claim, note)
				}
			}
		}
		for _, c := range spec.Costs {
			name := strings.ToLower(c.Name)
			for _, nf := range c.Notes {
				for _, note := range nf.In {
					checked++
					f := squashFormula(nf.Formula)
					at := strings.Index(squashed[note], f)
					if at < 0 {
						t.Errorf("%s, %q: %q is not in %s's words", spec.Slug, c.Name, nf.Formula, note)
						continue
					}
					for caseName := range caseWords {
						if !strings.Contains(name, caseName) {
							continue
						}
						if got := nearestCase(squashed[note][:at]); got != caseName {
							t.Errorf("%s, %q: %s gives %q under %q, not under %q", spec.Slug, c.Name, note, nf.Formula, got, caseName)
						}
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("checked %d figures", checked)
	}
}

// nearestCase is the case named last in before, within the 300 characters before the
// figure; "" when none is.
func nearestCase(before string) string {
	if len(before) > 300 {
		before = before[len(before)-300:]
	}
	best, where := "", -1
	for caseName, words := range caseWords {
		for _, w := range words {
			if k := strings.LastIndex(before, w); k > where {
				best, where = caseName, k
			}
		}
	}
	return best
}
