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
// operands, or visit more than a few of its elements, into a call of a checking
// builtin: x + y, x * y, x % y, x - y, x | y, x & y, x ^ y, x << y (and their
// augmented forms), comparisons, slices, f(*x) and f(**x), dict keys and indexes, and
// every method of Starlark's own values (charges.go, which also wraps the universe's
// builtins). Each predicts the size of what it is about to build, before building
// it, and charges it to the call's budget (Limits.Grow): a handler call builds at most
// that many elements or bytes in all, whatever it keeps; and the work it is about to
// do to the call's step counter (Limits.Steps).
//
// The builtins' names are not identifiers ("$add"), so a source can neither call nor
// shadow them.
const (
	growAdd  = "$add"
	growMul  = "$mul"
	growMod  = "$mod"
	growCall = "$call"
)

// growKey is the thread-local key of a call's *growBudget.
const growKey = "starlarkalg.grow"

// growBudget is what one call (a handler call, or loading a source) may still do: build
// left of limit elements or bytes, and do steps units of work in all, counted in the
// thread's step counter (charges.go).
type growBudget struct {
	limit, left int
	steps       uint64 // the call's bound on steps and builtins' work together
	who         string // "the handler" or "the top level", for messages
	interrupt   func() bool
}

// newBudget gives a thread its budget and its step bound, with Limits.Interrupt
// polled (interrupt.go).
func newBudget(t *starlark.Thread, lim Limits, steps uint64, who string) *growBudget {
	b := &growBudget{limit: lim.Grow, left: lim.Grow, steps: steps, who: who, interrupt: lim.Interrupt}
	t.SetLocal(growKey, b)
	t.SetMaxExecutionSteps(steps)
	if b.interrupt != nil {
		t.OnMaxSteps = b.onMaxSteps
		t.SetMaxExecutionSteps(min(steps, interruptEvery))
	}
	return b
}

// budgetOf is the budget of the running call.
func budgetOf(t *starlark.Thread) *growBudget {
	b, _ := t.Local(growKey).(*growBudget)
	return b
}

// charge takes n elements or bytes from the budget of the running call, or fails
// naming the operation.
func charge(t *starlark.Thread, n int, op string) error {
	b := budgetOf(t)
	if b == nil {
		return fmt.Errorf("%s: no memory budget (an internal error)", op)
	}
	if n > b.left {
		return fmt.Errorf("%s: %s built more than %d elements or bytes (this call would add at least %d: values that keep growing?)", op, b.who, b.limit, n)
	}
	b.left -= n
	return nil
}

// growBuiltins are the checking builtins, added to the declarations, and the
// universe's builtins as a source sees them: charged (charges.go), this package's own,
// or, for a builtin missing from builtinCosts, refused.
func growBuiltins(d starlark.StringDict) {
	d[growAdd] = starlark.NewBuiltin("+", checkedAdd)
	d[growMul] = starlark.NewBuiltin("*", checkedMul)
	d[growMod] = starlark.NewBuiltin("%", checkedMod)
	d[growCall] = starlark.NewBuiltin("call", checkedCall)
	for _, op := range []syntax.Token{syntax.MINUS, syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX, syntax.LTLT} {
		d[growOps[op]] = starlark.NewBuiltin(op.String(), checkedBinary(op))
	}
	d[sliceName] = starlark.NewBuiltin("[:]", checkedSlice)
	d[kwCall] = starlark.NewBuiltin("call", keywordCall)
	for name := range builtinMethods {
		d[attrValuePrefix+name] = &attrReader{name: name}
	}
	d[starName] = starlark.NewBuiltin("*", checkedStar)
	d[starStarName] = starlark.NewBuiltin("**", checkedStarStar)
	d[flatValue] = flatProbe{probe{flatName}}
	d[keyValue] = keyProbe{probe{keyName}}
	for op, name := range compareNames {
		d[name] = starlark.NewBuiltin(op.String(), checkedCompare(op))
	}
	for name, v := range starlark.Universe {
		if _, isBuiltin := v.(*starlark.Builtin); !isBuiltin || d[name] != nil {
			continue // None, True, False; range, max, min (decl.go)
		}
		c, known := builtinCosts[name]
		switch {
		case !known:
			d[name] = starlark.NewBuiltin(name, func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
				return nil, fmt.Errorf("%s is not available to a source", name)
			})
		case c != nil:
			d[name] = chargedBuiltin(name, c)
		}
	}
	d["int"] = starlark.NewBuiltin("int", intOf)
	d["getattr"] = starlark.NewBuiltin("getattr", getattrOf)
	d["print"] = starlark.NewBuiltin("print", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.None, nil
	})
}

// shallow is the number of elements (or bytes) of a sequence, what copying it costs.
func shallow(v starlark.Value) int {
	if s, ok := v.(starlark.Sequence); ok {
		return s.Len()
	}
	return strLen(v)
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
	return textSize(v, limit)
}

// textSize is about the length of v's text, counted no further than limit.
func textSize(v starlark.Value, limit int) int {
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
			if err := sumFits(xi, yi, "+"); err != nil {
				return nil, err
			}
			if len(args) == 3 {
				return y, nil
			}
			return xi.Add(yi), nil
		}
	}
	if n := shallow(x) + shallow(y); n > 0 {
		if err := pay(t, n/bytesPerUnit, n, "+"); err != nil {
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
				n := int(int64(size) * k)
				if err := pay(t, n/bytesPerUnit, n, "*"); err != nil {
					return nil, err
				}
			}
		}
	}
	return result(args, syntax.STAR)
}

// sumFits: x + y (or x - y, x | y ...) has at most maxIntBits bits. Ints grow by a
// bit an addition (x = x + x), so without it a handler could make ints of 100 000
// bits, on which every division costs a million word operations.
func sumFits(x, y starlark.Int, op string) error {
	if small(x) && small(y) {
		return nil
	}
	if max(intBits(x), intBits(y))+1 > maxIntBits {
		return fmt.Errorf("%s: the int would have more than %d bits", op, maxIntBits)
	}
	return nil
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
		n := len(f) + strings.Count(string(f), "%")*deepSize(y, t)
		if err := pay(t, n/bytesPerUnit, n, "%"); err != nil {
			return nil, err
		}
	}
	return result(args, syntax.PERCENT)
}

// checkedCall is $call(recv, "name", args...): recv.name(args...), charged first
// (charges.go).
func checkedCall(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return callMethod(t, args[0], string(args[1].(starlark.String)), args[2:], kwargs)
}

// rewriteGrowth puts the checking builtins in place of the growing operations of a
// parsed file, or says where it cannot (an augmented assignment to a target that
// computes, which would be evaluated twice).
func rewriteGrowth(f *syntax.File, asWritten bool) error {
	r := &rewriter{asWritten: asWritten}
	r.stmts(f.Stmts)
	// $flat and $key are globals, which a def reads by their index, not by a lookup in
	// a map
	globals := []struct {
		used        bool
		name, value string
	}{{r.flat, flatName, flatValue}, {r.key, keyName, keyValue}}
	for _, name := range sortedKeys(r.attrs) {
		globals = append(globals, struct {
			used        bool
			name, value string
		}{true, attrPrefix + name, attrValuePrefix + name})
	}
	for _, g := range globals {
		if g.used {
			f.Stmts = append([]syntax.Stmt{&syntax.AssignStmt{Op: syntax.EQ, LHS: &syntax.Ident{Name: g.name},
				RHS: &syntax.Ident{Name: g.value}}}, f.Stmts...)
		}
	}
	return r.err
}

type rewriter struct {
	asWritten bool // Limits.AsWritten: no rewrite that only saves time
	err       error
	flat, key bool            // the file uses $flat, $key
	attrs     map[string]bool // the file reads $.name for these names
}

// key puts $key[k] in place of a dict key or index k that is not flat (charges.go).
func (r *rewriter) keyOf(p *syntax.Expr) {
	if flatExpr(*p) {
		return
	}
	r.key = true
	pos := syntax.Start(*p)
	*p = &syntax.IndexExpr{X: &syntax.Ident{NamePos: pos, Name: keyName}, Lbrack: pos, Y: *p, Rbrack: pos}
}

// ours: an index into one of the loader's own values ($s3[ctx][j], sites.go), not a
// source's.
func ours(e *syntax.IndexExpr) bool {
	x := e.X
	for {
		switch v := x.(type) {
		case *syntax.IndexExpr:
			x = v.X
		case *syntax.Ident:
			return strings.HasPrefix(v.Name, "$")
		default:
			return false
		}
	}
}

var growOps = map[syntax.Token]string{syntax.PLUS: growAdd, syntax.STAR: growMul, syntax.PERCENT: growMod,
	syntax.MINUS: "$sub", syntax.PIPE: "$or", syntax.AMP: "$and", syntax.CIRCUMFLEX: "$xor", syntax.LTLT: "$lsh"}
var augOps = map[syntax.Token]syntax.Token{syntax.PLUS_EQ: syntax.PLUS, syntax.STAR_EQ: syntax.STAR, syntax.PERCENT_EQ: syntax.PERCENT,
	syntax.MINUS_EQ: syntax.MINUS, syntax.PIPE_EQ: syntax.PIPE, syntax.AMP_EQ: syntax.AMP, syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX, syntax.LTLT_EQ: syntax.LTLT}

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
				r.target(&s.LHS)
				return
			}
			if !plainTarget(s.LHS) {
				r.fail(s.OpPos, "write this as t = t %s y: an augmented assignment's target here computes", op)
				return
			}
			// t op= y becomes t op= check(t, y, None): the check sees both operands and
			// returns y, and the assignment keeps its meaning (a list's += extends it in
			// place). The target is read twice, so it must read the same both times.
			// A copy, names as they are: the tree never shares a node (the resolver
			// annotates each).
			read := cloneExpr(s.LHS, func(name string) string { return name })
			r.expr(&read)
			r.target(&s.LHS)
			s.RHS = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: s.OpPos, Name: growOps[op]}, Lparen: s.OpPos,
				Args: []syntax.Expr{read, s.RHS, &syntax.Ident{NamePos: s.OpPos, Name: "None"}}, Rparen: s.OpPos}
		} else {
			r.target(&s.LHS)
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
// to anything, or subtracted, or-ed, and-ed or xor-ed with it, is an int or an error
// (Starlark has no such operation of an int with a string, list, set or dict), and
// formatting an int literal adds a few bytes per directive of the format, which is no
// longer than the format itself. A repetition is always checked: x * 3 in a loop
// grows as fast as x + x.
func cannotGrow(op syntax.Token, x, y syntax.Expr) bool {
	isInt := func(e syntax.Expr) bool {
		l, ok := e.(*syntax.Literal)
		return ok && l.Token == syntax.INT
	}
	switch op {
	case syntax.PLUS, syntax.MINUS, syntax.PIPE, syntax.AMP, syntax.CIRCUMFLEX:
		return (x != nil && isInt(x)) || isInt(y)
	case syntax.PERCENT:
		return isInt(y)
	case syntax.LTLT:
		return x != nil && isInt(x) && isInt(y) // a constant: at most 512 bits
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

// target rewrites what an assignment's target computes, not the target itself.
func (r *rewriter) target(p *syntax.Expr) {
	switch e := (*p).(type) {
	case *syntax.DotExpr:
		r.expr(&e.X)
	case *syntax.IndexExpr:
		r.expr(&e.X)
		r.expr(&e.Y)
		r.keyOf(&e.Y)
	case *syntax.ParenExpr:
		r.target(&e.X)
	case *syntax.ListExpr:
		for k := range e.List {
			r.target(&e.List[k])
		}
	case *syntax.TupleExpr:
		for k := range e.List {
			r.target(&e.List[k])
		}
	}
}

// nameLiteral is a method's name as a string literal at its place.
func nameLiteral(id *syntax.Ident) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: id.NamePos, Raw: `"` + id.Name + `"`, Value: id.Name}
}

// flatExpr: an expression whose value compares with anything in one unit: a literal,
// or arithmetic with one (s.clock + 1, ctx.n - 1, -x), which is an int or an error.
func flatExpr(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Literal:
		return true
	case *syntax.UnaryExpr:
		return e.Op == syntax.MINUS || e.Op == syntax.PLUS || e.Op == syntax.TILDE || e.Op == syntax.NOT
	case *syntax.BinaryExpr:
		if e.Op == syntax.PLUS || e.Op == syntax.MINUS {
			return isIntLiteral(e.X) || isIntLiteral(e.Y)
		}
		_, cmp := compareNames[e.Op]
		return cmp || (e.Op == syntax.AND || e.Op == syntax.OR) && flatExpr(e.X) && flatExpr(e.Y)
	case *syntax.ParenExpr:
		return flatExpr(e.X)
	}
	return false
}

// checkedComparison is x op y through its checking builtin, $op(x, y). Most
// comparisons are of ints (s.ts < m.ts), which the check would only slow down, so when
// x can be evaluated twice (a name, a field, an index) it becomes
//
//	(x op y) if $flat[x] else $op(x, y)
//
// where $flat[x] (an index, which allocates nothing) says whether x is an int, a short
// string or another value whose comparison with anything costs one unit. y is
// evaluated once in either branch.
func (r *rewriter) checkedComparison(e *syntax.BinaryExpr, name string) syntax.Expr {
	_, end := e.Y.Span()
	call := func(x, y syntax.Expr) syntax.Expr {
		return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: syntax.Start(e.X), Name: name}, Lparen: e.OpPos,
			Args: []syntax.Expr{x, y}, Rparen: end}
	}
	if e.Op == syntax.IN || e.Op == syntax.NOT_IN || !twice(e.X) || !cloneable(e.Y) {
		return call(e.X, e.Y)
	}
	same := func(name string) string { return name }
	r.flat = true
	return &syntax.CondExpr{If: e.OpPos, ElsePos: e.OpPos, True: e,
		Cond:  &syntax.IndexExpr{X: &syntax.Ident{NamePos: e.OpPos, Name: flatName}, Lbrack: e.OpPos, Y: cloneExpr(e.X, same), Rbrack: e.OpPos},
		False: call(cloneExpr(e.X, same), cloneExpr(e.Y, same))}
}

// twice: an expression that reads the same when evaluated twice, and only reads.
func twice(e syntax.Expr) bool {
	switch e := e.(type) {
	case *syntax.Ident, *syntax.Literal:
		return true
	case *syntax.DotExpr:
		return twice(e.X)
	case *syntax.IndexExpr:
		return twice(e.X) && twice(e.Y)
	case *syntax.ParenExpr:
		return twice(e.X)
	}
	return false
}

// cloneable: an expression cloneExpr copies (no comprehension or lambda in it).
func cloneable(e syntax.Expr) bool {
	ok := true
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n.(type) {
		case *syntax.Comprehension, *syntax.LambdaExpr:
			ok = false
		}
		return ok
	})
	return ok
}

// cheapCompare: a comparison with a flat operand (for x in y: a flat y, a string).
func cheapCompare(e *syntax.BinaryExpr) bool {
	if e.Op == syntax.IN || e.Op == syntax.NOT_IN {
		return flatExpr(e.Y)
	}
	return flatExpr(e.X) || flatExpr(e.Y)
}

func isIntLiteral(e syntax.Expr) bool {
	l, ok := e.(*syntax.Literal)
	return ok && l.Token == syntax.INT
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
		if name, ok := compareNames[e.Op]; ok && !cheapCompare(e) {
			*p = r.checkedComparison(e, name)
			return
		}
		if name, ok := growOps[e.Op]; ok && !cannotGrow(e.Op, e.X, e.Y) {
			_, end := e.Y.Span()
			*p = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: syntax.Start(e.X), Name: name}, Lparen: e.OpPos,
				Args: []syntax.Expr{e.X, e.Y}, Rparen: end}
		}
	case *syntax.CallExpr:
		dot, isMethod := e.Fn.(*syntax.DotExpr)
		if isMethod && builtinMethods[dot.Name.Name] {
			r.expr(&dot.X)
		} else {
			r.expr(&e.Fn)
		}
		for k, a := range e.Args {
			switch a := a.(type) {
			case *syntax.BinaryExpr:
				if a.Op == syntax.EQ {
					r.expr(&a.Y) // name = value
					continue
				}
			case *syntax.UnaryExpr:
				// f(*x), f(**x): the call copies x; the check charges it first
				if name := map[syntax.Token]string{syntax.STAR: starName, syntax.STARSTAR: starStarName}[a.Op]; name != "" {
					r.expr(&a.X)
					a.X = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: a.OpPos, Name: name}, Lparen: a.OpPos, Args: []syntax.Expr{a.X}, Rparen: a.OpPos}
					continue
				}
			}
			r.expr(&e.Args[k])
		}
		if isMethod && builtinMethods[dot.Name.Name] {
			// x.name(args) becomes $call(x, "name", args): charged (charges.go)
			e.Fn = &syntax.Ident{NamePos: dot.Dot, Name: growCall}
			e.Lparen = dot.Dot
			e.Args = append([]syntax.Expr{dot.X, nameLiteral(dot.Name)}, e.Args...)
		}
		if !r.asWritten {
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
		r.keyOf(&e.Key)
	case *syntax.DictExpr:
		r.exprs(e.List)
	case *syntax.DotExpr:
		r.expr(&e.X)
		if builtinMethods[e.Name.Name] {
			// a method taken as a value: $.name[x] charges its calls (charges.go)
			if r.attrs == nil {
				r.attrs = map[string]bool{}
			}
			r.attrs[e.Name.Name] = true
			*p = &syntax.IndexExpr{X: &syntax.Ident{NamePos: e.Dot, Name: attrPrefix + e.Name.Name}, Lbrack: e.Dot,
				Y: e.X, Rbrack: e.Name.NamePos}
		}
	case *syntax.IndexExpr:
		r.expr(&e.X)
		r.expr(&e.Y)
		if !ours(e) {
			r.keyOf(&e.Y)
		}
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
		// x[lo:hi] copies up to all of x: $slice(x) charges that and returns x
		e.X = &syntax.CallExpr{Fn: &syntax.Ident{NamePos: e.Lbrack, Name: sliceName}, Lparen: e.Lbrack,
			Args: []syntax.Expr{e.X}, Rparen: e.Lbrack}
	case *syntax.TupleExpr:
		r.exprs(e.List)
	case *syntax.UnaryExpr:
		if e.X != nil {
			r.expr(&e.X)
		}
	}
}
