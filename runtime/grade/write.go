package grade

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Gradescope is results.json as Gradescope's autograder specification defines it:
// the total score, an output shown above the tests, the visibility of the results,
// and one entry per test.
type Gradescope struct {
	Score      float64          `json:"score"`
	Output     string           `json:"output"`
	Visibility string           `json:"visibility"`
	Tests      []GradescopeTest `json:"tests"`
}

// GradescopeTest is one test of results.json.
type GradescopeTest struct {
	Name       string  `json:"name"`
	Score      float64 `json:"score"`
	MaxScore   float64 `json:"max_score"`
	Status     string  `json:"status"` // "passed" or "failed"
	Output     string  `json:"output"`
	Visibility string  `json:"visibility"` // "visible" or "after_due_date"
}

// Gradescope visibilities.
const (
	Visible      = "visible"
	AfterDueDate = "after_due_date"
)

// Gradescope returns the report as results.json.
func (r *Report) Gradescope() *Gradescope {
	g := &Gradescope{Score: r.Score, Output: r.headline(), Visibility: Visible, Tests: []GradescopeTest{}}
	for _, t := range r.Tests {
		gt := GradescopeTest{Name: t.Name, Score: t.Score, MaxScore: t.MaxScore, Status: "failed", Output: t.Output, Visibility: Visible}
		if t.Passed {
			gt.Status = "passed"
		}
		if t.Hidden {
			gt.Visibility = AfterDueDate
		}
		g.Tests = append(g.Tests, gt)
	}
	return g
}

// headline is the report's first paragraph: the score, or why nothing was proved.
// It counts the hidden checks' points only as "more after the due date", since
// Gradescope shows it to the student at once.
func (r *Report) headline() string {
	var shown, shownMax, hiddenMax float64
	hidden := 0
	for _, t := range r.Tests {
		if t.Hidden {
			hidden++
			hiddenMax += t.MaxScore
			continue
		}
		shown += t.Score
		shownMax += t.MaxScore
	}
	s := fmt.Sprintf("%s: %s of %s points on the checks shown now", r.Title, num(shown), num(shownMax))
	if hidden > 0 {
		s += fmt.Sprintf("; %d more tests (%s points) are shown after the due date", hidden, num(hiddenMax))
	}
	s += "."
	if r.Problem != "" {
		s += "\nNothing could be proved: " + r.Problem
	}
	return s
}

// WriteGradescope writes results.json.
func (r *Report) WriteGradescope(w io.Writer) error { return r.Gradescope().Write(w) }

// Write writes results.json.
func (g *Gradescope) Write(w io.Writer) error { return writeJSON(w, g) }

// NotGraded is results.json for a submission the grader could not grade (a broken
// assignment, an unreadable submission): no score, and why.
func NotGraded(why string) *Gradescope {
	return &Gradescope{Output: "The autograder could not grade this submission: " + why, Visibility: Visible, Tests: []GradescopeTest{}}
}

// WriteJSON writes the report itself.
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// JUnit XML, as CI systems read it: one suite, a test case per property of a check.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Props    []junitProp `xml:"properties>property"`
	Cases    []junitCase `xml:"testcase"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: r.Assignment, Tests: len(r.Tests), Time: strconv.FormatFloat(r.Seconds, 'f', 3, 64),
		Props: []junitProp{{"score", num(r.Score)}, {"maxScore", num(r.MaxScore)}, {"submission", r.Submission}}}
	for _, t := range r.Tests {
		c := junitCase{Name: t.Name, ClassName: r.Assignment + "." + t.Property}
		if t.Passed {
			c.SystemOut = t.Output
		} else {
			s.Failures++
			first, _, _ := strings.Cut(t.Output, "\n")
			c.Failure = &junitFailure{Message: first, Text: t.Output}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteSummary writes the report for a terminal: the score, then a line per test
// (hidden ones marked), then what each failed test found.
func (r *Report) WriteSummary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s), submission %s\n", r.Title, r.Assignment, r.Submission)
	fmt.Fprintf(&b, "score: %s of %s\n", num(r.Score), num(r.MaxScore))
	if r.Problem != "" {
		fmt.Fprintf(&b, "nothing could be proved: %s\n", r.Problem)
	}
	for _, t := range r.Tests {
		mark := "FAIL"
		if t.Passed {
			mark = "ok  "
		}
		hidden := ""
		if t.Hidden {
			hidden = " (shown after the due date)"
		}
		fmt.Fprintf(&b, "  %s %s/%s  %s%s\n", mark, num(t.Score), num(t.MaxScore), t.Name, hidden)
	}
	for _, t := range r.Tests {
		if t.Passed || r.Problem != "" {
			continue
		}
		fmt.Fprintf(&b, "\n%s\n  %s\n", t.Name, strings.ReplaceAll(t.Output, "\n", "\n  "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// num writes points without a needless fraction: 3, 2.5.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
