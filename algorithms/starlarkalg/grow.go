package starlarkalg

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Memory within one handler call. The step bound stops a long computation, and the
// state is measured after every step, but one Starlark step can build a huge value
// ("x" * 10**9, [0] * n) and a few steps can double one again and again (x = x + x).
// So the loader rewrites every operation that can build a value larger than its
// operands into a call of a checking builtin: x + y, x * y, x % y (and +=, *=, %=),
// and the methods join, replace, format and extend. Each predicts the size of what it
// is about to build, before building it, and charges it to the call's budget
// (Limits.Grow): a handler call builds at most that many elements or bytes through
// them in all, whatever it keeps. str and repr are charged the same way; print does
// nothing (it would format its arguments for no one).
//
// The builtins' names are not identifiers ("$add"), so a source can neither call nor
// shadow them.
const (
	growAdd  = "$add"
	growMul  = "$mul"
	growMod  = "$mod"
	growCall = "$call"
)

// growMethods are the methods that can build a value larger than their receiver and
// arguments together.
var growMethods = map[string]bool{"join": true, "replace": true, "format": true, "extend": true}

// growKey is the thread-local key of a call's *growBudget.
const growKey = "starlarkalg.grow"

type growBudget struct{ limit, left int }

// resetGrow gives a thread a fresh budget for its next call.
func resetGrow(t *starlark.Thread, limit int) {
	b, _ := t.Local(growKey).(*growBudget)
	if b == nil {
		b = &growBudget{}
		t.SetLocal(growKey, b)
	}
	b.limit, b.left = limit, limit
}

// charge takes n from the budget of the running call, or fails naming the operation.
func charge(t *starlark.Thread, n int, op string) error {
	b, _ := t.Local(growKey).(*growBudget)
	if b == nil {
		return fmt.Errorf("%s: no memory budget (an internal error)", op)
	}
	if n > b.left {
		return fmt.Errorf("%s would build a value of about %d elements or bytes: one step may build at most %d in all (values that keep growing?)", op, n, b.limit)
	}
	b.left -= n
	return nil
}

// growBuiltins are the checking builtins, added to the declarations.
func growBuiltins(d starlark.StringDict) {
	d[growAdd] = starlark.NewBuiltin("+", checkedAdd)
	d[growMul] = starlark.NewBuiltin("*", checkedMul)
	d[growMod] = starlark.NewBuiltin("%", checkedMod)
	d[growCall] = starlark.NewBuiltin("call", checkedCall)
	d[kwCall] = starlark.NewBuiltin("call", keywordCall)
	for _, name := range []string{"str", "repr"} {
		general := starlark.Universe[name]
		d[name] = starlark.NewBuiltin(name, func(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if len(args) == 1 {
				if err := charge(t, deepSize(args[0], t), name+"()"); err != nil {
					return nil, err
				}
			}
			return starlark.Call(t, general, args, kwargs)
		})
	}
	d["print"] = starlark.NewBuiltin("print", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.None, nil
	})
}

// shallow is the number of elements (or bytes) of a sequence, what copying it costs.
func shallow(v starlark.Value) int {
	switch v := v.(type) {
	case starlark.String:
		return len(v)
	case starlark.Bytes:
		return len(v)
	case starlark.Sequence:
		return v.Len()
	}
	return 0
}

// deepSize is about the length of v's text (what str, repr and formatting build),
// counted no further than the call's budget allows: a value that shares one list many
// times over (x = [x, x]) is large as text, and walking it must not cost more than
// the budget either.
func deepSize(v starlark.Value, t *starlark.Thread) int {
	limit := 1
	if b, _ := t.Local(growKey).(*growBudget); b != nil {
		limit = b.left + 1
	}
	n := 0
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		if n >= limit {
			return
		}
		switch v := v.(type) {
		case starlark.String:
			n += len(v) + 2
		case starlark.Bytes:
			n += len(v) + 3
		case starlark.Int:
			if _, ok := v.Int64(); ok {
				n += 20
			} else {
				n += v.BigInt().BitLen()/3 + 2
			}
		case starlark.Indexable: // lists, tuples
			n += 2
			for k := 0; k < v.Len() && n < limit; k++ {
				n += 2
				walk(v.Index(k))
			}
		case *starlark.Dict:
			n += 2
			for _, kv := range v.Items() {
				if n >= limit {
					return
				}
				n += 4
				walk(kv[0])
				walk(kv[1])
			}
		default: // None, bools, floats, and this package's values (ctx, state ...) print short
			n += len(v.String())
		}
	}
	walk(v)
	return n
}

// The checked operators take (x, y) and return x op y, or (x, y, None) for t op= y:
// they check and return y, the assignment applies the operator.

func checkedAdd(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, y := args[0], args[1]
	if xi, ok := x.(starlark.Int); ok {
		if yi, ok := y.(starlark.Int); ok {
			if len(args) == 3 {
				return y, nil
			}
			return xi.Add(yi), nil
		}
	}
	if n := shallow(x) + shallow(y); n > 0 {
		if err := charge(t, n, "+"); err != nil {
			return nil, err
		}
	}
	return result(args, syntax.PLUS)
}

// result is x op y, or y alone for an augmented assignment's check.
func result(args starlark.Tuple, op syntax.Token) (starlark.Value, error) {
	if len(args) == 3 {
		return args[1], nil
	}
	return starlark.Binary(op, args[0], args[1])
}

// maxIntBits bounds the ints a product may build (a few squarings would reach
// millions of bits).
const maxIntBits = 4096

func checkedMul(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, y := args[0], args[1]
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	switch {
	case xInt && yInt:
		if small(xi) && small(yi) {
			if len(args) == 3 {
				return y, nil
			}
			return xi.Mul(yi), nil
		}
		if xi.BigInt().BitLen()+yi.BigInt().BitLen() > maxIntBits {
			return nil, fmt.Errorf("*: the product would have more than %d bits", maxIntBits)
		}
		if len(args) == 3 {
			return y, nil
		}
		return xi.Mul(yi), nil
	case xInt || yInt:
		seq, times := y, xi
		if yInt {
			seq, times = x, yi
		}
		if size := shallow(seq); size > 0 {
			k, ok := times.Int64()
			if !ok || (k > 0 && int64(size)*k > int64(1<<40)) {
				return nil, fmt.Errorf("*: repeats %s %s times", seq.Type(), times.String())
			}
			if k > 0 {
				if err := charge(t, int(int64(size)*k), "*"); err != nil {
					return nil, err
				}
			}
		}
	}
	return result(args, syntax.STAR)
}

// small: an int whose products with another small one fit in 64 bits.
func small(i starlark.Int) bool {
	v, ok := i.Int64()
	return ok && v > -1<<31 && v < 1<<31
}

func checkedMod(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, y := args[0], args[1]
	if f, ok := x.(starlark.String); ok {
		// each directive formats at most all of y
		if err := charge(t, len(f)+strings.Count(string(f), "%")*deepSize(y, t), "%"); err != nil {
			return nil, err
		}
	}
	return result(args, syntax.PERCENT)
}

// checkedCall is recv.name(args...), charged first when it is one of growMethods on
// a string or list.
func checkedCall(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	recv, name := args[0], string(args[1].(starlark.String))
	rest := args[2:]
	if n, op := growOf(t, recv, name, rest, kwargs); n > 0 {
		if err := charge(t, n, op); err != nil {
			return nil, err
		}
	}
	var fn starlark.Value
	if ha, ok := recv.(starlark.HasAttrs); ok {
		var err error
		if fn, err = ha.Attr(name); err != nil {
			return nil, err
		}
	}
	if fn == nil {
		return nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	return starlark.Call(t, fn, rest, kwargs)
}

// growOf predicts what recv.name(args) builds; 0 when it is not a growing call (the
// method itself then reports wrong arguments).
func growOf(t *starlark.Thread, recv starlark.Value, name string, args starlark.Tuple, kwargs []starlark.Tuple) (int, string) {
	op := "." + name + "()"
	s, isStr := recv.(starlark.String)
	switch {
	case name == "join" && isStr && len(args) == 1:
		seq, ok := args[0].(starlark.Indexable)
		if !ok {
			return 0, op
		}
		n := len(s) * seq.Len()
		for k := 0; k < seq.Len(); k++ {
			n += shallow(seq.Index(k))
		}
		return n, op
	case name == "replace" && isStr && len(args) >= 2:
		old, ok1 := args[0].(starlark.String)
		repl, ok2 := args[1].(starlark.String)
		if !ok1 || !ok2 {
			return 0, op
		}
		count := strings.Count(string(s), string(old))
		return len(s) + count*len(repl), op
	case name == "format" && isStr:
		most := 0
		for _, a := range args {
			most = max(most, deepSize(a, t))
		}
		for _, kv := range kwargs {
			most = max(most, deepSize(kv[1], t))
		}
		return len(s) + strings.Count(string(s), "{")*most, op
	case name == "extend" && len(args) == 1:
		if _, isList := recv.(*starlark.List); isList {
			return shallow(recv) + shallow(args[0]), op
		}
	}
	return 0, op
}

// rewriteGrowth puts the checking builtins in place of the growing operations of a
// parsed file, or says where it cannot (an augmented assignment to a target that
// computes, which would be evaluated twice).
func rewriteGrowth(f *syntax.File) error {
	r := &rewriter{}
	r.stmts(f.Stmts)
	return r.err
}

type rewriter struct{ err error }

var growOps = map[syntax.Token]string{syntax.PLUS: growAdd, syntax.STAR: growMul, syntax.PERCENT: growMod}
var augOps = map[syntax.Token]syntax.Token{syntax.PLUS_EQ: syntax.PLUS, syntax.STAR_EQ: syntax.STAR, syntax.PERCENT_EQ: syntax.PERCENT}

func (r *rewriter) stmts(list []syntax.Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *rewriter) stmt(s syntax.Stmt) {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		r.expr(&s.RHS)
		if op, aug := augOps[s.Op]; aug {
			if cannotGrow(op, nil, s.RHS) {
				return
			}
			if !plainTarget(s.LHS) {
				r.fail(s.OpPos, "write this as t = t %s y: an augmented assignment's target here computes", op)
				return
			}
			// t op= y becomes t op= check(t, y, None): the check sees both operands and
			// returns y, and the assignment keeps its meaning (a list's += extends it in
			// place). The target is read twice, so it must read the same both times.
			s.RHS = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: s.OpPos, Name: growOps[op]}, Lparen: s.OpPos,
				Args: []syntax.Expr{cloneTarget(s.LHS), s.RHS, &syntax.Ident{NamePos: s.OpPos, Name: "None"}}, Rparen: s.OpPos}
		} else {
			r.expr(&s.LHS)
		}
	case *syntax.DefStmt:
		r.params(s.Params)
		r.stmts(s.Body)
	case *syntax.ExprStmt:
		r.expr(&s.X)
	case *syntax.ForStmt:
		r.expr(&s.X)
		r.stmts(s.Body)
	case *syntax.WhileStmt:
		r.expr(&s.Cond)
		r.stmts(s.Body)
	case *syntax.IfStmt:
		r.expr(&s.Cond)
		r.stmts(s.True)
		r.stmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			r.expr(&s.Result)
		}
	}
}

func (r *rewriter) fail(pos syntax.Position, format string, args ...any) {
	if r.err == nil {
		r.err = syntax.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *rewriter) params(ps []syntax.Expr) {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			r.expr(&b.Y)
		}
	}
}

// cannotGrow: x op y cannot build a large value, so it needs no check (and costs no
// builtin call: clock + 1 is most of an algorithm's arithmetic). An int literal added
// to anything is an int or an error (Starlark adds no int to a string or list), and
// formatting an int literal adds a few bytes per directive of the format, which is no
// longer than the format itself. A repetition is always checked: x * 3 in a loop
// grows as fast as x + x.
func cannotGrow(op syntax.Token, x, y syntax.Expr) bool {
	isInt := func(e syntax.Expr) bool {
		l, ok := e.(*syntax.Literal)
		return ok && l.Token == syntax.INT
	}
	switch op {
	case syntax.PLUS:
		return (x != nil && isInt(x)) || isInt(y)
	case syntax.PERCENT:
		return isInt(y)
	}
	return false
}

// plainTarget is a target that reads the same every time: a name, a field of one, an
// index that is a name or a constant.
func plainTarget(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Ident:
		return true
	case *syntax.DotExpr:
		return plainTarget(e.X)
	case *syntax.IndexExpr:
		switch e.Y.(type) {
		case *syntax.Ident, *syntax.Literal:
			return plainTarget(e.X)
		}
	case *syntax.ParenExpr:
		return plainTarget(e.X)
	}
	return false
}

// cloneTarget copies a plain target, so that the tree never shares a node (the
// resolver annotates each).
func cloneTarget(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
		c := *e
		c.Binding = nil
		return &c
	case *syntax.DotExpr:
		c := *e
		c.X = cloneTarget(e.X)
		name := *e.Name
		name.Binding = nil
		c.Name = &name
		return &c
	case *syntax.IndexExpr:
		c := *e
		c.X, c.Y = cloneTarget(e.X), cloneTarget(e.Y)
		return &c
	case *syntax.ParenExpr:
		c := *e
		c.X = cloneTarget(e.X)
		return &c
	case *syntax.Literal:
		c := *e
		return &c
	}
	return e
}

func (r *rewriter) exprs(list []syntax.Expr) {
	for k := range list {
		r.expr(&list[k])
	}
}

func (r *rewriter) expr(p *syntax.Expr) {
	switch e := (*p).(type) {
	case *syntax.BinaryExpr:
		r.expr(&e.X)
		r.expr(&e.Y)
		if name, ok := growOps[e.Op]; ok && !cannotGrow(e.Op, e.X, e.Y) {
			_, end := e.Y.Span()
			*p = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: syntax.Start(e.X), Name: name}, Lparen: e.OpPos,
				Args: []syntax.Expr{e.X, e.Y}, Rparen: end}
		}
	case *syntax.CallExpr:
		r.expr(&e.Fn)
		for k, a := range e.Args {
			if b, ok := a.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
				r.expr(&b.Y) // name = value
				continue
			}
			r.expr(&e.Args[k])
		}
		if dot, ok := e.Fn.(*syntax.DotExpr); ok && growMethods[dot.Name.Name] {
			name := &syntax.Literal{Token: syntax.STRING, TokenPos: dot.Name.NamePos, Raw: `"` + dot.Name.Name + `"`, Value: dot.Name.Name}
			e.Fn = &syntax.Ident{NamePos: dot.Dot, Name: growCall}
			e.Lparen = dot.Dot
			e.Args = append([]syntax.Expr{dot.X, name}, e.Args...)
		}
		if !asWritten {
			rewriteKeywordCall(e) // kwcall.go
		}
	case *syntax.Comprehension:
		r.expr(&e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				r.expr(&c.X)
			case *syntax.IfClause:
				r.expr(&c.Cond)
			}
		}
	case *syntax.CondExpr:
		r.expr(&e.Cond)
		r.expr(&e.True)
		r.expr(&e.False)
	case *syntax.DictEntry:
		r.expr(&e.Key)
		r.expr(&e.Value)
	case *syntax.DictExpr:
		r.exprs(e.List)
	case *syntax.DotExpr:
		r.expr(&e.X)
	case *syntax.IndexExpr:
		r.expr(&e.X)
		r.expr(&e.Y)
	case *syntax.LambdaExpr:
		r.params(e.Params)
		r.expr(&e.Body)
	case *syntax.ListExpr:
		r.exprs(e.List)
	case *syntax.ParenExpr:
		r.expr(&e.X)
	case *syntax.SliceExpr:
		for _, q := range []*syntax.Expr{&e.X, &e.Lo, &e.Hi, &e.Step} {
			if *q != nil {
				r.expr(q)
			}
		}
	case *syntax.TupleExpr:
		r.exprs(e.List)
	case *syntax.UnaryExpr:
		if e.X != nil {
			r.expr(&e.X)
		}
	}
}
