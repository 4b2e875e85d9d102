package scenarios

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
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
