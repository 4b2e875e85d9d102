package starlarkalg

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// node is one process of a Starlark algorithm: its state and the program it runs.
type node struct {
	p     *program
	self  int
	setup *sim.Setup
	st    *state
	err   error          // init failed: every step reports it
	pv    starlark.Value // the run's params as ctx.params

	// run is what a step needs besides the state, made on the first step and reused:
	// never shared with a clone, which may be stepped on another goroutine.
	run *runner
}

// runner is a node's interpreter thread and the values a handler receives, reused from
// step to step so that a step allocates no more than the script itself does. A script
// cannot keep ctx or m beyond its step (globals are frozen, the state holds only data).
type runner struct {
	thread *starlark.Thread
	ctx    stepCtx
	msg    msgValue
	args   [3]starlark.Value
	grow   *growBudget // the thread's memory budget (grow.go)
}

func (n *node) runner() *runner {
	if n.run == nil {
		r := &runner{thread: n.p.thread()}
		r.grow, _ = r.thread.Local(growKey).(*growBudget) // put there by thread()
		r.ctx.n = n
		r.ctx.bind()
		n.run = r
	}
	r := n.run
	r.grow.restart(r.thread) // the bounds are per call
	r.ctx.depth = 0          // call sites left by an error (sites.go)
	r.thread.Uncancel()
	return r
}

// tokenNode is a node of a source that defines holds_token, so the view marks the
// holder as it does for the Go token algorithms (sim.TokenHolder).
type tokenNode struct{ *node }

func (p *program) newNode(self int, setup *sim.Setup) sim.Node {
	n := &node{p: p, self: self, setup: setup}
	n.pv = n.paramsOf()
	n.st, n.err = n.initState()
	if p.token != nil {
		return tokenNode{n}
	}
	return n
}

// setupValue is what init(setup) reads.
func (n *node) setupValue() *record {
	ids := make([]starlark.Value, len(n.setup.IDs))
	for k, id := range n.setup.IDs {
		ids[k] = starlark.MakeInt(id)
	}
	return &record{kind: "setup", names: []string{"self", "n", "ids", "params", "max_delay"}, vals: []starlark.Value{
		starlark.MakeInt(n.self), starlark.MakeInt(len(n.setup.IDs)), starlark.Tuple(ids),
		n.pv, starlark.MakeInt(n.setup.MaxDelay)}}
}

// paramsOf are the run's params as the script reads them: what the Spec's ParseParams
// returned; a setup built by hand without them (a test) gets the declared defaults.
func (n *node) paramsOf() starlark.Value {
	if pv, ok := n.setup.Params.(*paramsValue); ok {
		return pv
	}
	v, err := n.p.params.parse(nil, n.setup.IDs)
	if err != nil {
		return starlark.None
	}
	return v.(*paramsValue)
}

func (n *node) initState() (*state, error) {
	thread := n.p.thread()
	v, err := starlark.Call(thread, n.p.init, starlark.Tuple{n.setupValue()}, nil)
	if err != nil {
		return nil, n.p.callError(err, "init", n.setup.IDs[n.self], "")
	}
	dict, ok := v.(*starlark.Dict)
	if !ok {
		return nil, &Error{Algorithm: n.p.name, Handler: "init", Node: n.setup.IDs[n.self], Msg: fmt.Sprintf("returned %s, want a dict of the process's variables", v.Type())}
	}
	st, err := newState(dict)
	if err == nil {
		err = n.p.check(st)
	}
	if err != nil {
		return nil, &Error{Algorithm: n.p.name, Handler: "init", Node: n.setup.IDs[n.self], Msg: err.Error()}
	}
	return st, nil
}

func (p *program) thread() *starlark.Thread {
	t := &starlark.Thread{Name: p.name, Print: func(*starlark.Thread, string) {}}
	newBudget(t, p.limits, p.limits.Steps, "the handler")
	return t
}

// callError words an error from a handler: which handler, which node, the last rule,
// the line.
func (p *program) callError(err error, handler string, id int, rule string) *Error {
	e := &Error{Algorithm: p.name, Handler: handler, Node: id, Rule: rule, Msg: demangle(err.Error())}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		e.Line, e.Col = innermost(ee)
		e.Msg = stepsMessage(demangle(ee.Msg), p.limits.Steps, "the handler")
	}
	return e
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	if n.err != nil {
		ctx.Fail(n.err)
		return
	}
	r := n.runner()
	name, fn, argc := n.handler(r, in)
	if fn == nil {
		return
	}
	c := &r.ctx
	c.ctx, c.view, c.lastRule, c.effects = ctx, false, "", 0
	r.args[0], r.args[1] = c, n.st
	_, err := starlark.Call(r.thread, fn, starlark.Tuple(r.args[:argc]), nil)
	c.ctx = nil
	clear(r.args[:])
	r.msg.m = nil
	if err == nil {
		err = n.p.check(n.st)
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = n.p.callError(err, name, ctx.SelfID(), c.lastRule)
		}
		ctx.Fail(e)
	}
}

// handler picks the function for an input, puts its third argument in r.args[2] and
// says how many arguments it takes.
func (n *node) handler(r *runner, in *sim.Input) (string, starlark.Callable, int) {
	switch in.Kind {
	case sim.Deliver:
		r.msg.m = &in.Msg
		r.args[2] = &r.msg
		if h, ok := n.p.byType[in.Msg.Type]; ok && h.fn != nil {
			return h.name, h.fn, 3
		}
		return "on_message", n.p.onMessage, 3
	case sim.Timer:
		r.args[2] = starlark.String(in.Timer)
		return "on_timer", n.p.handlers[sim.Timer], 3
	}
	if int(in.Kind) >= len(inputHandlers) {
		return "", nil, 0
	}
	return inputHandlers[in.Kind], n.p.handlers[in.Kind], 2
}

func (n *node) Clone() sim.Node {
	c := *n
	c.run = nil
	if n.st != nil {
		c.st = n.st.clone()
	}
	if n.p.token != nil {
		return tokenNode{&c}
	}
	return &c
}

// Encode writes encode(ctx, s)'s pairs, or else every state variable: the declared
// vars first in their order, then the others by name. An error is written as the
// variable "error", so the inspector shows it and no two broken states look alike.
func (n *node) Encode(w *sim.StateWriter) {
	if n.st == nil {
		w.Str("error", n.err.Error())
		return
	}
	if n.p.encode == nil {
		for _, k := range n.st.order(n.p.varOrder) {
			writeVar(w, n.st.names[k], n.st.vals[k])
		}
		return
	}
	r := n.runner()
	c := &r.ctx
	c.view = true
	v, err := starlark.Call(r.thread, n.p.encode, starlark.Tuple{c, n.st}, nil)
	if err != nil {
		w.Str("error", n.p.callError(err, "encode", n.setup.IDs[n.self], "").Error())
		return
	}
	list, ok := v.(starlark.Indexable)
	if !ok {
		w.Str("error", "encode returned "+v.Type()+", want a list of (name, value) pairs")
		return
	}
	for k := 0; k < list.Len(); k++ {
		pair, ok := list.Index(k).(starlark.Tuple)
		if !ok || len(pair) != 2 {
			w.Str("error", fmt.Sprintf("encode: item %d is not a (name, value) pair", k))
			return
		}
		name, ok := starlark.AsString(pair[0])
		if !ok {
			w.Str("error", fmt.Sprintf("encode: item %d's name is not a string", k))
			return
		}
		writeVar(w, name, pair[1])
	}
}

// WaitingFor is waiting_for(ctx, s): the node indexes this process waits for.
func (n *node) WaitingFor() []int {
	if n.p.waiting == nil || n.st == nil {
		return nil
	}
	r := n.runner()
	c := &r.ctx
	c.view = true
	v, err := starlark.Call(r.thread, n.p.waiting, starlark.Tuple{c, n.st}, nil)
	if err != nil {
		return nil
	}
	out, ok := intsOf(v, len(n.setup.IDs))
	if !ok {
		return nil
	}
	for _, j := range out {
		if j < 0 || j >= len(n.setup.IDs) {
			return nil
		}
	}
	return out
}

// HoldsToken is holds_token(s).
func (t tokenNode) HoldsToken() bool {
	if t.st == nil {
		return false
	}
	v, err := starlark.Call(t.runner().thread, t.p.token, starlark.Tuple{t.st}, nil)
	return err == nil && v.Truth() == starlark.True
}

// Footprint is sim.Footprinter: a session budgets the clones it keeps by it, and a
// script's state may hold thousands of values.
func (n *node) Footprint() int {
	if n.st == nil {
		return 0
	}
	b := 64 + 16*len(n.st.vals)
	for _, v := range n.st.vals {
		b += footprint(v)
	}
	return b
}
