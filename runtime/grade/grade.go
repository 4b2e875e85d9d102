package grade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// Explorer searches a scenario that has a source. The sandbox's pool is one
// (runtime/sandbox Pool.Explore): the search runs in a worker process under the
// sandbox's memory limit and is killed at its time limit, so a submission cannot hang
// or exhaust the grader.
type Explorer interface {
	Explore(ctx context.Context, sc *scenarios.Scenario, opt explore.Options) (*explore.Result, error)
}

// Submission is what a student handed in: Source, read from Name. Problem, when set,
// says why there is no source to grade (no .star file, two of them ...): every check
// then fails with it.
type Submission struct {
	Name    string
	Source  string
	Problem string
}

// Options tune Grade.
type Options struct {
	Explorer Explorer
	// URL is prefixed to counterexample links (e.g. https://play.example.edu); empty
	// leaves them relative (/r/...).
	URL string
	// MaxMemory is one search's memory at most (default 128 MiB, as on the server).
	MaxMemory int64
	// Progress, when set, is told when each check starts.
	Progress func(check string)
}

// DefaultMaxMemory is one search's memory bound: the server's per search.
const DefaultMaxMemory = 128 << 20

// Report is a graded submission (`playground grade --json`).
type Report struct {
	Assignment string  `json:"assignment"`
	Title      string  `json:"title"`
	Submission string  `json:"submission"`
	Score      float64 `json:"score"`
	MaxScore   float64 `json:"maxScore"`
	// Problem says why nothing could be proved (the source does not load, no
	// source was handed in); empty when the checks ran.
	Problem string  `json:"problem,omitempty"`
	Seconds float64 `json:"seconds"`
	Tests   []Test  `json:"tests"`
}

// Test is one property of one check.
type Test struct {
	Name     string  `json:"name"` // "check: property"
	Check    string  `json:"check"`
	Property string  `json:"property"`
	Score    float64 `json:"score"`
	MaxScore float64 `json:"maxScore"`
	Passed   bool    `json:"passed"`
	Hidden   bool    `json:"hidden,omitempty"`
	Output   string  `json:"output"`
	// Counterexample is the shortest run that breaks the property: a /r/ link.
	Counterexample string `json:"counterexample,omitempty"`
	States         int64  `json:"states"`
}

// Grade checks the submission against every check of the assignment and scores it.
// The caller makes scenarios load sources where opt.Explorer runs them
// (scenarios.UseSourceLoader with the sandbox's pool), so that the submission never
// runs in the grader's own process. An error is the grader's trouble (the context
// ended, an explorer that cannot start); the submission's own faults are in the report.
func Grade(ctx context.Context, a *Assignment, sub Submission, opt Options) (*Report, error) {
	start := time.Now()
	if opt.MaxMemory <= 0 {
		opt.MaxMemory = DefaultMaxMemory
	}
	r := &Report{Assignment: a.Name, Title: a.Title, Submission: sub.Name, MaxScore: a.MaxScore()}
	r.Problem = sub.Problem
	if r.Problem == "" && strings.TrimSpace(sub.Source) == "" {
		r.Problem = "the submission is empty"
	}
	for k := range a.Checks {
		c := &a.Checks[k]
		if opt.Progress != nil && r.Problem == "" {
			opt.Progress(c.Name)
		}
		var res *explore.Result
		var why string
		if r.Problem == "" {
			var err error
			res, why, err = a.search(ctx, k, sub.Source, opt)
			if err != nil {
				return nil, err
			}
			if why != "" && isLoadError(why) {
				// The source itself does not load: no check can run.
				r.Problem = why
			}
		}
		if r.Problem != "" {
			why, res = r.Problem, nil
		}
		for _, p := range provable(a.family) {
			pts, ok := c.Points[p]
			if !ok {
				continue
			}
			t := Test{Name: c.Name + ": " + explore.PropertyWords(p), Check: c.Name, Property: p, MaxScore: pts, Hidden: c.Hidden}
			switch {
			case res == nil:
				t.Output = "not proved: " + why
			default:
				t.States = res.States
				v := explore.Meets(&scenarios.Challenge{Prove: []string{p}}, res)
				t.Passed = v.Met
				if v.Met {
					t.Score = pts
					t.Output = "proved: " + v.Why
				} else {
					t.Output = "not proved: " + v.Why
					if res.Result == explore.ResultBounded {
						t.Output = "not proved: " + res.Message // which bound, in the assignment's terms
					}
					if res.Result == explore.ResultViolation && res.Property == p && res.Counterexample != nil {
						t.Counterexample = opt.URL + res.Counterexample.Link
						t.Output += "\n" + res.Message + "\nThe shortest run that breaks it: " + t.Counterexample
						t.Output += "\n" + pathWords(res.Counterexample.Path)
					}
				}
			}
			r.Score += t.Score
			r.Tests = append(r.Tests, t)
		}
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

// loadPrefix starts the explanation of a source that does not load.
const loadPrefix = "the source does not load: "

func isLoadError(why string) bool { return strings.HasPrefix(why, loadPrefix) }

// search runs check k on the source. A fault of the source (it does not load, fails
// while it runs, hits a bound of the sandbox) comes back as why, with no result.
func (a *Assignment) search(ctx context.Context, k int, source string, opt Options) (*explore.Result, string, error) {
	sc := *a.scenarios[k]
	sc.Source = source
	if err := sc.Validate(); err != nil {
		var se *scenarios.Error
		if errors.As(err, &se) && se.Field == "source" {
			return nil, loadPrefix + se.Reason, nil
		}
		return nil, "the configuration does not take this source: " + err.Error(), nil
	}
	cctx, cancel := context.WithTimeout(ctx, time.Duration(a.TimeLimit)*time.Second)
	defer cancel()
	res, err := opt.Explorer.Explore(cctx, &sc, explore.Options{MaxStates: a.MaxStates, MaxMemory: opt.MaxMemory, Workers: 1})
	if ctx.Err() != nil {
		return nil, "", ctx.Err()
	}
	if err != nil {
		var ie *explore.InputError
		if errors.As(err, &ie) {
			return nil, "the explorer cannot search this configuration: " + err.Error(), nil
		}
		var se *scenarios.Error
		if errors.As(err, &se) && se.Line > 0 {
			return nil, fmt.Sprintf("the source failed while it ran (line %d): %s", se.Line, se.Reason), nil
		}
		return nil, "the search stopped: " + err.Error(), nil
	}
	if res.Result == explore.ResultBounded && res.Bound == explore.BoundTime {
		res.Message = fmt.Sprintf("the search did not end within the assignment's time limit (%d s): %s", a.TimeLimit, res.Message)
	}
	return res, "", nil
}

// maxPathLines is how many steps of a counterexample a report spells out.
const maxPathLines = 40

func pathWords(path []string) string {
	var b strings.Builder
	for k, s := range path {
		if k == maxPathLines {
			fmt.Fprintf(&b, "  ... %d more steps (the link shows them all)\n", len(path)-k)
			break
		}
		fmt.Fprintf(&b, "  %d. %s\n", k+1, s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
