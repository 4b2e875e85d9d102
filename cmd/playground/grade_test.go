package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/cmd/internal/cli"
	"github.com/teach-dist/playground/scenarios"
)

// checkResultsJSON validates results.json field by field against Gradescope's
// autograder specification: the top-level score, output, visibility and tests; in
// each test name, score, max_score, status ("passed" or "failed"), output and
// visibility; nothing else, each of its type, and the tests' scores adding up.
func checkResultsJSON(t *testing.T, data []byte) (score, maxScore float64, tests []map[string]any) {
	t.Helper()
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatalf("results.json is not JSON: %v\n%s", err, data)
	}
	visibilities := []string{"hidden", "after_due_date", "after_published", "visible"}
	keys := func(m map[string]any) []string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return k
	}
	if got := keys(top); !slices.Equal(got, []string{"output", "score", "tests", "visibility"}) {
		t.Fatalf("top-level fields %v", got)
	}
	score, ok := top["score"].(float64)
	if !ok || score < 0 {
		t.Fatalf("score %v", top["score"])
	}
	if _, ok := top["output"].(string); !ok {
		t.Fatalf("output %v", top["output"])
	}
	if v, ok := top["visibility"].(string); !ok || !slices.Contains(visibilities, v) {
		t.Fatalf("visibility %v", top["visibility"])
	}
	list, ok := top["tests"].([]any)
	if !ok {
		t.Fatalf("tests %v", top["tests"])
	}
	var sum float64
	for k, raw := range list {
		tt, ok := raw.(map[string]any)
		if !ok {
			t.Fatalf("tests[%d] is %T", k, raw)
		}
		if got := keys(tt); !slices.Equal(got, []string{"max_score", "name", "output", "score", "status", "visibility"}) {
			t.Fatalf("tests[%d] fields %v", k, got)
		}
		name, _ := tt["name"].(string)
		s, ok1 := tt["score"].(float64)
		m, ok2 := tt["max_score"].(float64)
		st, _ := tt["status"].(string)
		_, ok3 := tt["output"].(string)
		vis, _ := tt["visibility"].(string)
		if name == "" || !ok1 || !ok2 || !ok3 || s < 0 || s > m || m <= 0 || !slices.Contains(visibilities, vis) ||
			(st != "passed" && st != "failed") || (st == "passed") != (s == m) {
			t.Fatalf("tests[%d] = %v", k, tt)
		}
		sum += s
		maxScore += m
		tests = append(tests, tt)
	}
	if sum != score {
		t.Fatalf("the tests' scores add up to %v, score is %v", sum, score)
	}
	return score, maxScore, tests
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The challenge's shipped source scores below the maximum, with each failed
// property's counterexample as a /r/ link; the Ricart-Agrawala template scores the
// maximum. --json and --junit write the same tests.
func TestGradeGradescopeChallenge(t *testing.T) {
	dir := t.TempDir()
	sc, _ := scenarios.Lookup("challenge-ra-tie-break")
	tmpl, _ := starlarkalg.Template("ricart-agrawala")
	cases := []struct {
		name, source string
		full         bool
	}{
		{"shipped", sc.Source, false},
		{"template", tmpl, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub := writeFile(t, dir, c.name+".star", c.source)
			out := filepath.Join(dir, c.name+".json")
			js := filepath.Join(dir, c.name+".report.json")
			ju := filepath.Join(dir, c.name+".xml")
			stdout, _, err := runArgs(t, "", "grade", "--url", "https://play.example.edu/", "--gradescope", out, "--json", js, "--junit", ju, "challenge-ra-tie-break", sub)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			score, maxScore, tests := checkResultsJSON(t, data)
			if maxScore != 3 || (score == maxScore) != c.full {
				t.Fatalf("score %v of %v", score, maxScore)
			}
			links := 0
			for _, tt := range tests {
				if strings.Contains(tt["output"].(string), "https://play.example.edu/r/v") {
					links++
				}
			}
			if c.full != (links == 0) {
				t.Fatalf("%d counterexample links:\n%s", links, data)
			}
			if !strings.Contains(stdout, "score: ") {
				t.Errorf("summary %q", stdout)
			}
			var rep struct {
				Score float64 `json:"score"`
				Tests []any   `json:"tests"`
			}
			if b, err := os.ReadFile(js); err != nil || json.Unmarshal(b, &rep) != nil || rep.Score != score || len(rep.Tests) != len(tests) {
				t.Fatalf("--json: %v %+v", err, rep)
			}
			var suites struct {
				Suites []struct {
					Tests    int `xml:"tests,attr"`
					Failures int `xml:"failures,attr"`
				} `xml:"testsuite"`
			}
			if b, err := os.ReadFile(ju); err != nil || xml.Unmarshal(b, &suites) != nil || len(suites.Suites) != 1 || suites.Suites[0].Tests != len(tests) {
				t.Fatalf("--junit: %v %+v", err, suites)
			}
		})
	}
}

// Exit 0 whenever it graded, a submission folder without one .star file included;
// exit 1 on bad input, with results.json saying why when --gradescope is given.
func TestGradeExitStatus(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "two")
	writeFile(t, two, "a.star", "x = 1\n")
	writeFile(t, two, "sub/b.star", "x = 1\n")
	good := writeFile(t, dir, "good.star", "title = 1\n")
	cases := []struct {
		name       string
		args       []string
		code       int
		wantOutput string
	}{
		{"no star file", []string{"challenge-ra-tie-break", empty}, 0, "has no .star file"},
		{"two star files", []string{"challenge-ra-tie-break", two}, 0, "2 .star files (a.star, sub/b.star)"},
		{"does not load", []string{"challenge-ra-tie-break", good}, 0, "the source does not load"},
		{"unknown assignment", []string{"no-such-assignment", good}, 1, "neither a file nor a curated assignment"},
		{"missing submission", []string{"challenge-ra-tie-break", filepath.Join(dir, "nope.star")}, 1, "no such file"},
		{"bad assignment file", []string{writeFile(t, dir, "bad.json", `{"assignment": 7}`), good}, 1, "assignment: 7 is not a supported version"},
		{"one argument", []string{"challenge-ra-tie-break"}, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
			_, _, err := runArgs(t, "", append([]string{"grade", "--quiet", "--gradescope", out}, c.args...)...)
			code := 0
			if err != nil {
				code = cli.ExitCode(err)
			}
			if code != c.code {
				t.Fatalf("exit %d (%v), want %d", code, err, c.code)
			}
			if c.wantOutput == "" {
				return
			}
			data, rerr := os.ReadFile(out)
			if rerr != nil {
				t.Fatalf("no results.json: %v", rerr)
			}
			score, _, _ := checkResultsJSON(t, data)
			if score != 0 || !strings.Contains(string(data), c.wantOutput) {
				t.Fatalf("results.json:\n%s", data)
			}
		})
	}
}

// The packed autograder, unpacked into a temporary root as Gradescope lays it out,
// grades a correct and a broken submission with run_autograder alone.
func TestGradePackRunsAutograderInATemporaryRoot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "autograder.zip")
	if _, _, err := runArgs(t, "", "grade", "pack", "ra-second-request", "-o", zipPath, "--url", "https://play.example.edu"); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	unpack := func(root string) {
		for _, f := range zr.File {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "source", f.Name), data, f.Mode()); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range zr.File {
		names = append(names, f.Name)
		if (f.Name == "run_autograder" || f.Name == "setup.sh" || f.Name == "playground") && f.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable in the zip (%v)", f.Name, f.Mode())
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"assignment.json", "playground", "run_autograder", "setup.sh"}) {
		t.Fatalf("zip holds %v", names)
	}
	tmpl, _ := starlarkalg.Template("ricart-agrawala")
	broken := strings.Replace(tmpl, "    s.replied = [False] * ctx.n\n    s.replies = 0\n    ctx.exit()", "    ctx.exit()", 1)
	if broken == tmpl {
		t.Fatal("the broken submission is the template")
	}
	cases := []struct {
		name, source string
		full         bool
	}{{"correct", tmpl, true}, {"broken", broken, false}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(dir, c.name)
			for _, d := range []string{"source", "submission"} {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			unpack(root)
			writeFile(t, root, "submission/ra.star", c.source)
			setup := exec.Command(filepath.Join(root, "source", "setup.sh"))
			if out, err := setup.CombinedOutput(); err != nil {
				t.Fatalf("setup.sh: %v\n%s", err, out)
			}
			cmd := exec.Command(filepath.Join(root, "source", "run_autograder"))
			cmd.Env = append(os.Environ(), rootEnv+"="+root)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("run_autograder: %v\n%s", err, stderr.String())
			}
			data, err := os.ReadFile(filepath.Join(root, "results", "results.json"))
			if err != nil {
				t.Fatal(err)
			}
			score, maxScore, tests := checkResultsJSON(t, data)
			if maxScore != 10 || (score == maxScore) != c.full {
				t.Fatalf("score %v of %v:\n%s", score, maxScore, data)
			}
			hidden, links := 0, 0
			for _, tt := range tests {
				if tt["visibility"] == "after_due_date" {
					hidden++
					if strings.Contains(tt["output"].(string), "https://play.example.edu/r/v") {
						links++
					}
				}
			}
			if hidden != 3 || (links == 0) != c.full {
				t.Errorf("%d tests after the due date (want 3), %d with a counterexample link:\n%s", hidden, links, data)
			}
		})
	}
}
