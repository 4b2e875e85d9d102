package starlarkalg

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// Program is a loaded source driven one call at a time, with each process's state
// carried between calls as bytes (EncodeState's): the form a sandbox worker runs a
// source in, so that the process that owns a run keeps only plain data and never runs
// the source itself (runtime/sandbox). A call's result is what the kernel needs of a
// node until its next step: the new state, the inspector's variables, whom it waits
// for and whether it holds the token.
type Program struct {
	p    *program
	spec *sim.Spec
}

// LoadProgram compiles source as LoadLimits does.
func LoadProgram(name, source string, lim Limits) (*Program, error) {
	p, spec, err := loadProgram(name, source, lim)
	if err != nil {
		return nil, err
	}
	return &Program{p: p, spec: spec}, nil
}

// Spec is the program's Spec (its nodes run in this process: for the worker itself).
func (P *Program) Spec() *sim.Spec { return P.spec }

// HoldsToken reports whether the source defines holds_token (its nodes are
// sim.TokenHolders).
func (P *Program) HoldsToken() bool { return P.p.token != nil }

// Result is a node after a call: State is nil when Err is set.
type Result struct {
	State   []byte
	View    []byte       // the inspector's variables, sim.StateWriter's encoding
	Waiting []int        // waiting_for's answer (nil: none or no such function)
	Token   bool         // holds_token's answer
	Effects []sim.Effect // what the step did, in order (Step only)
	Err     *Error
}

// Init builds node self's first state, as a run's New does.
func (P *Program) Init(self int, setup *sim.Setup) Result {
	n := &node{p: P.p, self: self, setup: setup}
	n.pv = n.paramsOf()
	n.st, n.err = n.initState()
	return n.result(nil)
}

// Step delivers in to node self whose state is state; the effects go to ctx.
func (P *Program) Step(ctx *sim.Context, self int, setup *sim.Setup, state []byte, in *sim.Input) Result {
	st, err := DecodeState(state)
	if err != nil {
		return Result{Err: &Error{Algorithm: P.p.name, Handler: "(state)", Node: setup.IDs[self], Msg: err.Error()}}
	}
	n := &node{p: P.p, self: self, setup: setup, st: st}
	n.pv = n.paramsOf()
	n.Step(ctx, in)
	r := n.result(ctx.Err())
	if r.Err == nil {
		r.Effects = ctx.Effects()
	}
	return r
}

func (n *node) result(stepErr error) Result {
	if n.err != nil {
		return Result{Err: asError(n.err, n)}
	}
	if stepErr != nil {
		return Result{Err: asError(stepErr, n)}
	}
	var w sim.StateWriter
	n.Encode(&w)
	r := Result{State: EncodeState(n.st), View: w.Bytes(), Waiting: n.WaitingFor()}
	if n.p.token != nil {
		r.Token = tokenNode{n}.HoldsToken()
	}
	return r
}

func asError(err error, n *node) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Algorithm: n.p.name, Node: n.setup.IDs[n.self], Msg: err.Error()}
}

// ParamsParser is the ParseParams of a source whose params are declared as fields:
// it checks a scenario's params without the source (the fields are plain data).
func ParamsParser(fields []sim.Param) (func(raw []byte, ids []int) (any, error), error) {
	typ, err := structOf(fields)
	if err != nil {
		return nil, err
	}
	ps := &paramSet{fields: fields, typ: typ}
	return ps.parse, nil
}

// Value tags of the state encoding.
const (
	tagNone byte = iota
	tagFalse
	tagTrue
	tagInt
	tagString
	tagList
	tagTuple
	tagDict
)

// EncodeState writes a checked state (program.check: data only, ints of 64 bits) as
// bytes: its variables' names and values, dicts in insertion order, so equal states
// give equal bytes and DecodeState gives back a state that behaves alike.
func EncodeState(st *state) []byte {
	b := binary.AppendUvarint(nil, uint64(len(st.names)))
	for k, name := range st.names {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = appendValue(b, st.vals[k])
	}
	return b
}

func appendValue(b []byte, v starlark.Value) []byte {
	switch v := v.(type) {
	case starlark.NoneType:
		return append(b, tagNone)
	case starlark.Bool:
		if v {
			return append(b, tagTrue)
		}
		return append(b, tagFalse)
	case starlark.Int:
		n, _ := v.Int64() // checked: fits
		return binary.AppendVarint(append(b, tagInt), n)
	case starlark.String:
		b = binary.AppendUvarint(append(b, tagString), uint64(len(v)))
		return append(b, v...)
	case *starlark.List:
		b = binary.AppendUvarint(append(b, tagList), uint64(v.Len()))
		for k := 0; k < v.Len(); k++ {
			b = appendValue(b, v.Index(k))
		}
		return b
	case starlark.Tuple:
		b = binary.AppendUvarint(append(b, tagTuple), uint64(len(v)))
		for _, e := range v {
			b = appendValue(b, e)
		}
		return b
	case *starlark.Dict:
		b = binary.AppendUvarint(append(b, tagDict), uint64(v.Len()))
		for _, kv := range v.Items() {
			b = appendValue(appendValue(b, kv[0]), kv[1])
		}
		return b
	}
	panic(fmt.Sprintf("starlarkalg: %s in a checked state", v.Type())) // check allows no other
}

// stateReader reads EncodeState's bytes; every count is checked against what is left,
// so bytes that were not written by EncodeState fail instead of allocating.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *stateReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) { // every value takes at least a byte
		r.fail()
		return 0
	}
	return int(n)
}

func (r *stateReader) fail() {
	if r.err == nil {
		r.err = errors.New("the state's bytes are not a state")
	}
	r.b = nil
}

func (r *stateReader) str() string {
	n := r.count()
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *stateReader) value(depth int) starlark.Value {
	if len(r.b) == 0 || depth > 64 {
		r.fail()
		return starlark.None
	}
	tag := r.b[0]
	r.b = r.b[1:]
	switch tag {
	case tagNone:
		return starlark.None
	case tagFalse:
		return starlark.False
	case tagTrue:
		return starlark.True
	case tagInt:
		n, k := binary.Varint(r.b)
		if k <= 0 {
			r.fail()
			return starlark.None
		}
		r.b = r.b[k:]
		if n >= math.MinInt && n <= math.MaxInt {
			return starlark.MakeInt(int(n))
		}
		return starlark.MakeInt64(n)
	case tagString:
		return starlark.String(r.str())
	case tagList, tagTuple:
		n := r.count()
		elems := make([]starlark.Value, n)
		for k := range elems {
			elems[k] = r.value(depth + 1)
		}
		if tag == tagTuple {
			return starlark.Tuple(elems)
		}
		return starlark.NewList(elems)
	case tagDict:
		n := r.count()
		d := starlark.NewDict(n)
		for range n {
			k := r.value(depth + 1)
			if err := d.SetKey(k, r.value(depth+1)); err != nil {
				r.fail()
			}
		}
		return d
	}
	r.fail()
	return starlark.None
}

// DecodeState reads EncodeState's bytes.
func DecodeState(b []byte) (*state, error) {
	r := &stateReader{b: b}
	n := r.count()
	st := stateOf(make([]string, 0, n), make([]starlark.Value, 0, n))
	for range n {
		st.names = append(st.names, r.str())
		st.vals = append(st.vals, r.value(0))
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail()
	}
	if r.err != nil {
		return nil, r.err
	}
	return st, nil
}

// Costs are the source's declared costs, evaluated for every number of processes.
func (p *Program) Costs() []CostTable { return p.p.costs }
