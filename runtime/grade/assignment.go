// Package grade checks a student's source against an assignment with the explorer and
// scores it: each property an assignment asks to prove, in each configuration it
// names, is worth points, earned when the search proves it and lost with the shortest
// counterexample when it breaks. Reports are written for the terminal, for
// Gradescope (results.json), as JSON and as JUnit XML. See docs/assignments.md.
package grade

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// Version is the assignment format this package reads.
const Version = 1

// Bounds of an assignment.
const (
	MaxChecks = 32
	// MaxBytes bounds an assignment file, its starting source included.
	MaxBytes = 256 << 10
	// DefaultTimeLimit and MaxTimeLimit bound one check's search, in seconds.
	DefaultTimeLimit = 20
	MaxTimeLimit     = 600
	// DefaultMaxStates is the web server's bound on one search; an assignment may
	// ask for up to MaxStates.
	DefaultMaxStates = 3_000_000
	MaxStates        = 20_000_000
	// MaxPoints bounds one property's points.
	MaxPoints = 1000
)

// Assignment is the format of an assignment file (docs/assignments.md).
type Assignment struct {
	Assignment int    `json:"assignment"` // the format's version: 1
	Name       string `json:"name"`
	Title      string `json:"title"`
	Goal       string `json:"goal"`
	// Algorithm is the template the submissions ride on (starlarkalg.Templates).
	Algorithm string `json:"algorithm"`
	// Source is the starting source handed to students; SourceFile names a file
	// beside the assignment that holds it instead.
	Source     string `json:"source,omitempty"`
	SourceFile string `json:"sourceFile,omitempty"`
	// TimeLimit is one check's search at most, in seconds (default 20).
	TimeLimit int `json:"timeLimit,omitempty"`
	// MaxStates is one check's search at most, in states (default 3,000,000).
	MaxStates int64   `json:"maxStates,omitempty"`
	Checks    []Check `json:"checks"`

	scenarios []*scenarios.Scenario // Checks' configurations, without a source
	family    sim.Family
}

// Check is one configuration the explorer searches and the properties it must prove.
type Check struct {
	Name string `json:"name"`
	// Scenario is a scenario object (without source) or a curated
	// scenario's name.
	Scenario json.RawMessage `json:"scenario"`
	// Nodes, if set, replaces the scenario's number of processes (and its ids).
	Nodes int `json:"nodes,omitempty"`
	// Requests, if set, replaces the scenario's requests: every process asks this
	// many times (explore.WithRequests). A scenario with no request and no election
	// gets one request per process, or an election called by the lowest id.
	Requests int `json:"requests,omitempty"`
	// Points are the properties to prove and what each is worth.
	Points map[string]float64 `json:"points"`
	// Hidden checks are graded at once but shown to students only after the due
	// date (Gradescope's "after_due_date").
	Hidden bool `json:"hidden,omitempty"`
}

// Error is an assignment that cannot be graded; Field names the culprit.
type Error struct {
	Field  string
	Reason string
}

func (e *Error) Error() string { return scenarios.FieldMessage("assignment", e.Field, e.Reason) }

func fieldErr(field, format string, args ...any) error {
	return &Error{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Parse reads an assignment strictly and validates it. readFile reads a file named
// by the assignment (its sourceFile) relative to the assignment's folder; nil
// refuses sourceFile.
func Parse(data []byte, readFile func(name string) ([]byte, error)) (*Assignment, error) {
	if len(data) > MaxBytes {
		return nil, &Error{Reason: fmt.Sprintf("larger than %d bytes", MaxBytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a Assignment
	if err := dec.Decode(&a); err != nil {
		return nil, &Error{Reason: "not an assignment document: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Reason: "unexpected data after the assignment object"}
	}
	if f := scenarios.DuplicateKey(data); f != "" {
		return nil, fieldErr(f, "is given twice")
	}
	if a.SourceFile != "" {
		if a.Source != "" {
			return nil, fieldErr("sourceFile", "give source or sourceFile, not both")
		}
		if readFile == nil || filepath.IsAbs(a.SourceFile) || strings.Contains(filepath.ToSlash(a.SourceFile), "..") {
			return nil, fieldErr("sourceFile", "%q must be a file beside the assignment", a.SourceFile)
		}
		src, err := readFile(a.SourceFile)
		if err != nil {
			return nil, fieldErr("sourceFile", "%v", err)
		}
		a.Source, a.SourceFile = string(src), ""
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

// ReadFile reads an assignment file; its sourceFile is read from the same folder.
func ReadFile(path string) (*Assignment, error) {
	data, err := readLimited(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	a, err := Parse(data, func(name string) ([]byte, error) {
		return readLimited(filepath.Join(dir, name), starlarkalg.DefaultLimits.Source)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

func readLimited(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

func (a *Assignment) validate() error {
	if a.Assignment != Version {
		return fieldErr("assignment", "%d is not a supported version (this playground reads 1)", a.Assignment)
	}
	if !validName(a.Name) {
		return fieldErr("name", "%q must be 1 to 64 lower-case letters, digits and dashes", a.Name)
	}
	if strings.TrimSpace(a.Title) == "" || len(a.Title) > 200 {
		return fieldErr("title", "must be 1 to 200 characters")
	}
	if strings.TrimSpace(a.Goal) == "" || len(a.Goal) > 2000 {
		return fieldErr("goal", "must be 1 to 2000 characters")
	}
	if !slices.Contains(starlarkalg.Templates(), a.Algorithm) {
		return fieldErr("algorithm", "%q is not an algorithm with a Starlark template (allowed: %s)", a.Algorithm, strings.Join(starlarkalg.Templates(), ", "))
	}
	spec, _ := algorithms.Lookup(a.Algorithm)
	a.family = spec.Family
	if strings.TrimSpace(a.Source) == "" {
		return fieldErr("source", "the assignment has no starting source (source or sourceFile)")
	}
	if len(a.Source) > starlarkalg.DefaultLimits.Source {
		return fieldErr("source", "larger than %d bytes", starlarkalg.DefaultLimits.Source)
	}
	switch {
	case a.TimeLimit == 0:
		a.TimeLimit = DefaultTimeLimit
	case a.TimeLimit < 1 || a.TimeLimit > MaxTimeLimit:
		return fieldErr("timeLimit", "%d is out of range (1 to %d seconds)", a.TimeLimit, MaxTimeLimit)
	}
	switch {
	case a.MaxStates == 0:
		a.MaxStates = DefaultMaxStates
	case a.MaxStates < 1 || a.MaxStates > MaxStates:
		return fieldErr("maxStates", "%d is out of range (1 to %d)", a.MaxStates, MaxStates)
	}
	if len(a.Checks) == 0 || len(a.Checks) > MaxChecks {
		return fieldErr("checks", "has %d checks (1 to %d)", len(a.Checks), MaxChecks)
	}
	a.scenarios = make([]*scenarios.Scenario, len(a.Checks))
	for k := range a.Checks {
		c := &a.Checks[k]
		f := "checks[" + strconv.Itoa(k) + "]"
		if strings.TrimSpace(c.Name) == "" || len(c.Name) > 200 {
			return fieldErr(f+".name", "must be 1 to 200 characters")
		}
		for _, d := range a.Checks[:k] {
			if d.Name == c.Name {
				return fieldErr(f+".name", "%q is the name of an earlier check", c.Name)
			}
		}
		sc, err := c.scenario(spec.Family)
		if err != nil {
			var se *scenarios.Error
			if errors.As(err, &se) && se.Field != "" {
				return fieldErr(f+".scenario."+se.Field, "%s", se.Reason)
			}
			var ie *explore.InputError
			if errors.As(err, &ie) {
				return fieldErr(f+"."+ie.Field, "%s", ie.Reason)
			}
			return fieldErr(f+".scenario", "%v", err)
		}
		if sc.Algorithm != a.Algorithm {
			return fieldErr(f+".scenario.algorithm", "%q is not the assignment's algorithm %q", sc.Algorithm, a.Algorithm)
		}
		if c.Nodes < 0 || c.Nodes > explore.MaxNodes {
			return fieldErr(f+".nodes", "%d is out of range (2 to %d)", c.Nodes, explore.MaxNodes)
		}
		if len(c.Points) == 0 {
			return fieldErr(f+".points", "names no property (allowed: %s)", strings.Join(provable(spec.Family), ", "))
		}
		for _, p := range slices.Sorted(maps.Keys(c.Points)) {
			if !slices.Contains(provable(spec.Family), p) {
				return fieldErr(f+".points."+p, "is not a property of a %s algorithm (allowed: %s)", spec.Family, strings.Join(provable(spec.Family), ", "))
			}
			if v := c.Points[p]; v <= 0 || v > MaxPoints || math.IsNaN(v) {
				return fieldErr(f+".points."+p, "%v is out of range (more than 0, at most %d)", v, MaxPoints)
			}
		}
		a.scenarios[k] = sc
	}
	return nil
}

// scenario decodes the check's configuration, without a source, sized and loaded as
// the check says.
func (c *Check) scenario(family sim.Family) (*scenarios.Scenario, error) {
	var name string
	var sc *scenarios.Scenario
	if json.Unmarshal(c.Scenario, &name) == nil {
		cur, ok := scenarios.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%q is not a curated scenario", name)
		}
		cp := *cur
		sc = &cp
	} else {
		if len(c.Scenario) == 0 || c.Scenario[0] != '{' {
			return nil, errors.New("must be a scenario object or a curated scenario's name")
		}
		var err error
		if sc, err = scenarios.Parse(c.Scenario); err != nil {
			return nil, err
		}
		if sc.Source != "" {
			return nil, &scenarios.Error{Field: "source", Reason: "a check's scenario has no source: the submission is its source"}
		}
	}
	sc.Source, sc.Challenge, sc.Captions = "", nil, nil
	if c.Nodes != 0 {
		sc.Nodes, sc.IDs = c.Nodes, nil
		if err := sc.Validate(); err != nil {
			return nil, err
		}
	}
	if c.Requests != 0 {
		if family != sim.Mutex {
			return nil, &explore.InputError{Field: "requests", Reason: "is for mutual exclusion algorithms"}
		}
		var err error
		if sc, err = explore.WithRequests(sc, c.Requests); err != nil {
			return nil, err
		}
	}
	// As the page's Check does: a configuration with no workload gets one request
	// per process, or an election called by the lowest id.
	sc, _, err := explore.DefaultWorkload(sc)
	return sc, err
}

// MaxScore is the sum of every check's points.
func (a *Assignment) MaxScore() float64 {
	var sum float64
	for _, c := range a.Checks {
		for _, v := range c.Points {
			sum += v
		}
	}
	return sum
}

// Marshal writes the assignment as a self-contained document (its source inline).
func (a *Assignment) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// provable are the properties a check may give points for, in report order.
func provable(f sim.Family) []string {
	if f == sim.Election {
		return []string{sim.PropLeader}
	}
	return []string{sim.PropMutex, sim.PropDeadlock, sim.PropPending}
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
