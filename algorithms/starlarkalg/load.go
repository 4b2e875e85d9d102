// Package starlarkalg runs algorithms written in Starlark (go.starlark.net, a
// deterministic, hermetic dialect of Python) as ordinary algorithms: Load turns a source
// into a sim.Spec whose nodes are sim.Nodes, so the kernel, sessions, monitors and the
// explorer run them unchanged. docs/authoring.md is the API a source is written in.
//
// A source declares what a Go algorithm declares on its Spec (rules with labels and
// pseudocode, messages, inspector variables, params, defaults) and gives handlers: a
// function per input (on_start, on_request, on_message ...) that reads and changes the
// process's state and acts through ctx, the script's view of sim.Context.
//
// Scripts are student code run on the server, so everything is bounded: no load, no
// I/O, no clock, no randomness (Starlark has none and nothing is predeclared that
// would give them); a handler does at most Limits.Steps units of work, its Starlark
// steps and what the builtins it calls visit together, and builds at most Limits.Grow
// elements or bytes (charges.go); state and messages are checked for their size
// after every step. A bound hit or an error in a handler is an *Error naming the
// handler, the last rule fired and the line, recorded with sim.Context.Fail: the run
// stops with it, the server goes on.
//
// Purity: this package starts no goroutine and imports no clock, randomness or I/O
// (algorithms/purity_test.go reads it as it reads every algorithm); go.starlark.net,
// its one outside import (internal/importrules), uses sync/atomic for thread
// cancellation and reads no clock on the paths a script can reach. A caller that
// keeps time stops a handler through Limits.Interrupt (interrupt.go).
package starlarkalg

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/teach-dist/playground/runtime/sim"
)

// Limits bound what one script may do.
type Limits struct {
	Source      int    // bytes of source
	LoadSteps   uint64 // units of work to load (steps and builtins' work, charges.go)
	Steps       uint64 // units of work per handler call
	StateValues int    // values in one process's state, counting every element of a container
	StringBytes int    // bytes of one string in state or a message
	MessageInts int    // ints in a message's vec or queue
	Effects     int    // effects (rules, sends, timers ...) of one step
	Grow        int    // elements or bytes one handler call may build (grow.go, charges.go)

	// AsWritten loads the source without the rewrites that only save time (inline.go,
	// kwcall.go, sites.go; the memory and work bounds' rewrites stay): for the
	// benchmark that measures what they save, and tests that compare both.
	AsWritten bool

	// Interrupt, when set, is asked every interruptEvery units of work whether to stop
	// the running call (interrupt.go). It is how a caller that times handlers stops one.
	Interrupt func() bool
}

// DefaultLimits are generous for the templates (the largest handler of the four runs
// in a few hundred steps) and small enough that a runaway loop costs milliseconds.
var DefaultLimits = Limits{
	Source:      64 << 10,
	LoadSteps:   200_000,
	Steps:       100_000,
	StateValues: 4096,
	StringBytes: 4096,
	MessageInts: 1024,
	Effects:     4096,
	Grow:        1 << 20,
}

// Error is what goes wrong in a script: at load, or in a handler during a run. Line
// and Col locate it in the source (0 when it has no place, e.g. a missing handler);
// the editor shows it there.
type Error struct {
	Algorithm string // the name given to Load
	Handler   string // the handler that ran ("on_request"); "" at load
	Node      int    // the node's id, when Handler is set
	Rule      string // the last rule the step fired before the error ("" if none)
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Algorithm)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if e.Handler != "" {
		fmt.Fprintf(&b, ": P%d %s", e.Node, e.Handler)
		if e.Rule != "" {
			fmt.Fprintf(&b, " (after rule %s)", e.Rule)
		} else {
			b.WriteString(" (before any rule)")
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// fileOptions: while loops are allowed (the step bound stops them), recursion is not
// (it would grow the Go stack before the step bound is reached); no
// global reassignment, so a module reads like a declaration.
var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true}

// handler names, by input kind; a message type T is handled by on_T, else on_message.
var inputHandlers = [...]string{
	sim.Init:    "on_start",
	sim.Recover: "on_recover",
	sim.Request: "on_request",
	sim.Release: "on_release",
	sim.Elect:   "on_elect",
	sim.Timer:   "on_timer",
}

// typeHandler is the handler of one message type, and its name for errors.
type typeHandler struct {
	name string
	fn   starlark.Callable
}

// program is a loaded source: the Spec's declarations and the callables its nodes use.
type program struct {
	costs    []CostTable // declared costs, evaluated (own.go)
	name     string
	limits   Limits
	rules    map[string]bool
	messages map[string]bool
	params   *paramSet

	init      starlark.Callable
	handlers  [len(inputHandlers)]starlark.Callable // by input kind; nil: none
	byType    map[string]typeHandler
	onMessage starlark.Callable
	encode    starlark.Callable
	waiting   starlark.Callable
	token     starlark.Callable
	varOrder  map[string]int // inspector variables' declared order, for the default encoding
}

// Load compiles source (named name in errors) with the default limits.
func Load(name, source string) (*sim.Spec, error) {
	return LoadLimits(name, source, DefaultLimits)
}

// LoadLimits compiles source under lim and returns its Spec; the Spec's slug is name.
// Errors are *Error, with the line of a syntax error.
func LoadLimits(name, source string, lim Limits) (*sim.Spec, error) {
	_, spec, err := loadProgram(name, source, lim)
	return spec, err
}

// loadProgram is LoadLimits, with the program its Spec's nodes run.
func loadProgram(name, source string, lim Limits) (*program, *sim.Spec, error) {
	fail := func(line, col int, format string, args ...any) error {
		return &Error{Algorithm: name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	if len(source) > lim.Source {
		return nil, nil, fail(0, 0, "the source is %d bytes, more than the %d allowed", len(source), lim.Source)
	}
	thread := &starlark.Thread{Name: name, Print: func(*starlark.Thread, string) {}}
	newBudget(thread, lim, lim.LoadSteps, "the top level")
	globals, err := compile(thread, name, source, lim.AsWritten)
	if err != nil {
		return nil, nil, sourceError(name, err, lim)
	}
	p := &program{name: name, limits: lim, rules: map[string]bool{}, messages: map[string]bool{},
		byType: map[string]typeHandler{}}
	spec, err := p.buildSpec(globals)
	if err == nil {
		err = p.ownDeclarations(thread, globals, spec)
	}
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			return nil, nil, fail(int(pe.pos.Line), int(pe.pos.Col), "%s", pe.msg)
		}
		return nil, nil, fail(0, 0, "%v", err)
	}
	return p, spec, nil
}

// compile parses source, puts the checking builtins in place of the operations that
// grow values (grow.go), compiles and runs it, and freezes its globals.
func compile(thread *starlark.Thread, name, source string, asWritten bool) (starlark.StringDict, error) {
	f, err := fileOptions.Parse(name+".star", source, 0)
	if err != nil {
		return nil, err
	}
	predeclared := declarations
	if !asWritten {
		inlineHelpers(f)
		placeLoopHeads(f)
		predeclared = maps.Clone(declarations)
		predeclared[trueName] = starlark.True
		if sites := rewriteSites(f); len(sites) > 0 { // sites.go
			stmt, vals := siteGlobals(sites)
			f.Stmts = append([]syntax.Stmt{stmt}, f.Stmts...)
			predeclared[sitesName] = vals
		}
	}
	if err := rewriteGrowth(f, asWritten); err != nil {
		return nil, err
	}
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	g, err := prog.Init(thread, predeclared)
	g.Freeze()
	return g, err
}

// posError is a declaration's error at its place in the source.
type posError struct {
	pos syntax.Position
	msg string
}

func (e *posError) Error() string { return e.msg }

// sourceError turns a Starlark load error into an *Error at its line.
func sourceError(name string, err error, lim Limits) error {
	e := &Error{Algorithm: name, Msg: demangle(err.Error())}
	var se syntax.Error
	var re resolve.ErrorList
	var ee *starlark.EvalError
	switch {
	case errors.As(err, &se):
		e.Line, e.Col, e.Msg = int(se.Pos.Line), int(se.Pos.Col), demangle(se.Msg)
	case errors.As(err, &re) && len(re) > 0:
		e.Line, e.Col, e.Msg = int(re[0].Pos.Line), int(re[0].Pos.Col), demangle(re[0].Msg)
	case errors.As(err, &ee):
		e.Line, e.Col = innermost(ee)
		e.Msg = stepsMessage(demangle(ee.Msg), lim.LoadSteps, "the top level")
	}
	return e
}

// innermost is the position of the deepest Starlark frame of an evaluation error.
func innermost(ee *starlark.EvalError) (line, col int) {
	for k := len(ee.CallStack) - 1; k >= 0; k-- {
		if pos := ee.CallStack[k].Pos; pos.Line > 0 {
			return int(pos.Line), int(pos.Col)
		}
	}
	return 0, 0
}

func (p *program) buildSpec(g starlark.StringDict) (*sim.Spec, error) {
	s := &sim.Spec{Slug: p.name, New: p.newNode}
	var err error
	get := func(key string, dst *string, required bool) {
		if err != nil {
			return
		}
		*dst, err = optString(g, key, required)
	}
	var family string
	get("title", &s.Title, true)
	get("summary", &s.Summary, false)
	get("family", &family, true)
	if err != nil {
		return nil, err
	}
	switch sim.Family(family) {
	case sim.Mutex, sim.Election:
		s.Family = sim.Family(family)
	default:
		return nil, fmt.Errorf("family: %q is unknown (allowed: \"mutex\", \"election\")", family)
	}
	if s.Rules, err = listOf(g, "rules", "rule", toRule); err != nil {
		return nil, err
	}
	if s.Messages, err = listOf(g, "messages", "message", toMessage); err != nil {
		return nil, err
	}
	if s.Vars, err = listOf(g, "vars", "var", toVar); err != nil {
		return nil, err
	}
	if len(s.Rules) == 0 || len(s.Messages) == 0 {
		return nil, errors.New("rules and messages: a source declares at least one rule and one message")
	}
	for _, r := range s.Rules {
		if p.rules[r.Label] {
			return nil, fmt.Errorf("rules: %s is declared twice", r.Label)
		}
		p.rules[r.Label] = true
	}
	for _, m := range s.Messages {
		if p.messages[m.Name] || m.Name == sim.AppMessage {
			return nil, fmt.Errorf("messages: %s is declared twice or reserved", m.Name)
		}
		p.messages[m.Name] = true
	}
	p.varOrder = map[string]int{}
	for k, v := range s.Vars {
		p.varOrder[v.Name] = k
	}
	if p.params, err = newParamSet(g); err != nil {
		return nil, err
	}
	s.Params = p.params.fields
	if len(s.Params) > 0 {
		s.ParseParams = p.params.parse
	}
	if s.Defaults, err = toDefaults(g); err != nil {
		return nil, err
	}
	if s.Stage, err = toStage(g); err != nil {
		return nil, err
	}
	if s.BackgroundTimers, err = stringList(g, "background_timers"); err != nil {
		return nil, err
	}
	if s.BackgroundMessages, err = stringList(g, "background_messages"); err != nil {
		return nil, err
	}
	if v, ok := g["crash_leader_first"]; ok {
		b, isBool := v.(starlark.Bool)
		if !isBool {
			return nil, fmt.Errorf("crash_leader_first: got %s, want True or False", v.Type())
		}
		s.CrashLeaderFirst = bool(b)
	}
	return s, p.bindHandlers(g)
}

// bindHandlers finds init and the handlers among the globals.
func (p *program) bindHandlers(g starlark.StringDict) error {
	fn := func(name string, arity int) (starlark.Callable, error) {
		f, err := optional[*starlark.Function](g, name, "a function")
		if f == nil {
			return nil, err // nil, not a nil *Function in a Callable
		}
		if f.NumParams() != arity || f.HasVarargs() || f.HasKwargs() {
			return nil, &posError{pos: f.Position(), msg: fmt.Sprintf("%s: takes %d parameters, want %d", name, f.NumParams(), arity)}
		}
		return f, nil
	}
	var err error
	if p.init, err = fn("init", 1); err != nil {
		return err
	}
	if p.init == nil {
		return errors.New("init: missing: def init(setup) returns a process's first state, a dict")
	}
	for kind, name := range inputHandlers {
		if name == "" {
			continue // Deliver: by message type
		}
		arity := 2
		if sim.InputKind(kind) == sim.Timer {
			arity = 3
		}
		if p.handlers[kind], err = fn(name, arity); err != nil {
			return err
		}
	}
	if p.onMessage, err = fn("on_message", 3); err != nil {
		return err
	}
	for _, name := range sortedKeys(p.messages) {
		h := typeHandler{name: "on_" + name}
		if h.fn, err = fn(h.name, 3); err != nil {
			return err
		}
		p.byType[name] = h
	}
	if p.encode, err = fn("encode", 2); err != nil {
		return err
	}
	if p.waiting, err = fn("waiting_for", 2); err != nil {
		return err
	}
	p.token, err = fn("holds_token", 1)
	return err
}

func optString(g starlark.StringDict, key string, required bool) (string, error) {
	v, ok := g[key]
	if !ok {
		if required {
			return "", fmt.Errorf("%s: missing", key)
		}
		return "", nil
	}
	s, ok := starlark.AsString(v)
	if !ok {
		return "", fmt.Errorf("%s: got %s, want a string", key, v.Type())
	}
	return s, nil
}

func stringList(g starlark.StringDict, key string) ([]string, error) {
	v, ok := g[key]
	if !ok {
		return nil, nil
	}
	return stringsOf(key, v)
}

func stringsOf(key string, v starlark.Value) ([]string, error) {
	it, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a list of strings", key, v.Type())
	}
	out := make([]string, it.Len())
	for k := range out {
		s, ok := starlark.AsString(it.Index(k))
		if !ok {
			return nil, fmt.Errorf("%s[%d]: got %s, want a string", key, k, it.Index(k).Type())
		}
		out[k] = s
	}
	return out, nil
}

// listOf reads a global list of declarations made with the builtin kind.
func listOf[T any](g starlark.StringDict, key, kind string, conv func(*decl) (T, error)) ([]T, error) {
	v, ok := g[key]
	if !ok {
		return nil, nil
	}
	it, ok := v.(starlark.Indexable)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a list of %s(...)", key, v.Type(), kind)
	}
	out := make([]T, 0, it.Len())
	for k := 0; k < it.Len(); k++ {
		d, ok := it.Index(k).(*decl)
		if !ok || d.kind != kind {
			got := it.Index(k).Type()
			if textSize(it.Index(k), 200) < 200 {
				got = it.Index(k).String()
			}
			return nil, fmt.Errorf("%s[%d]: got %s, want %s(...)", key, k, got, kind)
		}
		t, err := conv(d)
		if err != nil {
			var pe *posError
			if errors.As(err, &pe) {
				return nil, &posError{pos: pe.pos, msg: fmt.Sprintf("%s[%d]: %s", key, k, pe.msg)}
			}
			return nil, &posError{pos: d.pos, msg: fmt.Sprintf("%s[%d]: %v", key, k, err)}
		}
		out = append(out, t)
	}
	return out, nil
}

// sortedKeys returns a map's keys in order, so that errors and encodings never depend
// on map iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ownDeclarations reads what a source written from scratch may declare besides the
// Spec's descriptive fields: its name, its costs (evaluated now, within the load's
// bound on units of work) and canonical-form hints (own.go).
func (p *program) ownDeclarations(thread *starlark.Thread, g starlark.StringDict, s *sim.Spec) error {
	var err error
	if s.Name, err = ownName(g); err != nil {
		return err
	}
	if p.costs, err = costTables(thread, g); err != nil {
		return err
	}
	for _, t := range p.costs {
		s.Costs = append(s.Costs, t.Cost())
	}
	canon, forget, err := canonHints(g)
	if err != nil {
		return err
	}
	if canon != nil && len(forget) > 0 {
		canon.Node = forgetNode(forget)
	}
	s.Canon = canon
	return nil
}
