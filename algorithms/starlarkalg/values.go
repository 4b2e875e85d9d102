package starlarkalg

// The Starlark values a handler sees: ctx (the step's context), s (the process's
// state) and m (a delivered message), and the checks, copies and encodings of state.

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// record is a value with named fields: a handler's setup and ctx.params, read-only,
// and (with SetField of its own) a process's state.
type record struct {
	kind  string
	names []string
	vals  []starlark.Value
}

func (r *record) String() string        { return r.kind }
func (r *record) Type() string          { return r.kind }
func (r *record) Freeze()               {}
func (r *record) Truth() starlark.Bool  { return true }
func (r *record) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", r.kind) }
func (r *record) AttrNames() []string   { return r.names }
func (r *record) Attr(name string) (starlark.Value, error) {
	if k := slices.Index(r.names, name); k >= 0 {
		return r.vals[k], nil
	}
	return nil, fmt.Errorf("%s has no field %q (fields: %v)", r.kind, name, r.names)
}

// state is a process's variables: the fields init returned, in that order. Setting a
// field init did not return is an error, so a misspelt variable is caught at its line.
type state struct{ record } // its names are shared between clones, never written

// stateOf is a state of these variables and values.
func stateOf(names []string, vals []starlark.Value) *state {
	return &state{record{kind: "state", names: names, vals: vals}}
}

func newState(d *starlark.Dict) (*state, error) {
	st := stateOf(nil, nil)
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, fmt.Errorf("init: the state's keys must be strings, got %s", kv[0].String())
		}
		st.names = append(st.names, k)
		st.vals = append(st.vals, kv[1])
	}
	return st, nil
}

func (s *state) Attr(name string) (starlark.Value, error) {
	if k := slices.Index(s.names, name); k >= 0 {
		return s.vals[k], nil
	}
	return nil, fmt.Errorf("the state has no variable %q (init returned: %s)", name, strings.Join(s.names, ", "))
}
func (s *state) SetField(name string, v starlark.Value) error {
	if k := slices.Index(s.names, name); k >= 0 {
		s.vals[k] = v
		return nil
	}
	return fmt.Errorf("the state has no variable %q (init returned: %s)", name, strings.Join(s.names, ", "))
}

func (s *state) clone() *state {
	c := stateOf(s.names, make([]starlark.Value, len(s.vals)))
	for k, v := range s.vals {
		c.vals[k] = deepCopy(v)
	}
	return c
}

// order is the order the default encoding writes variables in: declared vars first.
func (s *state) order(declared map[string]int) []int {
	idx := make([]int, len(s.names))
	for k := range idx {
		idx[k] = k
	}
	rank := func(k int) (int, string) {
		if r, ok := declared[s.names[k]]; ok {
			return r, ""
		}
		return len(declared), s.names[k]
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra, na := rank(a)
		rb, nb := rank(b)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(na, nb)
	})
	return idx
}

// deepCopy copies the containers of a checked state value; immutable values are shared.
// Dicts keep their insertion order: a clone iterates exactly as the original would.
func deepCopy(v starlark.Value) starlark.Value {
	switch v := v.(type) {
	case *starlark.List:
		elems := make([]starlark.Value, v.Len())
		for k := range elems {
			elems[k] = deepCopy(v.Index(k))
		}
		return starlark.NewList(elems)
	case starlark.Tuple:
		var out starlark.Tuple
		for k, e := range v {
			c := deepCopy(e)
			if c != e && out == nil {
				out = slices.Clone(v)
			}
			if out != nil {
				out[k] = c
			}
		}
		if out == nil {
			return v
		}
		return out
	case *starlark.Dict:
		d := starlark.NewDict(v.Len())
		for _, kv := range v.Items() {
			_ = d.SetKey(kv[0], deepCopy(kv[1])) // keys were hashable in v
		}
		return d
	}
	return v
}

// check bounds a state after a step: only data (None, bools, ints that fit 64 bits,
// strings, lists, tuples, dicts), at most StateValues values, strings of at most
// StringBytes. It runs after every step, so it builds no text unless something is
// wrong, and then names the variable.
//
// It also thaws: a variable that took a global's list or dict holds a frozen value,
// which a clone (a deep copy) would not; it is replaced by a copy, so the run and its
// clones (snapshots, seeks, the explorer) go on alike.
func (p *program) check(s *state) error {
	count := 0
	for k, v := range s.vals {
		frozen := false
		if why := p.checkValue(v, 0, &count, &frozen); why != "" {
			return fmt.Errorf("s.%s: %s", s.names[k], why)
		}
		if frozen {
			s.vals[k] = deepCopy(v)
		}
	}
	return nil
}

// isFrozen reports whether a list or dict is frozen (a global's), by an update that
// changes nothing: go.starlark.net offers no other way to ask.
func isFrozen(v starlark.Value) bool {
	switch v := v.(type) {
	case *starlark.List:
		if v.Len() == 0 {
			return v.Clear() != nil
		}
		return v.SetIndex(0, v.Index(0)) != nil
	case *starlark.Dict:
		if v.Len() == 0 {
			return v.Clear() != nil
		}
		kv := v.Items()[0]
		return v.SetKey(kv[0], kv[1]) != nil
	}
	return false
}

// scalar is a value checkValue accepts as it is: None, a bool, an int of 64 bits.
func scalar(v starlark.Value) bool {
	switch v := v.(type) {
	case starlark.Bool, starlark.NoneType:
		return true
	case starlark.Int:
		_, ok := v.Int64()
		return ok
	}
	return false
}

// checkValue says what is wrong with v ("" when nothing), counting its values.
func (p *program) checkValue(v starlark.Value, depth int, count *int, frozen *bool) string {
	*count++
	if *count > p.limits.StateValues {
		return fmt.Sprintf("the state holds more than %d values", p.limits.StateValues)
	}
	if depth > 32 {
		return "nested more than 32 deep"
	}
	switch v := v.(type) {
	case starlark.NoneType, starlark.Bool:
	case starlark.Int:
		if _, ok := v.Int64(); !ok {
			return v.String() + " does not fit in 64 bits"
		}
	case starlark.String:
		if len(v) > p.limits.StringBytes {
			return fmt.Sprintf("a string of %d bytes, more than %d", len(v), p.limits.StringBytes)
		}
	case *starlark.List:
		*frozen = *frozen || isFrozen(v)
		for k := 0; k < v.Len(); k++ {
			e := v.Index(k)
			if scalar(e) && *count < p.limits.StateValues {
				*count++ // a list of flags or small numbers, the common case, without a call each
				continue
			}
			if why := p.checkValue(e, depth+1, count, frozen); why != "" {
				return why
			}
		}
	case starlark.Tuple:
		for _, e := range v {
			if why := p.checkValue(e, depth+1, count, frozen); why != "" {
				return why
			}
		}
	case *starlark.Dict:
		*frozen = *frozen || isFrozen(v)
		for _, kv := range v.Items() {
			if why := p.checkValue(kv[0], depth+1, count, frozen); why != "" {
				return why
			}
			if why := p.checkValue(kv[1], depth+1, count, frozen); why != "" {
				return why
			}
		}
	default:
		return fmt.Sprintf("a %s cannot be kept in the state (only None, bools, ints, strings, lists, tuples and dicts)", v.Type())
	}
	return ""
}

// writeVar writes one inspector variable: strings, bools and ints as themselves, a list
// of ints as an array, a list of int pairs as pairs, a list of strings as an array of
// strings, anything else as its canonical text.
func writeVar(w *sim.StateWriter, name string, v starlark.Value) {
	switch v := v.(type) {
	case starlark.String:
		w.Str(name, string(v))
		return
	case starlark.Bool:
		w.Bool(name, bool(v))
		return
	case starlark.Int:
		if n, ok := v.Int64(); ok && n >= math.MinInt && n <= math.MaxInt {
			w.Int(name, int(n))
			return
		}
	case starlark.Indexable:
		if ints, ok := intsOf(v, math.MaxInt); ok {
			w.Ints(name, ints)
			return
		}
		if pairs, ok := pairsOf(v); ok {
			w.Pairs(name, pairs)
			return
		}
		if strs, ok := stringsIn(v); ok {
			w.Strs(name, strs)
			return
		}
	}
	if textSize(v, maxShown+1) > maxShown {
		w.Str(name, fmt.Sprintf("(a %s too large to show)", v.Type()))
		return
	}
	var b strings.Builder
	canonical(&b, v)
	w.Str(name, b.String())
}

// maxShown bounds the text of one inspector variable: encode may return a value
// that is small in memory and huge as text (x = [x, x], again and again).
const maxShown = 1 << 20

// canonical writes a value's text; dicts in insertion order, which clones keep.
func canonical(b *strings.Builder, v starlark.Value) {
	switch v := v.(type) {
	case *starlark.Dict:
		b.WriteByte('{')
		for k, kv := range v.Items() {
			if k > 0 {
				b.WriteString(", ")
			}
			canonical(b, kv[0])
			b.WriteString(": ")
			canonical(b, kv[1])
		}
		b.WriteByte('}')
	default:
		b.WriteString(v.String())
	}
}

// intsOf reads a list or tuple of ints (at most limit).
func intsOf(v starlark.Value, limit int) ([]int, bool) {
	it, ok := v.(starlark.Indexable)
	if !ok || it.Len() > limit {
		return nil, false
	}
	if _, isStr := v.(starlark.String); isStr {
		return nil, false
	}
	out := make([]int, it.Len())
	for k := range out {
		if starlark.AsInt(it.Index(k), &out[k]) != nil {
			return nil, false
		}
	}
	return out, true
}

func pairsOf(v starlark.Indexable) ([][2]int, bool) {
	if v.Len() == 0 {
		return nil, false
	}
	out := make([][2]int, v.Len())
	for k := range out {
		p, ok := intsOf(v.Index(k), 2)
		if !ok || len(p) != 2 {
			return nil, false
		}
		out[k] = [2]int{p[0], p[1]}
	}
	return out, true
}

// msgValue is a delivered message: m.type, m.sender (the sender's index), m.ts, m.arg,
// m.vec and m.queue (tuples of ints).
type msgValue struct{ m *sim.Message }

var msgFields = []string{"type", "sender", "ts", "arg", "vec", "queue"}

func (m *msgValue) String() string        { return "message(" + m.m.Type + ")" }
func (m *msgValue) Type() string          { return "message" }
func (m *msgValue) Freeze()               {}
func (m *msgValue) Truth() starlark.Bool  { return true }
func (m *msgValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: message") }
func (m *msgValue) AttrNames() []string   { return msgFields }
func (m *msgValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "type":
		return starlark.String(m.m.Type), nil
	case "sender":
		return starlark.MakeInt(m.m.From), nil
	case "ts":
		return starlark.MakeInt(m.m.TS), nil
	case "arg":
		return starlark.MakeInt(m.m.Arg), nil
	case "vec":
		return intTuple(m.m.Vec), nil
	case "queue":
		return intTuple(m.m.Queue), nil
	}
	return nil, fmt.Errorf("a message has no field %q (fields: %v)", name, msgFields)
}

func intTuple(v []int) starlark.Tuple {
	t := make(starlark.Tuple, len(v))
	for k, x := range v {
		t[k] = starlark.MakeInt(x)
	}
	return t
}

// footprint estimates the bytes a value holds, for sim.Footprinter: a word pair per
// value, string bytes, and a header per container.
func footprint(v starlark.Value) int {
	switch v := v.(type) {
	case starlark.String:
		return 16 + len(v)
	case *starlark.List:
		b := 48
		for k := 0; k < v.Len(); k++ {
			b += footprint(v.Index(k))
		}
		return b
	case starlark.Tuple:
		b := 24
		for _, e := range v {
			b += footprint(e)
		}
		return b
	case *starlark.Dict:
		b := 96
		for _, kv := range v.Items() {
			b += 32 + footprint(kv[0]) + footprint(kv[1])
		}
		return b
	}
	return 16
}

// stringsIn reads a non-empty list or tuple of strings.
func stringsIn(v starlark.Indexable) ([]string, bool) {
	if v.Len() == 0 {
		return nil, false
	}
	out := make([]string, v.Len())
	for k := range out {
		str, ok := v.Index(k).(starlark.String)
		if !ok {
			return nil, false
		}
		out[k] = string(str)
	}
	return out, true
}
