package starlarkalg

import (
	"errors"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// A helper that returns an expression is inlined only where nothing can tell: each
// case says whether the handler on_request still calls it.
func TestInlineExpr_OnlyWhereNothingCanTell(t *testing.T) {
	const h = "def h(ctx, s):\n    return s.count + ctx.n\n"
	cases := []struct {
		name, src string
		inlined   bool
	}{
		{"the caller's parameters", h + "def on_request(ctx, s):\n    s.count = h(ctx, s)\n", true},
		{"in a condition", h + "def on_request(ctx, s):\n    if s.count > 0 and h(ctx, s) > 2:\n        s.count = 0\n", true},
		{"as an argument of a call", h + "def on_request(ctx, s):\n    ctx.send(0, \"PING\", ts = h(ctx, s))\n", true},
		{"a parameter passed twice", "def h(a, b):\n    return a == b\ndef on_request(ctx, s):\n    s.count = 1 if h(s, s) else 0\n", true},
		{"an attribute as argument", "def h(ctx, v):\n    return v + ctx.n\ndef on_request(ctx, s):\n    s.count = h(ctx, s.count)\n", false},
		{"a local as argument", h + "def on_request(ctx, s):\n    t = s\n    s.count = h(ctx, t)\n", false},
		{"a literal as argument", "def h(ctx, v):\n    return v + ctx.n\ndef on_request(ctx, s):\n    s.count = h(ctx, 1)\n", false},
		{"a keyword at the call", h + "def on_request(ctx, s):\n    s.count = h(ctx, s = s)\n", false},
		{"more than a return", "def h(ctx, s):\n    x = ctx.n\n    return s.count + x\ndef on_request(ctx, s):\n    s.count = h(ctx, s)\n", false},
		{"a comprehension", "def h(ctx, s):\n    return len([j for j in range(ctx.n)])\ndef on_request(ctx, s):\n    s.count = h(ctx, s)\n", false},
		{"calls another def", "def g(s):\n    return 1\ndef h(ctx, s):\n    return g(s)\ndef on_request(ctx, s):\n    s.count = h(ctx, s)\n", false},
		{"a default", "def h(ctx, s, v = 1):\n    return v\ndef on_request(ctx, s):\n    s.count = h(ctx, s, s)\n", false},
		{"caller shadows a global it reads", "LIMIT = 3\ndef h(ctx, s):\n    return LIMIT\ndef on_request(ctx, s):\n    LIMIT = 4\n    s.count = h(ctx, s)\n", false},
		{"inside a lambda", h + "def on_request(ctx, s):\n    f = lambda: h(ctx, s)\n    s.count = f()\n", false},
		{"after top-level code that may call it", "def on_request(ctx, s):\n    s.count = h(ctx, s)\nx = [on_request(None, None)]\n" + h, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkInlinesH(t, c.src, c.inlined) })
	}
}

// The Ricart-Agrawala template's older(ctx, s, m), asked on most requests while the
// process waits, is inlined.
func TestInlineExpr_TheTemplatesOlderIsInlined(t *testing.T) {
	src, _ := Template("ricart-agrawala")
	if !strings.Contains(src, "older(ctx, s, m)") {
		t.Fatal("the template no longer calls older(ctx, s, m)")
	}
	for _, name := range callsAfterInlining(t, src)["on_REQUEST"] {
		if name == "older" {
			t.Errorf("on_REQUEST still calls older")
		}
	}
}

// stepState is the encoded state of P0 after one request, on three nodes.
func stepState(t *testing.T, src string) string {
	t.Helper()
	spec := mustLoad(t, src)
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

// An inlined expression helper gives what the call gives: its parameters are the
// caller's values, short-circuits included, and an error in it is at its line with
// its own words.
func TestInlineExpr_BehavesAsTheCall(t *testing.T) {
	const init = "def init(setup):\n    return {\"count\": 0, \"seen\": []}\n"
	// older's "and" reads s.seen[0] only once s.seen has one, as the call would.
	got := stepState(t, header+init+`
def older(ctx, s):
    return len(s.seen) > 0 and s.seen[0] < ctx.n
def bump(s, x):
    x = 7
    s.count += x
def on_request(ctx, s):
    s.seen.append(1 if older(ctx, s) else 2)
    s.seen.append(1 if older(ctx, s) else 2)
    bump(s, s)
    s.count = s.count + (10 if older(ctx, s) else 20)
`)
	// bump rebinds its x: the caller's s is still the state after it.
	if want := `{"count":17,"seen":[2,1]}`; got != want {
		t.Errorf("state %s, want %s", got, want)
	}

	src := header + init + "def h(ctx, s):\n    return s.count + \"x\"\ndef on_request(ctx, s):\n    s.count = h(ctx, s)\n"
	if calls := callsAfterInlining(t, src)["on_request"]; len(calls) != 0 {
		t.Fatalf("h is not inlined here: on_request calls %v", calls)
	}
	err := runErr(t, mustLoad(t, src))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	line := strings.Count(src[:strings.Index(src, `return s.count + "x"`)], "\n") + 1
	if e.Line != line || !strings.Contains(e.Msg, "unknown binary op: int + string") || strings.Contains(e.Msg, "$") {
		t.Errorf("got %q at line %d, want int + string at line %d", e.Msg, e.Line, line)
	}
}
