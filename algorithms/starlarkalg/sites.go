package starlarkalg

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Call sites that pass their arguments without a tuple. The interpreter copies the
// positional arguments of every call of a builtin into a new slice (it trusts only
// its own functions not to keep them), and a handler calls builtins for nearly every
// line: ctx.rule("RH1", "held"), ctx.send(j, "REPLY", ts = s.clock), max(a, b),
// ctx.id(m.sender), s.deferred.append(j). Those copies were two thirds of what a
// Starlark Ricart-Agrawala allocated, and the garbage collector a third of its time.
//
// So in a top-level def whose first parameter is ctx (and that never binds ctx
// again), the loader rewrites such a call into indexing, which copies nothing, and a
// call without arguments, which is not copied:
//
//	ctx.send(j, "REQUEST", ts = s.ts)   becomes   $s3[ctx][j][s.ts]()
//	max(s.clock, m.ts)                  becomes   $s4[ctx][s.clock][m.ts]()
//	ctx.rule("RH1", "held")             becomes   $s5[ctx]()
//
// $s3 is the call site (the program's third): it knows the method or builtin, the
// keywords' names and the constant arguments. $s3[ctx] is an argument buffer for the
// call, taken from a stack of them that ctx keeps for the node's life, with the
// constants in place (and the receiver, when it is ctx itself); each further [v] puts
// the next of the other values in it (the receiver first, for a method); () makes the
// call with the buffer's values, lets go of them and gives the buffer back. A call of
// ctx's methods with constant arguments thus runs fewer instructions than as written.
// The arguments are evaluated once, in order, as before, and the call keeps its
// position, so an error is reported at the same line. Calls are evaluated one inside
// another, so their buffers are taken and given back last in, first out, and the
// stack is as deep as the calls nest (ctx.send(j, "X", ts = max(a, b)): two); a call
// interrupted by an error leaves its buffer taken, and the stack is emptied before
// every handler call. When the key is not a ctx (a helper called with something
// else), the buffer is a new one.
//
// What is rewritten: calls of ctx's methods that take arguments and of a list's
// append, by name (on anything else than ctx or a list the call is made as written,
// after the arguments are evaluated: only a failing call could tell, as for $kw in
// kwcall.go), and calls of the builtins in siteBuiltins when the source uses their
// name for nothing else. A call with *args or **kwargs, or with more than
// maxSiteArgs values, is left as it is.
const sitePrefix = "$s"

// maxSiteArgs bounds the values (receiver, arguments, keywords' values) a rewritten
// call passes, the size of its buffer.
const maxSiteArgs = 8

// maxSites bounds the call sites rewritten in one source (each is a global); the
// calls past it are left as written.
const maxSites = 2000

// siteMethods are the methods whose calls are rewritten: ctx's that take arguments,
// and append.
var siteMethods = map[string]bool{"id": true, "index": true, "up": true, "rule": true, "send": true,
	"set_timer": true, "cancel_timer": true, "leader": true, "append": true}

// siteBuiltins are the builtins whose calls are rewritten: they keep none of their
// arguments' slice. The call goes to the builtin the name stands for, so range keeps
// its bound and max its shortcut (decl.go).
var siteBuiltins = map[string]bool{"max": true, "min": true, "len": true, "abs": true, "range": true}

// site is one rewritten call: $sK.
type site struct {
	k      int
	method string         // the method's name; "" for a builtin
	fn     starlark.Value // the builtin
	keys   string         // the keywords' names, separated by spaces
	nkw    int
	ctxFn  func(c *stepCtx, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) // the ctx method's

	// The values the call passes (receiver, arguments, keywords' values), of which the
	// constants and a receiver that is the key itself (ctx.rule("RA1")) are in place
	// from the start: the indexing passes only the others.
	total     int
	tmpl      [maxSiteArgs]starlark.Value
	fixed     [maxSiteArgs]bool
	recvIsKey bool

	// For ctx.rule and ctx.send: where each value after the receiver goes among the
	// method's parameters, when the call's shape is right (planned is false when
	// unpackKeys would refuse it, and then it does, with its message).
	planned bool
	slot    [maxSiteArgs]int8
}

// plan works out, once, where ctx.rule's or ctx.send's arguments go, as unpackKeys
// would on every call: the shape of a call (how many positional arguments, which
// keywords) does not change from one call to the next.
func (s *site) plan(names []string, required int) {
	npos := s.total - 1 - s.nkw
	if npos > len(names) {
		return
	}
	var filled [maxSiteArgs]bool
	for k := range npos {
		s.slot[k], filled[k] = int8(k), true
	}
	keys := s.keys
	for k := range s.nkw {
		var key string
		key, keys, _ = strings.Cut(keys, " ")
		at := slices.Index(names, key)
		if at < 0 || filled[at] {
			return
		}
		s.slot[npos+k], filled[at] = int8(at), true
	}
	for k := range required {
		if !filled[k] {
			return
		}
	}
	s.planned = true
}

// place puts a planned call's values (after the receiver) where plan said.
func (s *site) place(vals []starlark.Value, out []starlark.Value) {
	for k, v := range vals {
		out[s.slot[k]] = v
	}
}

// fill starts a buffer for a call with key.
func (s *site) fill(a *siteArgs, key starlark.Value) {
	copy(a.args[:s.total], s.tmpl[:s.total]) // the slots past total stay nil
	if s.recvIsKey {
		a.args[0] = key
	}
	a.next = 0
	a.skip()
}

func (s *site) String() string        { return sitePrefix + strconv.Itoa(s.k) }
func (s *site) Type() string          { return "call site" }
func (s *site) Freeze()               {}
func (s *site) Truth() starlark.Bool  { return true }
func (s *site) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: call site") }

// Get is $sK[ctx]: an empty buffer for the call, the next on ctx's stack of them.
func (s *site) Get(key starlark.Value) (starlark.Value, bool, error) {
	c, ok := key.(*stepCtx)
	if !ok {
		a := &siteArgs{site: s}
		s.fill(a, key)
		return a, true, nil
	}
	if c.depth == len(c.sites) {
		c.sites = append(c.sites, &siteArgs{c: c})
	}
	a := c.sites[c.depth]
	c.depth++
	a.site = s
	s.fill(a, key)
	return a, true, nil
}

// siteArgs is a site's argument buffer.
type siteArgs struct {
	site *site
	c    *stepCtx // whose stack it is on; nil: made for one call
	args [maxSiteArgs]starlark.Value
	next int // the next slot an index fills
}

// skip moves next past the slots that are in place.
func (a *siteArgs) skip() {
	for a.next < a.site.total && a.site.fixed[a.next] {
		a.next++
	}
}

// done lets go of the arguments of the call and takes the buffer off the stack.
func (a *siteArgs) done() {
	clear(a.args[:a.site.total]) // fill puts the constants back
	if a.c != nil {
		a.c.depth--
	}
}

func (a *siteArgs) String() string        { return a.site.String() }
func (a *siteArgs) Type() string          { return "call" }
func (a *siteArgs) Freeze()               {}
func (a *siteArgs) Truth() starlark.Bool  { return true }
func (a *siteArgs) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: call") }
func (a *siteArgs) Name() string          { return a.site.String() }

// Get is [v]: v is the next argument.
func (a *siteArgs) Get(v starlark.Value) (starlark.Value, bool, error) {
	if a.next >= a.site.total {
		return nil, false, fmt.Errorf("internal error: more than %d values at a call site", a.site.total)
	}
	a.args[a.next] = v
	a.next++
	a.skip()
	return a, true, nil
}

// CallInternal makes the call the site stands for with the buffer's arguments.
func (a *siteArgs) CallInternal(t *starlark.Thread, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	defer a.done()
	s := a.site
	args := starlark.Tuple(a.args[:s.total])
	if s.method == "" {
		pos, vals := args[:len(args)-s.nkw], args[len(args)-s.nkw:]
		if s.nkw == 0 {
			return s.fn.(starlark.Callable).CallInternal(t, pos, nil)
		}
		return starlark.Call(t, s.fn, slices.Clone(pos), kwargsOf(s.keys, vals))
	}
	recv, rest := args[0], args[1:]
	pos, vals := rest[:len(rest)-s.nkw], rest[len(rest)-s.nkw:]
	switch r := recv.(type) {
	case *stepCtx:
		switch s.method {
		case "rule":
			var b [2]starlark.Value
			if s.planned {
				s.place(rest, b[:])
			} else if err := unpackKeys("ctx.rule", pos, s.keys, vals, ruleArgs, 1, b[:]); err != nil {
				return nil, err
			}
			return r.ruleOf(&b)
		case "send":
			var b [6]starlark.Value
			if s.planned {
				s.place(rest, b[:])
			} else if err := unpackKeys("ctx.send", pos, s.keys, vals, sendArgs, 2, b[:]); err != nil {
				return nil, err
			}
			return r.sendOf(&b)
		}
		if s.ctxFn != nil && s.nkw == 0 {
			return s.ctxFn(r, pos, nil)
		}
	case *starlark.List:
		if s.method == "append" && s.nkw == 0 && len(pos) == 1 {
			if err := r.Append(pos[0]); err != nil {
				return nil, fmt.Errorf("append: %v", err)
			}
			return starlark.None, nil
		}
	}
	return callMethod(t, recv, s.method, slices.Clone(pos), kwargsOf(s.keys, vals)) // charges.go
}

// kwargsOf pairs the keywords' names with their values.
func kwargsOf(keys string, vals []starlark.Value) []starlark.Tuple {
	if len(vals) == 0 {
		return nil
	}
	kwargs := make([]starlark.Tuple, len(vals))
	for k := range kwargs {
		var key string
		key, keys, _ = strings.Cut(keys, " ")
		kwargs[k] = starlark.Tuple{starlark.String(key), vals[k]}
	}
	return kwargs
}

// rewriteSites rewrites the calls of the top-level defs of f and returns the sites
// it made, in their order.
func rewriteSites(f *syntax.File) []*site {
	// A builtin is rewritten only if its name is never anything but called.
	other := map[string]bool{}
	called := map[*syntax.Ident]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if id, ok := n.Fn.(*syntax.Ident); ok {
				called[id] = true
			}
		case *syntax.Ident:
			if !called[n] {
				other[n.Name] = true
			}
		}
		return true
	})
	var sites []*site
	for _, s := range f.Stmts {
		d, ok := s.(*syntax.DefStmt)
		if !ok || len(d.Params) == 0 || !isName(d.Params[0], "ctx") || bindsCtx(d) {
			continue
		}
		var calls []*syntax.CallExpr
		for _, st := range d.Body {
			syntax.Walk(st, func(n syntax.Node) bool {
				switch n := n.(type) {
				case *syntax.LambdaExpr, *syntax.DefStmt:
					return false // another function: its ctx may be another
				case *syntax.CallExpr:
					calls = append(calls, n)
				}
				return true
			})
		}
		// Inner calls first: a call's arguments are rewritten before it.
		for k := len(calls) - 1; k >= 0 && len(sites) < maxSites; k-- {
			if st := rewriteSite(calls[k], len(sites)+1, other); st != nil {
				sites = append(sites, st)
			}
		}
	}
	return sites
}

// builtinNamed is the builtin a name not bound by the source stands for: the
// declarations' (range and max bounded or quicker, decl.go), else Starlark's.
func builtinNamed(name string) starlark.Value {
	if v, ok := declarations[name]; ok {
		return v
	}
	return starlark.Universe[name]
}

// sitesName is the predeclared tuple of a source's sites.
const sitesName = "$sites"

// siteGlobals is the statement that makes the sites globals, $s1, $s2, ... = $sites,
// to be put first in the file, and the tuple. A def reads a global by its index, a
// predeclared name by a lookup in a map, and the sites are read in nearly every line
// of a handler.
func siteGlobals(sites []*site) (syntax.Stmt, starlark.Tuple) {
	lhs := make([]syntax.Expr, len(sites))
	vals := make(starlark.Tuple, len(sites))
	for k, s := range sites {
		lhs[k] = &syntax.Ident{Name: s.String()}
		vals[k] = s
	}
	return &syntax.AssignStmt{Op: syntax.EQ, LHS: &syntax.TupleExpr{List: lhs}, RHS: &syntax.Ident{Name: sitesName}}, vals
}

func isName(e syntax.Expr, name string) bool {
	id, ok := e.(*syntax.Ident)
	return ok && id.Name == name
}

// bindsCtx reports whether d's body may bind the name ctx (conservatively: any
// assignment, loop or comprehension variable, def or lambda of that name).
func bindsCtx(d *syntax.DefStmt) bool {
	for _, p := range d.Params[1:] {
		if isName(p, "ctx") {
			return true
		}
	}
	found := false
	mark := func(e syntax.Expr) {
		syntax.Walk(e, func(n syntax.Node) bool {
			found = found || isName(asExpr(n), "ctx")
			return true
		})
	}
	for _, st := range d.Body {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.AssignStmt:
				mark(n.LHS)
			case *syntax.ForStmt:
				mark(n.Vars)
			case *syntax.ForClause:
				mark(n.Vars)
			case *syntax.DefStmt:
				found = found || n.Name.Name == "ctx"
			}
			return true
		})
	}
	return found
}

// constant is the value of a string or small int literal.
func constant(e syntax.Expr) (starlark.Value, bool) {
	l, ok := e.(*syntax.Literal)
	if !ok {
		return nil, false
	}
	switch v := l.Value.(type) {
	case string:
		if l.Token == syntax.STRING {
			return starlark.String(v), true
		}
	case int64:
		return starlark.MakeInt64(v), true
	}
	return nil, false
}

func asExpr(n syntax.Node) syntax.Expr {
	e, _ := n.(syntax.Expr)
	return e
}

// rewriteSite rewrites e into $sK[ctx][args...]() when it is a call the sites
// handle, and returns its site.
func rewriteSite(e *syntax.CallExpr, k int, other map[string]bool) *site {
	s := &site{k: k}
	var vals []syntax.Expr
	switch fn := e.Fn.(type) {
	case *syntax.DotExpr:
		if !siteMethods[fn.Name.Name] {
			return nil
		}
		s.method = fn.Name.Name
		s.ctxFn = ctxFuncs[s.method]
		vals = append(vals, fn.X)
	case *syntax.Ident:
		if !siteBuiltins[fn.Name] || other[fn.Name] {
			return nil
		}
		s.fn = builtinNamed(fn.Name)
	default:
		return nil
	}
	var kws []syntax.Expr
	for _, a := range e.Args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				s.keys += " " + a.X.(*syntax.Ident).Name
				s.nkw++
				kws = append(kws, a.Y)
				continue
			}
		case *syntax.UnaryExpr:
			if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
				return nil
			}
		}
		if kws != nil {
			return nil // a positional argument after a keyword: the compiler's error
		}
		vals = append(vals, a)
	}
	vals = append(vals, kws...)
	if len(e.Args) == 0 || len(vals) > maxSiteArgs {
		return nil // no arguments: nothing is copied
	}
	s.keys = strings.TrimPrefix(s.keys, " ")
	s.total = len(vals)
	pos := e.Lparen
	var x syntax.Expr = &syntax.IndexExpr{X: &syntax.Ident{NamePos: pos, Name: s.String()}, Lbrack: pos,
		Y: &syntax.Ident{NamePos: pos, Name: "ctx"}, Rbrack: pos}
	for k, v := range vals {
		if c, ok := constant(v); ok {
			s.tmpl[k], s.fixed[k] = c, true
			continue
		}
		if k == 0 && s.method != "" && isName(v, "ctx") {
			s.recvIsKey, s.fixed[k] = true, true
			continue
		}
		x = &syntax.IndexExpr{X: x, Lbrack: pos, Y: v, Rbrack: pos}
	}
	e.Fn, e.Args = x, nil
	switch s.method {
	case "rule":
		s.plan(ruleArgs, 1)
	case "send":
		s.plan(sendArgs, 2)
	}
	return s
}

// trueName is True under a name the compiler looks up with a position (True itself is
// a universal constant, which it does not place).
const trueName = "$true"

// placeLoopHeads gives the condition of every while True: loop in f the loop's line:
// a step bound reached in an endless loop is reported at the line of the instruction
// that ran last, and the test at the head of the loop would otherwise carry whatever
// position came before it (the def's, in a loop that starts a function).
func placeLoopHeads(f *syntax.File) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.WhileStmt); ok && isName(w.Cond, "True") {
			w.Cond = &syntax.Ident{NamePos: w.While, Name: trueName}
		}
		return true
	})
}
