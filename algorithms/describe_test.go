package algorithms

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Pages draw every algorithm from what it declares; these tests keep the declarations
// complete and true.

// Each message type has a short label, unique within its algorithm, that no other
// label of the algorithm begins with (REL beside RELQ reads as a cut-off stub).
func TestMessageLabels(t *testing.T) {
	for _, s := range All() {
		seen := map[string]string{}
		for _, m := range s.Messages {
			if m.Label == "" || utf8.RuneCountInString(m.Label) > 5 {
				t.Errorf("%s: message %s has label %q, want 1 to 5 characters", s.Slug, m.Name, m.Label)
			}
			if other, ok := seen[m.Label]; ok {
				t.Errorf("%s: messages %s and %s share the label %q", s.Slug, other, m.Name, m.Label)
			}
			seen[m.Label] = m.Name
		}
		for a, an := range seen {
			for b, bn := range seen {
				if a != b && strings.HasPrefix(b, a) {
					t.Errorf("%s: label %q (%s) begins label %q (%s): one reads as a stub of the other", s.Slug, a, an, b, bn)
				}
			}
		}
	}
}

func TestStageNamesDeclaredVars(t *testing.T) {
	for _, s := range All() {
		st := s.Stage
		for _, v := range []string{st.Mark, st.Edges, st.Pointer, st.Group, st.GroupAbout} {
			if v != "" && !slices.ContainsFunc(s.Vars, func(x sim.Var) bool { return x.Name == v }) {
				t.Errorf("%s: the stage reads variable %q, which Vars does not declare", s.Slug, v)
			}
		}
		if st.GroupAbout != "" && st.Group == "" {
			t.Errorf("%s: GroupAbout %q says something of groups the stage does not show (no Group)", s.Slug, st.GroupAbout)
		}
		for _, pair := range [][2]string{{st.Mark, st.MarkLabel}, {st.Edges, st.EdgesLabel}, {st.Pointer, st.PointerLabel}, {st.Group, st.GroupLabel}} {
			if (pair[0] == "") != (pair[1] == "") {
				t.Errorf("%s: a stage decoration needs its variable and its label, got %q and %q", s.Slug, pair[0], pair[1])
			}
		}
	}
}

var ids = []int{0, 1, 2, 3, 4}

func TestParamsAreDeclared(t *testing.T) {
	for _, s := range All() {
		if (s.ParseParams == nil) != (len(s.Params) == 0) {
			t.Errorf("%s: declares %d params but ParseParams is nil=%t", s.Slug, len(s.Params), s.ParseParams == nil)
		}
		for _, f := range s.Params {
			checkDeclaration(t, s.Slug, f)
		}
	}
}

func checkDeclaration(t *testing.T, slug string, f sim.Param) {
	t.Helper()
	if f.Name == "" || f.Doc == "" || strings.Contains(f.Doc, "\n") {
		t.Errorf("%s: param %q needs a name and a one-line doc", slug, f.Name)
	}
	switch f.Kind {
	case sim.ParamInt:
		if f.Min < 0 || f.Max < 0 || (f.Max > 0 && f.Max < f.Min) {
			t.Errorf("%s: param %s has range %d..%d", slug, f.Name, f.Min, f.Max)
		}
	case sim.ParamChoice:
		if len(f.Choices) < 2 {
			t.Errorf("%s: choice %s has %d choices", slug, f.Name, len(f.Choices))
		}
	case sim.ParamNode:
		if f.Default != sim.FirstID && f.Default != sim.LowestID && f.Default != sim.HighestID {
			t.Errorf("%s: node param %s has default %q", slug, f.Name, f.Default)
		}
	case sim.ParamBool:
	case sim.ParamObject:
		for _, sub := range f.Fields {
			checkDeclaration(t, slug, sub)
		}
	default:
		t.Errorf("%s: param %s has kind %q", slug, f.Name, f.Kind)
	}
}

// A declared default is what a field left out really gets: giving it changes nothing.
func TestDeclaredDefaultsAreTheDefaults(t *testing.T) {
	for _, s := range All() {
		if s.ParseParams == nil {
			continue
		}
		def, err := s.ParseParams(nil, ids)
		if err != nil {
			t.Fatalf("%s: defaults: %v", s.Slug, err)
		}
		for _, c := range defaultsOf(s.Params) {
			got, err := s.ParseParams([]byte(c), ids)
			if err != nil || !reflect.DeepEqual(got, def) {
				t.Errorf("%s: %s gives %+v (err %v), want the defaults %+v", s.Slug, c, got, err, def)
			}
		}
	}
}

// defaultsOf writes, for every field with a declared default, a params object giving
// just that field its default.
func defaultsOf(fields []sim.Param) []string {
	var out []string
	for _, f := range fields {
		v := f.Default
		if f.Kind == sim.ParamNode {
			v = strconv.Itoa(params.DefaultID(f, ids))
		}
		if v != "" {
			out = append(out, `{"`+f.Name+`": `+v+`}`)
		}
		for _, sub := range defaultsOf(f.Fields) {
			out = append(out, `{"`+f.Name+`": `+sub+`}`)
		}
	}
	return out
}

// A value a field does not accept is refused with an error that names the field.
func TestBadParamsNameTheirField(t *testing.T) {
	for _, s := range All() {
		for _, f := range s.Params {
			bad := []any{[]any{[]any{}}}
			switch f.Kind {
			case sim.ParamInt:
				bad = append(bad, f.Min-1, "1")
			case sim.ParamNode:
				bad = append(bad, 99, 1.5)
			case sim.ParamChoice:
				bad = append(bad, "no-such-"+f.Name, 1)
			case sim.ParamBool:
				bad = append(bad, "true", 0)
			}
			for _, v := range bad {
				raw, _ := json.Marshal(map[string]any{f.Name: v})
				_, err := s.ParseParams(raw, ids)
				if err == nil || !strings.HasPrefix(err.Error(), "params."+f.Name) {
					t.Errorf("%s: %s gives %v, want an error naming params.%s", s.Slug, raw, err, f.Name)
				}
			}
		}
	}
}

// A cost is one number (Value), a range (Low and High together, in place of Value,
// with a formula "LOW to HIGH") or a formula alone: never a range's upper bound
// passed off as its value, which pages would show as the figure.
func TestCostRangesAreWhole(t *testing.T) {
	for _, s := range All() {
		for _, c := range s.Costs {
			if c.Low == nil && c.High == nil {
				continue
			}
			switch {
			case c.Low == nil || c.High == nil:
				t.Errorf("%s: %q declares one bound of a range: give Low and High", s.Slug, c.Name)
			case c.Value != nil || c.ValueFor != nil || c.ValueK != nil:
				t.Errorf("%s: %q is a range and a single value at once", s.Slug, c.Name)
			case !strings.Contains(c.Formula, " to "):
				t.Errorf("%s: %q is a range; write its formula LOW to HIGH, not %q", s.Slug, c.Name, c.Formula)
			default:
				for n := sim.MinNodes; n <= sim.MaxNodes; n++ {
					if lo, hi := c.Low(n), c.High(n); lo > hi {
						t.Errorf("%s: %q for %d processes: low %v above high %v", s.Slug, c.Name, n, lo, hi)
						break
					}
				}
			}
		}
	}
}
