package starlarkalg

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/syntax"

	"github.com/teach-dist/playground/runtime/sim"
)

// calls lists the calls by name that each top-level def of src makes after inlining.
func callsAfterInlining(t *testing.T, src string) map[string][]string {
	t.Helper()
	f, err := fileOptions.Parse("t.star", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	inlineHelpers(f)
	out := map[string][]string{}
	for _, s := range f.Stmts {
		d, ok := s.(*syntax.DefStmt)
		if !ok {
			continue
		}
		syntax.Walk(d, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok {
				if id, ok := c.Fn.(*syntax.Ident); ok {
					out[d.Name.Name] = append(out[d.Name.Name], id.Name)
				}
			}
			return true
		})
	}
	return out
}

// checkInlinesH checks whether on_request in src still calls h after inlining.
func checkInlinesH(t *testing.T, src string, inlined bool) {
	t.Helper()
	calls := callsAfterInlining(t, src)["on_request"]
	if still := slices.Contains(calls, "h"); still == inlined {
		t.Errorf("on_request calls %v: inlined %v, want %v", calls, !still, inlined)
	}
}

// A helper called as a statement is inlined only when nothing can tell: each case
// says whether the handler on_request still calls it.
func TestInline_OnlyWhereNothingCanTell(t *testing.T) {
	cases := []struct {
		name, src string
		inlined   bool
	}{
		{"plain helper", "def h(ctx, s, v):\n    s.count = v\ndef on_request(ctx, s):\n    h(ctx, s, 1)\n", true},
		{"in a loop and a branch", "def h(s, v):\n    s.count = v\ndef on_request(ctx, s):\n    for j in range(2):\n        if j > 0:\n            h(s, j)\n", true},
		{"returns", "def h(s):\n    s.count = 1\n    return\ndef on_request(ctx, s):\n    h(s)\n", false},
		{"a default", "def h(s, v = 1):\n    s.count = v\ndef on_request(ctx, s):\n    h(s, 2)\n", false},
		{"calls another def", "def g(s):\n    s.count = 1\ndef h(s):\n    g(s)\ndef on_request(ctx, s):\n    h(s)\n", false},
		{"a keyword at the call", "def h(s, v):\n    s.count = v\ndef on_request(ctx, s):\n    h(s, v = 2)\n", false},
		{"fewer arguments", "def h(s, v):\n    s.count = v\ndef on_request(ctx, s):\n    h(s)\n", false},
		{"a comprehension", "def h(s):\n    s.seen = [j for j in range(2)]\ndef on_request(ctx, s):\n    h(s)\n", false},
		{"caller shadows a global it reads", "LIMIT = 3\ndef h(s):\n    s.count = LIMIT\ndef on_request(ctx, s):\n    LIMIT = 4\n    h(s)\n", false},
		{"caller shadows the helper", "def h(s):\n    s.count = 1\ndef on_request(ctx, s):\n    h = 3\n    h(s)\n", false},
		{"after declarations", "rules2 = [rule(\"X-1\", lines = [\"a\"], says = \"b\")]\ndef h(s):\n    s.count = 1\ndef on_request(ctx, s):\n    h(s)\n", true},
		{"after top-level code that may call it", "def on_request(ctx, s):\n    h(s)\nx = [on_request(None, None)]\ndef h(s):\n    s.count = 1\n", false},
		{"used as a value", "def h(s):\n    s.count = 1\ndef on_request(ctx, s):\n    x = h(s)\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkInlinesH(t, c.src, c.inlined) })
	}
}

// The Ricart-Agrawala template's reply(ctx, s, j), called on every request it
// answers, is inlined: that is what the inliner is for.
func TestInline_TheTemplatesReplyIsInlined(t *testing.T) {
	src, _ := Template("ricart-agrawala")
	calls := callsAfterInlining(t, src)
	for _, h := range []string{"on_REQUEST", "on_release"} {
		for _, name := range calls[h] {
			if name == "reply" {
				t.Errorf("%s still calls reply: %v", h, calls[h])
			}
		}
	}
}

// An inlined helper behaves as the call: its arguments are evaluated once, before its
// body; its names are its own; an error in it is at its line, with its own names.
func TestInline_BehavesAsTheCall(t *testing.T) {
	const init = "def init(setup):\n    return {\"count\": 0, \"seen\": []}\n"
	stateAfter := func(t *testing.T, src string) string {
		t.Helper()
		spec := mustLoad(t, header+init+src)
		setup := &sim.Setup{IDs: []int{0, 1, 2}}
		nd := spec.New(0, setup)
		ctx := sim.NewContext(0, setup.IDs)
		ctx.Reset(0)
		nd.Step(ctx, &sim.Input{Kind: sim.Request})
		if err := ctx.Err(); err != nil {
			t.Fatalf("step: %v", err)
		}
		var w sim.StateWriter
		nd.Encode(&w)
		return string(w.Bytes())
	}
	// bump's v is s.count as it was at the call, not after bump's first line.
	got := stateAfter(t, "def bump(s, v):\n    s.count = s.count + 10\n    s.seen.append(v)\n    v = 99\ndef on_request(ctx, s):\n    s.count = 1\n    bump(s, s.count)\n    bump(s, s.count)\n    s.seen.append(v if False else len(s.seen))\nv = 0\n")
	if want := `{"count":21,"seen":[1,11,2]}`; got != want {
		t.Errorf("state %s, want %s", got, want)
	}

	src := header + init + "def h(s):\n    if s.count > 5:\n        y = 1\n    s.count = y\ndef on_request(ctx, s):\n    h(s)\n"
	err := runErr(t, mustLoad(t, src))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	line := strings.Count(src[:strings.Index(src, "s.count = y")], "\n") + 1
	if e.Line != line || !strings.Contains(e.Msg, "local variable y referenced before assignment") || strings.Contains(e.Msg, "$") {
		t.Errorf("got %q at line %d, want y referenced before assignment at line %d", e.Msg, e.Line, line)
	}
}

// ctx.send and ctx.rule with keywords are called without Starlark's keyword slices
// (kwcall.go) and still check their keywords; on anything but ctx, a method call
// with keywords is the call it was.
func TestKeywordCall_AsTheMethodCall(t *testing.T) {
	cases := []struct {
		name, call, want string
	}{
		{"unknown keyword", `ctx.send(j, "PING", tss = 1)`, `ctx.send: unexpected keyword argument "tss" (allowed: to, type, ts, arg, vec, queue)`},
		{"twice", `ctx.send(j, "PING", to = 1)`, "ctx.send: got multiple values for to"},
		{"missing", `ctx.send(j, ts = 1)`, "ctx.send: missing argument type"},
		{"rule's why", `ctx.rule("T-9", why = "x")`, `"T-9" is not one of the declared rules`},
		{"not ctx", `s.seen.send(j, ts = 1)`, "list has no .send field or method"},
		{"the state", `s.send(j, ts = 1)`, `the state has no variable "send"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := header + strings.Replace(body, `ctx.send(j, "PING", ts = s.count)`, c.call, 1)
			err := runErr(t, mustLoad(t, src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			line := strings.Count(src[:strings.Index(src, c.call)], "\n") + 1
			if !strings.Contains(e.Msg, c.want) || e.Line != line {
				t.Errorf("got %q at line %d, want %q at line %d", e.Msg, e.Line, c.want, line)
			}
		})
	}
}

// Every method of ctx reads as itself: Attr's switch and methodNames agree.
func TestCtx_EveryMethodIsItself(t *testing.T) {
	c := &stepCtx{n: &node{setup: &sim.Setup{IDs: []int{0}}}}
	c.bind()
	for _, name := range methodNames {
		v, err := c.Attr(name)
		if err != nil {
			t.Fatalf("ctx.%s: %v", name, err)
		}
		if b, ok := v.(interface{ Name() string }); !ok || b.Name() != "ctx."+name {
			t.Errorf("ctx.%s reads as %v", name, v)
		}
	}
}

// Inlining adds at most maxInlined syntax nodes to a file: a source of many short calls
// of a large helper keeps the calls past that as calls.
func TestInline_IsBoundedPerFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("def h(s):\n")
	for k := 0; k < 5; k++ {
		b.WriteString("    s.count = s.count + 1\n")
	}
	b.WriteString("def on_request(ctx, s):\n")
	const calls = 2000
	for k := 0; k < calls; k++ {
		b.WriteString("    h(s)\n")
	}
	left := 0
	for _, name := range callsAfterInlining(t, b.String())["on_request"] {
		if name == "h" {
			left++
		}
	}
	if left == 0 || left == calls {
		t.Fatalf("%d of %d calls left: want some inlined and the rest left as calls", left, calls)
	}
}
