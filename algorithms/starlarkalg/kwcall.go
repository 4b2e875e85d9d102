package starlarkalg

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Keyword arguments of ctx's methods. Starlark allocates two slices for the keyword
// arguments of every call, and ctx.send(j, "REQUEST", ts = s.ts) runs for nearly
// every event of a message-passing algorithm. So the loader rewrites a call of a
// method named like one of ctx's that take keywords (rule, send, set_timer) into a
// call of the builtin $kw with positional arguments only:
//
//	x.send(j, "REQUEST", ts = s.ts)   becomes   $kw(x, "send ts", j, "REQUEST", s.ts)
//
// The string names the method and the keywords, in order; the keywords' values come
// last. When x is ctx, $kw calls the method with no allocation; on anything else it
// makes the call it stands for (x.send(...) with its keywords). The call keeps its
// position, so an error is reported where it was. What differs is only when x.send
// is looked up: after the arguments are evaluated instead of before, which only a
// failing call (x has no send) could tell, by the error it reports (as the rewrites
// of grow.go).
const kwCall = "$kw"

// kwMethods are ctx's methods that take keyword arguments.
var kwMethods = map[string]bool{"rule": true, "send": true, "set_timer": true}

// rewriteKeywordCall rewrites e in place when it is such a call.
func rewriteKeywordCall(e *syntax.CallExpr) {
	dot, ok := e.Fn.(*syntax.DotExpr)
	if !ok || !kwMethods[dot.Name.Name] {
		return
	}
	var pos, vals []syntax.Expr
	desc := dot.Name.Name
	for _, a := range e.Args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				desc += " " + a.X.(*syntax.Ident).Name
				vals = append(vals, a.Y)
				continue
			}
		case *syntax.UnaryExpr:
			if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
				return // *args, **kwargs: left as they are
			}
		}
		if vals != nil {
			return // a positional argument after a keyword: the compiler's error
		}
		pos = append(pos, a)
	}
	if vals == nil {
		return // no keywords: nothing to save
	}
	name := &syntax.Literal{Token: syntax.STRING, TokenPos: dot.Name.NamePos, Raw: fmt.Sprintf("%q", desc), Value: desc}
	args := make([]syntax.Expr, 0, 2+len(pos)+len(vals))
	args = append(append(append(args, dot.X, name), pos...), vals...)
	e.Fn = &syntax.Ident{NamePos: dot.Dot, Name: kwCall}
	e.Args = args
}

// keywordCall is $kw(x, "method k1 k2 ...", positional..., v1, v2, ...).
func keywordCall(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	recv, desc := args[0], string(args[1].(starlark.String))
	method, names, _ := strings.Cut(desc, " ")
	nkw := strings.Count(names, " ") + 1
	rest := args[2:]
	pos, vals := rest[:len(rest)-nkw], rest[len(rest)-nkw:]
	if c, ok := recv.(*stepCtx); ok {
		switch method {
		case "rule":
			var a [2]starlark.Value
			if err := unpackKeys("ctx.rule", pos, names, vals, ruleArgs, 1, a[:]); err != nil {
				return nil, err
			}
			return c.ruleOf(&a)
		case "send":
			var a [6]starlark.Value
			if err := unpackKeys("ctx.send", pos, names, vals, sendArgs, 2, a[:]); err != nil {
				return nil, err
			}
			return c.sendOf(&a)
		}
	}
	kwargs := make([]starlark.Tuple, nkw)
	for k := range kwargs {
		var key string
		key, names, _ = strings.Cut(names, " ")
		kwargs[k] = starlark.Tuple{starlark.String(key), vals[k]}
	}
	return callMethod(t, recv, method, pos, kwargs) // charges.go
}
