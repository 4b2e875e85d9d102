package starlarkalg

// The declarations a source makes with the predeclared builtins rule, message, var and
// param, and the globals defaults and stage: each maps one to one onto the sim.Spec
// field of the same meaning, so a Starlark algorithm describes itself exactly as a Go
// one does and the pages need nothing per algorithm.

import (
	"fmt"
	"reflect"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// decl is the value a declaration builtin returns: its keyword arguments, checked.
type decl struct {
	kind string
	args map[string]starlark.Value
	pos  syntax.Position // where the source calls the builtin
}

func (d *decl) String() string        { return d.kind + "(...)" }
func (d *decl) Type() string          { return d.kind }
func (d *decl) Freeze()               {}
func (d *decl) Truth() starlark.Bool  { return true }
func (d *decl) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: %s", d.kind) }

// declKinds lists each builtin's parameters: positional ones first, in order.
var declKinds = map[string][]string{
	"rule":    {"label", "lines", "says", "group", "notes", "why", "differs"},
	"message": {"name", "label", "doc", "ts", "arg", "vec", "queue"},
	"var":     {"name", "doc"},
	"param":   {"name", "kind", "doc", "default", "min", "max", "zero", "choices", "fields"},
	"cost":    {"name", "formula", "value", "low", "high"},
}

// declarations are the only names a source gets besides Starlark's universe: no load,
// no print to anywhere, nothing that reaches outside.
var declarations = func() starlark.StringDict {
	d := starlark.StringDict{}
	for kind, names := range declKinds {
		d[kind] = starlark.NewBuiltin(kind, func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) > len(names) {
				return nil, fmt.Errorf("%s: takes at most %d positional arguments", kind, len(names))
			}
			out := &decl{kind: kind, args: map[string]starlark.Value{}, pos: thread.CallFrame(1).Pos}
			for k, a := range args {
				out.args[names[k]] = a
			}
			for _, kv := range kwargs {
				key := string(kv[0].(starlark.String))
				if !contains(names, key) {
					return nil, fmt.Errorf("%s: unknown argument %q (allowed: %v)", kind, key, names)
				}
				if _, twice := out.args[key]; twice {
					return nil, fmt.Errorf("%s: argument %q given twice", kind, key)
				}
				out.args[key] = kv[1]
			}
			return out, nil
		})
	}
	d["range"] = starlark.NewBuiltin("range", boundedRange)
	d["max"] = starlark.NewBuiltin("max", fastMinMax(starlark.Universe["max"], 1))
	d["min"] = starlark.NewBuiltin("min", fastMinMax(starlark.Universe["min"], -1))
	growBuiltins(d)
	return d
}()

// fastMinMax is Starlark's max (sign 1) or min (-1) with a shortcut for two small ints,
// what algorithms compute most (clock := max(clock, ts) + 1): the general builtin
// costs several allocations a call, this none. Anything else goes to the builtin,
// charged first (charges.go).
func fastMinMax(general starlark.Value, sign int) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) == 2 && len(kwargs) == 0 {
			x, xok := args[0].(starlark.Int)
			y, yok := args[1].(starlark.Int)
			if xok && yok {
				if c, _ := x.Cmp(y, 1); c*sign >= 0 {
					return x, nil // the first of equals, as the builtin
				}
				return y, nil
			}
		}
		if err := chargeCall(thread, compares, b.Name()+"()", nil, args, kwargs); err != nil {
			return nil, err
		}
		return starlark.Call(thread, general, args, kwargs)
	}
}

// MaxRange is the most elements a range may have. A range is lazy, but list(range(n)),
// sorted(range(n)) and the like build it in one step, which the step bound cannot
// stop; no algorithm over at most sim.MaxNodes processes needs more.
const MaxRange = 1 << 16

// boundedRange is Starlark's range, refusing more than MaxRange elements.
func boundedRange(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := starlark.Call(thread, starlark.Universe["range"], args, kwargs)
	if err != nil {
		return nil, err
	}
	if n := v.(starlark.Sequence).Len(); n > MaxRange {
		return nil, fmt.Errorf("range: %d elements, more than the %d allowed", n, MaxRange)
	}
	return v, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decl) str(key string, required bool) (string, error) {
	return optString(d.args, key, required)
}

func (d *decl) integer(key string) (int, error) {
	v, ok := d.args[key]
	if !ok {
		return 0, nil
	}
	var n int
	if err := starlark.AsInt(v, &n); err != nil {
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	return n, nil
}

// strs reads string arguments into dst, stopping at the first error.
func (d *decl) strs(required []string, optional []string, dst ...*string) error {
	k := 0
	for _, key := range required {
		s, err := d.str(key, true)
		if err != nil {
			return err
		}
		*dst[k] = s
		k++
	}
	for _, key := range optional {
		s, err := d.str(key, false)
		if err != nil {
			return err
		}
		*dst[k] = s
		k++
	}
	return nil
}

func toRule(d *decl) (sim.Rule, error) {
	var r sim.Rule
	if err := d.strs([]string{"label", "says"}, []string{"group", "notes", "differs"}, &r.Label, &r.Says, &r.Group, &r.Notes, &r.Differs); err != nil {
		return r, err
	}
	lines, ok := d.args["lines"]
	if !ok {
		return r, fmt.Errorf("lines: missing (the rule's pseudocode, a list of strings)")
	}
	var err error
	if r.Lines, err = stringsOf("lines", lines); err != nil {
		return r, err
	}
	if len(r.Lines) == 0 {
		return r, fmt.Errorf("lines: rule %s has no pseudocode", r.Label)
	}
	if why, ok := d.args["why"]; ok {
		dict, ok := why.(*starlark.Dict)
		if !ok {
			return r, fmt.Errorf("why: got %s, want a dict of case -> sentence", why.Type())
		}
		r.Why = map[string]string{}
		for _, kv := range dict.Items() {
			k, ok1 := starlark.AsString(kv[0])
			v, ok2 := starlark.AsString(kv[1])
			if !ok1 || !ok2 {
				return r, fmt.Errorf("why: keys and values must be strings")
			}
			r.Why[k] = v
		}
	}
	return r, nil
}

func toMessage(d *decl) (sim.MessageType, error) {
	var m sim.MessageType
	err := d.strs([]string{"name", "label"}, []string{"doc", "ts", "arg", "vec", "queue"},
		&m.Name, &m.Label, &m.Doc, &m.TS, &m.Arg, &m.Vec, &m.Queue)
	if err == nil && (m.Name == "" || len(m.Label) > 5) {
		err = fmt.Errorf("message %q: a name, and a label of at most 5 characters (got %q)", m.Name, m.Label)
	}
	return m, err
}

func toVar(d *decl) (sim.Var, error) {
	var v sim.Var
	err := d.strs([]string{"name"}, []string{"doc"}, &v.Name, &v.Doc)
	return v, err
}

func toParam(d *decl) (sim.Param, error) {
	var p sim.Param
	var kind string
	if err := d.strs([]string{"name", "kind"}, []string{"doc", "default", "zero"}, &p.Name, &kind, &p.Doc, &p.Default, &p.Zero); err != nil {
		return p, err
	}
	p.Kind = sim.ParamKind(kind)
	var err error
	if p.Min, err = d.integer("min"); err != nil {
		return p, err
	}
	if p.Max, err = d.integer("max"); err != nil {
		return p, err
	}
	if c, ok := d.args["choices"]; ok {
		if p.Choices, err = stringsOf("choices", c); err != nil {
			return p, err
		}
	}
	switch p.Kind {
	case sim.ParamInt, sim.ParamBool, sim.ParamChoice, sim.ParamNode:
	case sim.ParamObject:
		fields, ok := d.args["fields"]
		if !ok {
			// An object of a shape of its own (voting sets, a tree): the source reads
			// it as data (jsonData) and its doc says the shape.
			return p, nil
		}
		if p.Fields, err = listOf(starlark.StringDict{"fields": fields}, "fields", "param", toParam); err != nil {
			return p, err
		}
		for _, f := range p.Fields {
			if f.Kind == sim.ParamObject && len(f.Fields) == 0 {
				return p, fmt.Errorf("param %s.%s: an object of its own shape may only be a top-level param", p.Name, f.Name)
			}
		}
	default:
		return p, fmt.Errorf("param %s: kind %q is unknown (allowed: int, bool, choice, node, object)", p.Name, kind)
	}
	return p, nil
}

// paramSet is a source's params: their declarations, and the Go struct type built from
// them that algorithms/params decodes into, so a script's params are checked with the
// same rules and worded with the same errors as a Go algorithm's.
type paramSet struct {
	fields []sim.Param
	typ    reflect.Type
}

func newParamSet(g starlark.StringDict) (*paramSet, error) {
	fields, err := listOf(g, "params", "param", toParam)
	if err != nil {
		return nil, err
	}
	typ, err := structOf(fields)
	if err != nil {
		return nil, err
	}
	return &paramSet{fields: fields, typ: typ}, nil
}

// structOf builds a struct type with one exported field per param, tagged with its name.
func structOf(fields []sim.Param) (reflect.Type, error) {
	sf := make([]reflect.StructField, len(fields))
	seen := map[string]bool{}
	for k, f := range fields {
		if seen[f.Name] || f.Name == "" {
			return nil, fmt.Errorf("params: %q is empty or declared twice", f.Name)
		}
		seen[f.Name] = true
		var t reflect.Type
		switch f.Kind {
		case sim.ParamInt, sim.ParamNode:
			t = reflect.TypeFor[int]()
		case sim.ParamBool:
			t = reflect.TypeFor[bool]()
		case sim.ParamChoice:
			t = reflect.TypeFor[string]()
		case sim.ParamObject:
			if len(f.Fields) == 0 {
				t = reflect.TypeFor[[]byte]() // its JSON, nil when left out
				break
			}
			var err error
			if t, err = structOf(f.Fields); err != nil {
				return nil, err
			}
		}
		sf[k] = reflect.StructField{Name: "F" + strconv.Itoa(k), Type: t, Tag: reflect.StructTag(`param:"` + f.Name + `"`)}
	}
	return reflect.StructOf(sf), nil
}

// defaults fills dst with the declared defaults.
func setDefaults(fields []sim.Param, ids []int, dst reflect.Value) error {
	for k, f := range fields {
		v := dst.Field(k)
		switch f.Kind {
		case sim.ParamNode:
			v.SetInt(int64(params.DefaultID(f, ids)))
		case sim.ParamInt:
			if f.Default != "" {
				n, err := strconv.Atoi(f.Default)
				if err != nil {
					return fmt.Errorf("param %s: default %q is not an integer", f.Name, f.Default)
				}
				v.SetInt(int64(n))
			}
		case sim.ParamBool:
			v.SetBool(f.Default == "true")
		case sim.ParamChoice:
			s, err := strconv.Unquote(f.Default)
			if err != nil {
				s = f.Default
			}
			v.SetString(s)
		case sim.ParamObject:
			if err := setDefaults(f.Fields, ids, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// parse is the Spec's ParseParams: the defaults, then raw decoded over them, returned
// as the Starlark struct handlers read as ctx.params.
func (ps *paramSet) parse(raw []byte, ids []int) (any, error) {
	v := reflect.New(ps.typ).Elem()
	if err := setDefaults(ps.fields, ids, v); err != nil {
		return nil, err
	}
	hook := func(name string, raw []byte) (bool, error) {
		for k, f := range ps.fields {
			if f.Name == name && f.Kind == sim.ParamObject && len(f.Fields) == 0 {
				if _, err := jsonData(raw); err != nil {
					return true, fmt.Errorf("params.%s: %v", name, err)
				}
				v.Field(k).SetBytes(raw)
				return true, nil
			}
		}
		return false, nil
	}
	if err := params.ParseValueWith(raw, ids, ps.fields, v, hook); err != nil {
		return nil, err
	}
	return toStarlark(ps.fields, v), nil
}

// toStarlark turns decoded params into a frozen paramsValue.
func toStarlark(fields []sim.Param, v reflect.Value) *paramsValue {
	out := &paramsValue{record{kind: "params", names: make([]string, len(fields)), vals: make([]starlark.Value, len(fields))}}
	for k, f := range fields {
		out.names[k] = f.Name
		fv := v.Field(k)
		switch f.Kind {
		case sim.ParamInt, sim.ParamNode:
			out.vals[k] = starlark.MakeInt(int(fv.Int()))
		case sim.ParamBool:
			out.vals[k] = starlark.Bool(fv.Bool())
		case sim.ParamChoice:
			out.vals[k] = starlark.String(fv.String())
		case sim.ParamObject:
			if len(f.Fields) == 0 {
				out.vals[k] = starlark.None
				if raw := fv.Bytes(); raw != nil {
					out.vals[k], _ = jsonData(raw) // checked by parse
					out.vals[k].Freeze()
				}
				break
			}
			out.vals[k] = toStarlark(f.Fields, fv)
		}
	}
	return out
}

// paramsValue is ctx.params: read-only fields named as the params are (a type of its
// own, so that a run's params are told from any other record).
type paramsValue struct{ record }

// optional is the global name as a T (want says what that is), which a source may
// leave out: the zero T when it does, an error when it is something else.
func optional[T starlark.Value](g starlark.StringDict, name, want string) (T, error) {
	var zero T
	v, ok := g[name]
	if !ok {
		return zero, nil
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%s: got %s, want %s", name, v.Type(), want)
	}
	return t, nil
}

// toDefaults reads defaults = {"nodes": 5, "delay": (1, 3), "fifo": False, "cs": 2,
// "until": 500, "first_id": 0}; keys left out take those values.
func toDefaults(g starlark.StringDict) (sim.Defaults, error) {
	d := sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, CS: 2, Until: 500}
	dict, err := optional[*starlark.Dict](g, "defaults", "a dict")
	if dict == nil {
		return d, err
	}
	ints := map[string]*int{"nodes": &d.Nodes, "cs": &d.CS, "until": &d.Until, "first_id": &d.FirstID}
	for _, kv := range dict.Items() {
		key, _ := starlark.AsString(kv[0])
		field := "defaults." + key
		switch key {
		case "fifo":
			b, ok := kv[1].(starlark.Bool)
			if !ok {
				return d, fmt.Errorf("%s: got %s, want True or False", field, kv[1].Type())
			}
			d.FIFO = bool(b)
		case "delay":
			t, ok := kv[1].(starlark.Indexable)
			if !ok || t.Len() != 2 || starlark.AsInt(t.Index(0), &d.Delay[0]) != nil || starlark.AsInt(t.Index(1), &d.Delay[1]) != nil {
				return d, fmt.Errorf("%s: want (min, max), two integers", field)
			}
		default:
			dst, ok := ints[key]
			if !ok {
				return d, fmt.Errorf("%s: unknown (allowed: nodes, delay, fifo, cs, until, first_id)", field)
			}
			if err := starlark.AsInt(kv[1], dst); err != nil {
				return d, fmt.Errorf("%s: %v", field, err)
			}
		}
	}
	if d.Nodes < 2 || d.Nodes > sim.MaxNodes || d.Delay[0] < 0 || d.Delay[1] < d.Delay[0] || d.CS < 0 || d.Until <= 0 {
		return d, fmt.Errorf("defaults: %d nodes (2 to %d), delay [%d, %d], cs %d, until %d: out of range", d.Nodes, sim.MaxNodes, d.Delay[0], d.Delay[1], d.CS, d.Until)
	}
	return d, nil
}

// toStage reads stage = {"ring": True, "mark": "coordinator", ...}: sim.Stage's fields
// in snake case.
func toStage(g starlark.StringDict) (sim.Stage, error) {
	var s sim.Stage
	dict, err := optional[*starlark.Dict](g, "stage", "a dict")
	if dict == nil {
		return s, err
	}
	strs := map[string]*string{"mark": &s.Mark, "mark_label": &s.MarkLabel, "edges": &s.Edges,
		"edges_label": &s.EdgesLabel, "pointer": &s.Pointer, "pointer_label": &s.PointerLabel,
		"group": &s.Group, "group_label": &s.GroupLabel, "group_about": &s.GroupAbout}
	for _, kv := range dict.Items() {
		key, _ := starlark.AsString(kv[0])
		if key == "ring" {
			b, ok := kv[1].(starlark.Bool)
			if !ok {
				return s, fmt.Errorf("stage.ring: want True or False")
			}
			s.Ring = bool(b)
			continue
		}
		dst, ok := strs[key]
		if !ok {
			return s, fmt.Errorf("stage.%s: unknown (allowed: ring, %v)", key, sortedKeys(strs))
		}
		str, ok := starlark.AsString(kv[1])
		if !ok {
			return s, fmt.Errorf("stage.%s: want a string", key)
		}
		*dst = str
	}
	return s, nil
}
