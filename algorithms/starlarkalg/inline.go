package starlarkalg

import (
	"regexp"
	"strconv"

	"go.starlark.net/syntax"
)

// Inlining of helper calls. A Starlark function call costs about as much as a whole
// Go event (a frame, its locals, a deferred clean-up), and the templates call small
// helpers of their own on their busiest paths (Ricart-Agrawala's reply(ctx, s, j) on
// every request it answers). So the loader puts the body of such a helper in place of
// a call of it that stands as a statement, the way a compiler inlines:
//
//	reply(ctx, s, m.sender)
//
// becomes, in the caller,
//
//	$i1$ctx = ctx; $i1$s = s; $i1$to = m.sender
//	$i1$s.clock += 1
//	ctx.send($i1$to, "REPLY", ts = $i1$s.clock)
//
// The arguments are evaluated once, in order, before the body, as a call evaluates
// them; the body's names are renamed apart (a name with $ cannot be written in a
// source), and every node keeps its position, so an error is reported at the same
// line as without inlining. The source the student reads and the traces do not
// change (the templates' traces are compared byte for byte with the Go algorithms').
//
// A helper is inlined only when nothing can tell the difference: it is a top-level
// def with plain parameters, defined before any top-level statement that may run the
// source's own functions; its body has no return, no def, lambda or comprehension
// and calls no top-level def (so no recursion); the call passes exactly its
// parameters, by position; and the caller, a top-level def, binds none of the names
// the helper reads as globals (nor the helper's own name). Everything else is called
// as usual.

// maxInlineBody bounds the helper bodies that are inlined (in syntax nodes): a small
// body is where a call costs most, and a source that calls a large helper many times
// must not grow much.
const maxInlineBody = 60

// maxInlined bounds the syntax nodes inlining adds to a file in all: a 64 KiB source
// of short calls of a large helper must not compile to sixty times its size. The
// calls past it are left as calls.
const maxInlined = 20_000

// helper is a top-level def that can be inlined.
type helper struct {
	def      *syntax.DefStmt
	size     int             // its body's syntax nodes
	free     map[string]bool // the names its body reads that are not its own (globals)
	local    map[string]bool // its parameters and the names its body binds
	assigned map[string]bool // the names its body binds (a parameter among them is rebound)
	result   syntax.Expr     // what it returns, for a helper whose body is one return (inlineexpr.go)
}

// inlineHelpers inlines the calls of helpers that stand as statements in the
// top-level defs of f.
func inlineHelpers(f *syntax.File) {
	defs := map[string]*syntax.DefStmt{}
	top := map[string]bool{} // every name the file binds at its top level
	for _, s := range f.Stmts {
		if d, ok := s.(*syntax.DefStmt); ok {
			defs[d.Name.Name] = d
			top[d.Name.Name] = true
			continue
		}
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.AssignStmt:
				bindTargets(n.LHS, top)
			case *syntax.ForStmt:
				bindTargets(n.Vars, top)
			}
			return true
		})
	}
	// A def after a top-level statement that may run the source's own functions could
	// be called, through them, before it exists: an error inlining would hide.
	early := map[string]bool{}
	for _, s := range f.Stmts {
		if d, ok := s.(*syntax.DefStmt); ok {
			early[d.Name.Name] = true
		} else if mayRunSource(s, top) {
			break
		}
	}
	helpers, exprs := map[string]*helper{}, map[string]*helper{}
	for name, d := range defs {
		if !early[name] {
			continue
		}
		if h := asHelper(d, defs); h != nil {
			helpers[name] = h
		} else if h := asExprHelper(d, defs); h != nil {
			exprs[name] = h
		}
	}
	if len(helpers) == 0 && len(exprs) == 0 {
		return
	}
	in := &inliner{helpers: helpers, exprs: exprs}
	for _, s := range f.Stmts {
		if d, ok := s.(*syntax.DefStmt); ok {
			in.bound = boundNames(d)
			in.params = paramNames(d)
			d.Body = in.stmts(d.Body)
			in.exprStmts(d.Body)
		}
	}
}

// paramNames is the plain parameters of a def: always bound in its body (Starlark has
// no del), and reading one has no effect and cannot fail.
func paramNames(d *syntax.DefStmt) map[string]bool {
	params := map[string]bool{}
	for _, p := range d.Params {
		if id, ok := p.(*syntax.Ident); ok {
			params[id.Name] = true
		}
	}
	return params
}

// mayRunSource reports whether a top-level statement may call a function of the
// source: it calls something, and it names something the file binds or makes a
// lambda (a declaration such as rules = [rule("RA1", ...)] calls only builtins on
// constants).
func mayRunSource(s syntax.Stmt, top map[string]bool) bool {
	calls, names := false, false
	targets := map[*syntax.Ident]bool{} // what an assignment binds, which it does not read
	syntax.Walk(s, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.AssignStmt:
			if id, ok := n.LHS.(*syntax.Ident); ok && n.Op == syntax.EQ {
				targets[id] = true
			}
		case *syntax.CallExpr:
			calls = true
		case *syntax.LambdaExpr:
			names = true
		case *syntax.Ident:
			names = names || (top[n.Name] && !targets[n])
		}
		return true
	})
	return calls && names
}

// asHelper is d as an inlinable helper, or nil.
func asHelper(d *syntax.DefStmt, defs map[string]*syntax.DefStmt) *helper {
	h := newHelper(d)
	if h == nil {
		return nil
	}
	body := make([]syntax.Node, len(d.Body))
	for k, s := range d.Body {
		body[k] = s
	}
	if !h.scan(body, defs) {
		return nil
	}
	return h
}

// newHelper is d with its parameters, or nil when one is not a plain name.
func newHelper(d *syntax.DefStmt) *helper {
	h := &helper{def: d, free: map[string]bool{}, local: map[string]bool{}, assigned: map[string]bool{}}
	for _, p := range d.Params {
		id, ok := p.(*syntax.Ident)
		if !ok {
			return nil // a default, *args or **kwargs
		}
		h.local[id.Name] = true
	}
	return h
}

// scan walks the nodes of a helper's body and says whether inlining copies them
// faithfully, noting the body's size and names.
func (h *helper) scan(body []syntax.Node, defs map[string]*syntax.DefStmt) bool {
	size, ok := 0, true
	var used []string
	fields := map[*syntax.Ident]bool{}
	for _, s := range body {
		syntax.Walk(s, func(n syntax.Node) bool {
			if n == nil { // Walk's mark of the end of a node's children
				return true
			}
			size++
			switch n := n.(type) {
			default: // return, def, lambda, a comprehension: what cloneStmt does not copy
				ok = false
			case *syntax.ExprStmt, *syntax.IfStmt, *syntax.WhileStmt, *syntax.BranchStmt,
				*syntax.Literal, *syntax.BinaryExpr, *syntax.UnaryExpr, *syntax.IndexExpr, *syntax.SliceExpr,
				*syntax.ParenExpr, *syntax.CondExpr, *syntax.ListExpr, *syntax.TupleExpr, *syntax.DictExpr, *syntax.DictEntry:
			case *syntax.CallExpr:
				if id, isID := n.Fn.(*syntax.Ident); isID && defs[id.Name] != nil {
					ok = false
				}
				for _, a := range n.Args {
					if kw, isKw := a.(*syntax.BinaryExpr); isKw && kw.Op == syntax.EQ {
						if id, isID := kw.X.(*syntax.Ident); isID {
							fields[id] = true // a keyword, not a name
						}
					}
				}
			case *syntax.AssignStmt:
				bindTargets(n.LHS, h.local)
				bindTargets(n.LHS, h.assigned)
			case *syntax.ForStmt:
				bindTargets(n.Vars, h.local)
				bindTargets(n.Vars, h.assigned)
			case *syntax.DotExpr:
				fields[n.Name] = true // a field, not a name
			case *syntax.Ident:
				if !fields[n] {
					used = append(used, n.Name)
				}
			}
			return ok
		})
	}
	if !ok || size > maxInlineBody {
		return false
	}
	h.size = size
	for _, name := range used {
		if !h.local[name] {
			h.free[name] = true
		}
	}
	return true
}

// bindTargets adds the names an assignment or a for loop binds.
func bindTargets(e syntax.Expr, into map[string]bool) {
	switch e := e.(type) {
	case *syntax.Ident:
		into[e.Name] = true
	case *syntax.TupleExpr:
		for _, x := range e.List {
			bindTargets(x, into)
		}
	case *syntax.ListExpr:
		for _, x := range e.List {
			bindTargets(x, into)
		}
	case *syntax.ParenExpr:
		bindTargets(e.X, into)
	}
}

// boundNames is every name a def binds anywhere in it (its parameters, assignments,
// loop variables, and those of what it nests): more than its locals, which only makes
// inlining more careful.
func boundNames(d *syntax.DefStmt) map[string]bool {
	bound := map[string]bool{}
	syntax.Walk(d, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DefStmt:
			bound[n.Name.Name] = true
			for _, p := range n.Params {
				syntax.Walk(p, func(m syntax.Node) bool {
					if id, ok := m.(*syntax.Ident); ok {
						bound[id.Name] = true
					}
					return true
				})
			}
		case *syntax.LambdaExpr:
			for _, p := range n.Params {
				bindTargets(p, bound)
			}
		case *syntax.AssignStmt:
			bindTargets(n.LHS, bound)
		case *syntax.ForStmt:
			bindTargets(n.Vars, bound)
		case *syntax.ForClause:
			bindTargets(n.Vars, bound)
		}
		return true
	})
	return bound
}

type inliner struct {
	helpers map[string]*helper // helpers called as statements
	exprs   map[string]*helper // helpers that return an expression (inlineexpr.go)
	bound   map[string]bool    // the names the caller binds
	params  map[string]bool    // the caller's parameters
	count   int                // inlined calls so far: each gets its own names
	added   int                // syntax nodes inlined so far (maxInlined)
}

func (in *inliner) stmts(list []syntax.Stmt) []syntax.Stmt {
	var out []syntax.Stmt
	for k, s := range list {
		body := in.stmt(s)
		if body == nil {
			if out != nil {
				out = append(out, s)
			}
			continue
		}
		if out == nil {
			out = append(make([]syntax.Stmt, 0, len(list)+len(body)), list[:k]...)
		}
		out = append(out, body...)
	}
	if out == nil {
		return list
	}
	return out
}

// stmt inlines within s, and returns the statements that replace s when s is itself
// an inlinable call (nil when s stays).
func (in *inliner) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
	case *syntax.IfStmt:
		s.True = in.stmts(s.True)
		s.False = in.stmts(s.False)
	case *syntax.ForStmt:
		s.Body = in.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Body = in.stmts(s.Body)
	case *syntax.ExprStmt:
		return in.call(s)
	}
	return nil
}

// call is the inlined body of a helper call standing as a statement, or nil.
func (in *inliner) call(s *syntax.ExprStmt) []syntax.Stmt {
	c, ok := s.X.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	h := in.callee(c, in.helpers)
	if h == nil {
		return nil
	}
	for _, a := range c.Args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				return nil // name = value
			}
		case *syntax.UnaryExpr:
			if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
				return nil
			}
		}
	}
	if !in.take(h) {
		return nil
	}
	in.count++
	prefix := "$i" + strconv.Itoa(in.count) + "$"
	// A parameter that the body never rebinds, passed one of the caller's parameters,
	// is that parameter: nothing runs between the call and the body that could rebind
	// it, and reading it has no effect. Every other argument is copied first.
	same := map[string]string{}
	for k, a := range c.Args {
		p := h.def.Params[k].(*syntax.Ident)
		if id, ok := a.(*syntax.Ident); ok && in.params[id.Name] && !h.assigned[p.Name] {
			same[p.Name] = id.Name
		}
	}
	rename := func(name string) string {
		if arg, ok := same[name]; ok {
			return arg
		}
		if h.local[name] {
			return prefix + name
		}
		return name
	}
	out := make([]syntax.Stmt, 0, len(c.Args)+len(h.def.Body))
	for k, a := range c.Args {
		p := h.def.Params[k].(*syntax.Ident)
		if _, ok := same[p.Name]; ok {
			continue
		}
		start, _ := a.Span()
		out = append(out, &syntax.AssignStmt{OpPos: start, Op: syntax.EQ,
			LHS: &syntax.Ident{NamePos: p.NamePos, Name: rename(p.Name)}, RHS: a})
	}
	for _, b := range h.def.Body {
		out = append(out, cloneStmt(b, rename))
	}
	return out
}

// callee is the helper of table that c calls with as many arguments as it has
// parameters, or nil (the caller may have bound the helper's name to something else).
func (in *inliner) callee(c *syntax.CallExpr, table map[string]*helper) *helper {
	id, ok := c.Fn.(*syntax.Ident)
	if !ok || in.bound[id.Name] {
		return nil
	}
	h := table[id.Name]
	if h == nil || len(c.Args) != len(h.def.Params) {
		return nil
	}
	return h
}

// take says whether h may be inlined in the caller, and counts its body against
// maxInlined when it may: the caller must bind none of the names h reads as globals.
func (in *inliner) take(h *helper) bool {
	for name := range h.free {
		if in.bound[name] {
			return false
		}
	}
	if in.added+h.size > maxInlined {
		return false
	}
	in.added += h.size
	return true
}

// inlinedName matches the prefix inlining gives a helper's names, which an error
// message must not show.
var inlinedName = regexp.MustCompile(`\$i[0-9]+\$`)

// demangle removes the inlining prefixes from an error message.
func demangle(msg string) string { return inlinedName.ReplaceAllString(msg, "") }

// cloneEach clones every node of list with clone (nil stays nil).
func cloneEach[T any](list []T, clone func(T) T) []T {
	if list == nil {
		return nil
	}
	out := make([]T, len(list))
	for k, x := range list {
		out[k] = clone(x)
	}
	return out
}

// cloneStmt copies a helper's statement with its names renamed: every node is new,
// because the resolver annotates each one.
func cloneStmt(s syntax.Stmt, rename func(string) string) syntax.Stmt {
	stmts := func(list []syntax.Stmt) []syntax.Stmt {
		return cloneEach(list, func(x syntax.Stmt) syntax.Stmt { return cloneStmt(x, rename) })
	}
	switch s := s.(type) {
	case *syntax.AssignStmt:
		c := *s
		c.LHS, c.RHS = cloneExpr(s.LHS, rename), cloneExpr(s.RHS, rename)
		return &c
	case *syntax.ExprStmt:
		c := *s
		c.X = cloneExpr(s.X, rename)
		return &c
	case *syntax.IfStmt:
		c := *s
		c.Cond, c.True, c.False = cloneExpr(s.Cond, rename), stmts(s.True), stmts(s.False)
		return &c
	case *syntax.ForStmt:
		c := *s
		c.Vars, c.X, c.Body = cloneExpr(s.Vars, rename), cloneExpr(s.X, rename), stmts(s.Body)
		return &c
	case *syntax.WhileStmt:
		c := *s
		c.Cond, c.Body = cloneExpr(s.Cond, rename), stmts(s.Body)
		return &c
	case *syntax.BranchStmt:
		c := *s
		return &c
	}
	panic("starlarkalg: inlining a helper with a " + syntaxName(s)) // asHelper let it through
}

func cloneExpr(e syntax.Expr, rename func(string) string) syntax.Expr {
	if e == nil {
		return nil
	}
	exprs := func(list []syntax.Expr) []syntax.Expr {
		return cloneEach(list, func(x syntax.Expr) syntax.Expr { return cloneExpr(x, rename) })
	}
	switch e := e.(type) {
	case *syntax.Ident:
		return &syntax.Ident{NamePos: e.NamePos, Name: rename(e.Name)}
	case *syntax.Literal:
		c := *e
		return &c
	case *syntax.BinaryExpr:
		c := *e
		c.X, c.Y = cloneExpr(e.X, rename), cloneExpr(e.Y, rename)
		if e.Op == syntax.EQ { // a keyword argument: its name is no variable
			c.X = &syntax.Ident{NamePos: e.X.(*syntax.Ident).NamePos, Name: e.X.(*syntax.Ident).Name}
		}
		return &c
	case *syntax.UnaryExpr:
		c := *e
		c.X = cloneExpr(e.X, rename)
		return &c
	case *syntax.CallExpr:
		c := *e
		c.Fn, c.Args = cloneExpr(e.Fn, rename), exprs(e.Args)
		return &c
	case *syntax.DotExpr:
		c := *e
		c.X = cloneExpr(e.X, rename)
		c.Name = &syntax.Ident{NamePos: e.Name.NamePos, Name: e.Name.Name}
		return &c
	case *syntax.IndexExpr:
		c := *e
		c.X, c.Y = cloneExpr(e.X, rename), cloneExpr(e.Y, rename)
		return &c
	case *syntax.SliceExpr:
		c := *e
		c.X, c.Lo, c.Hi, c.Step = cloneExpr(e.X, rename), cloneExpr(e.Lo, rename), cloneExpr(e.Hi, rename), cloneExpr(e.Step, rename)
		return &c
	case *syntax.ParenExpr:
		c := *e
		c.X = cloneExpr(e.X, rename)
		return &c
	case *syntax.CondExpr:
		c := *e
		c.Cond, c.True, c.False = cloneExpr(e.Cond, rename), cloneExpr(e.True, rename), cloneExpr(e.False, rename)
		return &c
	case *syntax.ListExpr:
		c := *e
		c.List = exprs(e.List)
		return &c
	case *syntax.TupleExpr:
		c := *e
		c.List = exprs(e.List)
		return &c
	case *syntax.DictExpr:
		c := *e
		c.List = exprs(e.List)
		return &c
	case *syntax.DictEntry:
		c := *e
		c.Key, c.Value = cloneExpr(e.Key, rename), cloneExpr(e.Value, rename)
		return &c
	}
	panic("starlarkalg: inlining a helper with a " + syntaxName(e)) // asHelper let it through
}

func syntaxName(n syntax.Node) string {
	start, _ := n.Span()
	return "node at " + start.String()
}
