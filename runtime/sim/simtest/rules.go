package simtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// EveryRuleHasATest fails the test for each rule of spec that no test is named after
// (docs/adding-an-algorithm.md: TestCG1_... for CG-1, the label without its hyphen,
// then "_" or nothing) in the _test.go files of dirs: "." (the package under test)
// when none is given. A rule that a shared helper fires may be tested beside it: the
// package then names that folder too.
func EveryRuleHasATest(t testing.TB, spec *sim.Spec, dirs ...string) {
	t.Helper()
	untested, err := UntestedRules(spec, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range untested {
		t.Errorf("rule %s has no test named after it (Test%s_...)", label, strings.ReplaceAll(label, "-", ""))
	}
}

// UntestedRules lists the labels of spec's rules that no Test function of dirs' _test.go
// files is named after.
func UntestedRules(spec *sim.Spec, dirs ...string) ([]string, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var tests []string
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
		if err != nil {
			return nil, err
		}
		for _, path := range files {
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
					tests = append(tests, fn.Name.Name)
				}
			}
		}
	}
	var out []string
	for _, r := range spec.Rules {
		if !namedAfter(tests, strings.ReplaceAll(r.Label, "-", "")) {
			out = append(out, r.Label)
		}
	}
	return out, nil
}

// namedAfter says whether a test is TestLABEL or TestLABEL_...: CR1 is not named by
// TestCR10_....
func namedAfter(tests []string, label string) bool {
	for _, name := range tests {
		rest, ok := strings.CutPrefix(name, "Test"+label)
		if ok && (rest == "" || rest[0] == '_') {
			return true
		}
	}
	return false
}

// ParseCase is one row of a params decoder's table: the params JSON ("" for none) and
// what it decodes to, or, when Err is set, the start of the error it must give.
type ParseCase struct {
	Raw  string
	Want any
	Err  string
}

// ParseTable decodes every case's Raw with parse (an algorithm's ParseParams) for ids
// and reports each case that decodes to something else or fails otherwise.
func ParseTable(t testing.TB, parse func(raw []byte, ids []int) (any, error), ids []int, cases []ParseCase) {
	t.Helper()
	for _, c := range cases {
		var raw []byte
		if c.Raw != "" {
			raw = []byte(c.Raw)
		}
		got, err := parse(raw, ids)
		switch {
		case c.Err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.Err)):
			t.Errorf("ParseParams(%s) error = %v, want one starting %q", c.Raw, err, c.Err)
		case c.Err == "" && err != nil:
			t.Errorf("ParseParams(%s): %v", c.Raw, err)
		case c.Err == "" && !reflect.DeepEqual(got, c.Want):
			t.Errorf("ParseParams(%s) = %+v, want %+v", c.Raw, got, c.Want)
		}
	}
}
