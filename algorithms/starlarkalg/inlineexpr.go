package starlarkalg

import "go.starlark.net/syntax"

// Inlining of helpers that return an expression. Ricart-Agrawala's older(ctx, s, m),
// asked on most requests, costs a Starlark call (a frame and its locals on the heap)
// to compare two pairs of integers. A helper whose body is a single return, called
// with the caller's own parameters as its arguments, is replaced by its returned
// expression with each parameter renamed to the caller's argument:
//
//	elif s.state == "REQUESTED" and older(ctx, s, m):
//
// becomes
//
//	elif s.state == "REQUESTED" and (s.ts < m.ts or (s.ts == m.ts and ctx.self_id < ctx.id(m.sender))):
//
// Nothing can tell the difference. A call evaluates its arguments first, but reading
// a parameter has no effect and cannot fail (a parameter is always bound: Starlark has
// no del), and an expression cannot rebind the caller's names, so each parameter has
// the same value wherever the body reads it. The body's nodes keep their positions, so
// an error in it is reported at the helper's line. The conditions on the helper and
// the caller are the statement inliner's (inline.go): a top-level def defined early,
// plain parameters, no lambda or comprehension, no call of a top-level def, and a
// caller that binds none of the names the helper reads as globals. An argument that
// is anything but one of the caller's parameters (m.ts, a literal, a local that may be
// unbound) keeps the call.

// asExprHelper is d as a helper whose body is a single return of an expression, or nil.
func asExprHelper(d *syntax.DefStmt, defs map[string]*syntax.DefStmt) *helper {
	if len(d.Body) != 1 {
		return nil
	}
	ret, ok := d.Body[0].(*syntax.ReturnStmt)
	if !ok || ret.Result == nil {
		return nil
	}
	h := newHelper(d)
	if h == nil || !h.scan([]syntax.Node{ret.Result}, defs) {
		return nil
	}
	h.result = ret.Result
	return h
}

// exprStmts inlines the expression helpers called anywhere in the expressions of a
// caller's statements.
func (in *inliner) exprStmts(list []syntax.Stmt) {
	for _, s := range list {
		switch s := s.(type) {
		case *syntax.ExprStmt:
			s.X = in.expr(s.X)
		case *syntax.AssignStmt:
			s.RHS = in.expr(s.RHS) // a target is left as it is: it names a place
		case *syntax.ReturnStmt:
			s.Result = in.expr(s.Result)
		case *syntax.IfStmt:
			s.Cond = in.expr(s.Cond)
			in.exprStmts(s.True)
			in.exprStmts(s.False)
		case *syntax.WhileStmt:
			s.Cond = in.expr(s.Cond)
			in.exprStmts(s.Body)
		case *syntax.ForStmt:
			s.X = in.expr(s.X)
			in.exprStmts(s.Body)
		}
	}
}

// expr is e with the calls of expression helpers in it inlined. It does not look
// into a lambda or a comprehension, whose names are their own.
func (in *inliner) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.CallExpr:
		e.Fn = in.expr(e.Fn)
		for k, a := range e.Args {
			e.Args[k] = in.expr(a)
		}
		if body := in.exprCall(e); body != nil {
			return body
		}
	case *syntax.BinaryExpr:
		if e.Op != syntax.EQ { // name = value in a call: the name is no expression
			e.X = in.expr(e.X)
		}
		e.Y = in.expr(e.Y)
	case *syntax.UnaryExpr:
		e.X = in.expr(e.X)
	case *syntax.ParenExpr:
		e.X = in.expr(e.X)
	case *syntax.DotExpr:
		e.X = in.expr(e.X)
	case *syntax.IndexExpr:
		e.X, e.Y = in.expr(e.X), in.expr(e.Y)
	case *syntax.SliceExpr:
		e.X, e.Lo, e.Hi, e.Step = in.expr(e.X), in.expr(e.Lo), in.expr(e.Hi), in.expr(e.Step)
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = in.expr(e.Cond), in.expr(e.True), in.expr(e.False)
	case *syntax.ListExpr:
		for k, x := range e.List {
			e.List[k] = in.expr(x)
		}
	case *syntax.TupleExpr:
		for k, x := range e.List {
			e.List[k] = in.expr(x)
		}
	case *syntax.DictExpr:
		for _, x := range e.List {
			if entry, ok := x.(*syntax.DictEntry); ok {
				entry.Key, entry.Value = in.expr(entry.Key), in.expr(entry.Value)
			}
		}
	}
	return e
}

// exprCall is the inlined body of a call of an expression helper, or nil.
func (in *inliner) exprCall(c *syntax.CallExpr) syntax.Expr {
	h := in.callee(c, in.exprs)
	if h == nil {
		return nil
	}
	same := map[string]string{}
	for k, a := range c.Args {
		arg, ok := a.(*syntax.Ident)
		if !ok || !in.params[arg.Name] {
			return nil
		}
		same[h.def.Params[k].(*syntax.Ident).Name] = arg.Name
	}
	if !in.take(h) {
		return nil
	}
	body := cloneExpr(h.result, func(name string) string {
		if arg, ok := same[name]; ok {
			return arg
		}
		return name
	})
	return &syntax.ParenExpr{Lparen: c.Lparen, X: body, Rparen: c.Rparen}
}
