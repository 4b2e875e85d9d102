package grade

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/scenarios"
)

// The tests grade in the sandbox, as the command does: its workers are this test
// binary started again (runtime/sandbox's init serves them), at the test's own CPU
// priority, as the command's are (a grader does nothing else meanwhile).
var testPool = sandbox.New(sandbox.Options{Workers: 1, Nice: -1})

func TestMain(m *testing.M) {
	scenarios.UseSourceLoader(testPool)
	code := m.Run()
	testPool.Close()
	os.Exit(code)
}

func grade(t *testing.T, a *Assignment, source string) *Report {
	t.Helper()
	r, err := Grade(context.Background(), a, Submission{Name: "s.star", Source: source}, Options{Explorer: testPool})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tests) == 0 {
		t.Fatal("no tests in the report")
	}
	return r
}

// solution is a source that meets the curated assignment: testdata/solutions/NAME.star,
// else the template of its algorithm.
func solution(t *testing.T, a *Assignment) string {
	t.Helper()
	if src, err := os.ReadFile(filepath.Join("testdata", "solutions", a.Name+".star")); err == nil {
		return string(src)
	}
	src, ok := starlarkalg.Template(a.Algorithm)
	if !ok {
		t.Fatalf("no solution for %s", a.Name)
	}
	return src
}

// Every curated assignment (the challenges among them) is graded below its maximum
// for its starting source, with a counterexample link for a broken property, and at
// its maximum for a solution.
func TestCurated_StartingSourceLosesPointsAndASolutionGetsThemAll(t *testing.T) {
	if len(Names()) < 12 {
		t.Fatalf("only %d curated assignments: %v", len(Names()), Names())
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			a, _ := Lookup(name)
			r := grade(t, a, a.Source)
			if r.Problem != "" || r.Score >= r.MaxScore || r.MaxScore != a.MaxScore() {
				t.Fatalf("starting source: %s of %s (problem %q)", num(r.Score), num(r.MaxScore), r.Problem)
			}
			links := 0
			for _, tt := range r.Tests {
				if !tt.Passed && tt.Score != 0 || tt.Passed && tt.Score != tt.MaxScore {
					t.Errorf("%s: score %v of %v, passed %v", tt.Name, tt.Score, tt.MaxScore, tt.Passed)
				}
				if tt.Counterexample != "" {
					links++
					if !strings.HasPrefix(tt.Counterexample, "/r/") || !strings.Contains(tt.Output, tt.Counterexample) {
						t.Errorf("%s: counterexample %q, output %q", tt.Name, tt.Counterexample, tt.Output)
					}
					if _, err := scenarios.DecodeLink(strings.TrimPrefix(tt.Counterexample, "/r/")); err != nil {
						t.Errorf("%s: the link does not decode: %v", tt.Name, err)
					}
				}
			}
			if links == 0 {
				t.Errorf("no failed test carries a counterexample: %+v", r.Tests)
			}
			r = grade(t, a, solution(t, a))
			if r.Score != r.MaxScore {
				var b strings.Builder
				_ = r.WriteSummary(&b)
				t.Fatalf("solution: %s", b.String())
			}
		})
	}
}

// A check marked hidden is graded like the others, and results.json shows it after
// the due date; the headline counts only what students see at once.
func TestHiddenChecksAreGradedAndShownAfterTheDueDate(t *testing.T) {
	a, _ := Lookup("ra-second-request")
	r := grade(t, a, a.Source)
	g := r.Gradescope()
	var visible, after int
	for k, tt := range g.Tests {
		switch {
		case r.Tests[k].Hidden && tt.Visibility == AfterDueDate:
			after++
			if tt.Status != "failed" {
				t.Errorf("hidden %s: %s, want failed (the bug shows at the second request)", tt.Name, tt.Status)
			}
		case !r.Tests[k].Hidden && tt.Visibility == Visible:
			visible++
			if tt.Status != "passed" {
				t.Errorf("%s: %s, want passed (one request each works)", tt.Name, tt.Status)
			}
		default:
			t.Errorf("%s: visibility %q, hidden %v", tt.Name, tt.Visibility, r.Tests[k].Hidden)
		}
	}
	if visible != 3 || after != 3 || g.Score != 4 {
		t.Fatalf("%d visible, %d after the due date, score %v", visible, after, g.Score)
	}
	if !strings.Contains(g.Output, "4 of 4 points on the checks shown now; 3 more tests (6 points) are shown after the due date") {
		t.Errorf("output %q", g.Output)
	}
}

// A submission that does not load, fails while it runs, or tries to run for ever is
// graded (zero where nothing could be proved), never an error of the grader.
func TestBrokenSubmissionsAreGradedNotFatal(t *testing.T) {
	a, _ := Lookup("challenge-ra-tie-break")
	tmpl, _ := starlarkalg.Template("ricart-agrawala")
	cases := []struct {
		name, source, problem, output string
	}{
		{"syntax", "title = \n", "the source does not load: line 1", ""},
		{"empty", "  \n", "the submission is empty", ""},
		{"handler error", strings.Replace(tmpl, "s.clock = max(s.clock, m.ts) + 1\n    if s.state == \"HELD\"",
			"s.clock = max(s.clock, m.ts) + 1\n    s.nope = 1\n    if s.state == \"HELD\"", 1), "", `"nope"`},
		{"endless loop", strings.Replace(tmpl, "def on_REQUEST(ctx, s, m):\n", "def on_REQUEST(ctx, s, m):\n    while True:\n        pass\n", 1), "", "units of work"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := grade(t, a, c.source)
			if r.Score != 0 {
				t.Fatalf("score %v", r.Score)
			}
			if c.problem != "" && !strings.HasPrefix(r.Problem, c.problem) {
				t.Fatalf("problem %q, want %q...", r.Problem, c.problem)
			}
			for _, tt := range r.Tests {
				if tt.Passed || !strings.Contains(tt.Output, c.output) || !strings.HasPrefix(tt.Output, "not proved: ") {
					t.Errorf("%s: %q", tt.Name, tt.Output)
				}
			}
		})
	}
}

func TestParseNamesTheField(t *testing.T) {
	good := `{"assignment": 1, "name": "x", "title": "T", "goal": "G", "algorithm": "central", "source": "title = 1",
	  "checks": [{"name": "c", "scenario": {"version": 2, "algorithm": "central", "nodes": 3, "seed": 1}, "points": {"mutual-exclusion": 1}}]}`
	if _, err := Parse([]byte(good), nil); err != nil {
		t.Fatalf("good: %v", err)
	}
	cases := []struct{ name, from, to, field string }{
		{"version", `"assignment": 1`, `"assignment": 2`, "assignment"},
		{"name", `"name": "x"`, `"name": "X Y"`, "name"},
		{"unknown algorithm", `"algorithm": "central"`, `"algorithm": "nope"`, "algorithm"},
		{"other algorithm", `"algorithm": "central", "nodes"`, `"algorithm": "ricart-agrawala", "nodes"`, "checks[0].scenario.algorithm"},
		{"property", `"mutual-exclusion": 1`, `"leader": 1`, "checks[0].points.leader"},
		{"points", `"mutual-exclusion": 1`, `"mutual-exclusion": 0`, "checks[0].points.mutual-exclusion"},
		{"nodes", `"nodes": 3`, `"nodes": 9999`, "checks[0].scenario.nodes"},
		{"time", `"source"`, `"timeLimit": 9999, "source"`, "timeLimit"},
		{"curated", `{"version": 2, "algorithm": "central", "nodes": 3, "seed": 1}`, `"no-such"`, "checks[0].scenario"},
		{"requests", `"points"`, `"requests": 9, "points"`, "checks[0].requests"},
		{"sourceFile", `"source": "title = 1"`, `"sourceFile": "../x.star"`, "sourceFile"},
		{"no checks", `"checks": [{`, `"checks": [], "x": [{`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(good, c.from, c.to, 1)
			if doc == good {
				t.Fatal("the case changes nothing")
			}
			_, err := Parse([]byte(doc), nil)
			var ae *Error
			if !errors.As(err, &ae) || ae.Field != c.field {
				t.Fatalf("got %v, want an error on field %q", err, c.field)
			}
		})
	}
}

// The JSON and JUnit reports carry the same tests as the summary.
func TestReportsAgree(t *testing.T) {
	a, _ := Lookup("challenge-ra-tie-break")
	r := grade(t, a, a.Source)
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Score != r.Score || len(back.Tests) != len(r.Tests) {
		t.Fatalf("JSON report: %v %+v", err, back)
	}
	var ju bytes.Buffer
	if err := r.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil || len(suites.Suites) != 1 {
		t.Fatalf("JUnit: %v\n%s", err, ju.String())
	}
	s := suites.Suites[0]
	failed := 0
	for _, tt := range r.Tests {
		if !tt.Passed {
			failed++
		}
	}
	if s.Tests != len(r.Tests) || s.Failures != failed || failed == 0 || len(s.Cases) != len(r.Tests) {
		t.Fatalf("JUnit suite %+v, want %d tests, %d failures", s, len(r.Tests), failed)
	}
	var sum strings.Builder
	if err := r.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "score: 0 of 3") || !strings.Contains(sum.String(), "FAIL 0/1  the challenge's configuration: mutual exclusion") {
		t.Errorf("summary:\n%s", sum.String())
	}
}

// A submission cannot hang or exhaust the grader: a handler that allocates without
// end stops at the interpreter's bound, a state space without end at the
// assignment's time limit (or the search's memory, whichever comes first), each a
// failed test with the bound named, and the grader goes on.
func TestGradingIsBounded(t *testing.T) {
	tmpl, _ := starlarkalg.Template("central")
	doc := `{"assignment": 2, "name": "bounded", "title": "T", "goal": "G", "algorithm": "central", "source": "title = 1", "timeLimit": 1,
	  "checks": [{"name": "c", "scenario": {"version": 2, "algorithm": "central", "nodes": 3, "seed": 1}, "points": {"mutual-exclusion": 1}}]}`
	a, err := Parse([]byte(strings.Replace(doc, `"assignment": 2`, `"assignment": 1`, 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, source, output string }{
		{"allocates without end", strings.Replace(tmpl, "def on_request(ctx, s):\n", "def on_request(ctx, s):\n    x = [0]\n    for i in range(60):\n        x = x + x\n", 1), "not proved: "},
		{"states without end", strings.Replace(strings.NewReplacer(`"queue": []}`, `"queue": [], "tick": 0}`,
			`out = [("state", s.state), ("coordinator", ctx.params.coordinator)]`, `out = [("state", s.state), ("coordinator", ctx.params.coordinator), ("tick", s.tick)]`).Replace(tmpl),
			"def on_request(ctx, s):\n", "def on_timer(ctx, s, name):\n    s.tick += 1\n    ctx.set_timer(\"tick\", 1)\n\ndef on_request(ctx, s):\n    ctx.set_timer(\"tick\", 1)\n", 1),
			"limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.source == tmpl {
				t.Fatal("the case changes nothing")
			}
			start := time.Now()
			r := grade(t, a, c.source)
			if r.Score != 0 || r.Tests[0].Passed || !strings.Contains(r.Tests[0].Output, c.output) {
				t.Fatalf("score %v: %q", r.Score, r.Tests[0].Output)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("grading took %v", d)
			}
			t.Logf("%s", r.Tests[0].Output)
		})
	}
}
