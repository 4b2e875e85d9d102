package starlarkalg

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// TestCharges_EveryBuiltinAndMethodIsChargedOrRemoved reads go.starlark.net's universe
// and the methods of every type a source can make (strings, lists, dicts, sets, bytes:
// fileOptions enables sets, and b"" literals make bytes) and requires each to have an
// entry in the cost tables, so that a builtin or method the library adds fails here
// until someone decides what it costs. Besides, every universe builtin with a cost is
// replaced in what a source sees, and a builtin or method missing from the tables
// cannot be reached.
func TestCharges_EveryBuiltinAndMethodIsChargedOrRemoved(t *testing.T) {
	if !fileOptions.Set {
		t.Error("fileOptions no longer enables sets: drop set from methodTypes, or keep this test's list in step")
	}
	for _, name := range sortedKeys(starlark.Universe) {
		b, isBuiltin := starlark.Universe[name].(*starlark.Builtin)
		if !isBuiltin {
			continue // None, True, False
		}
		c, known := builtinCosts[name]
		if !known {
			t.Errorf("the universe's %s is in no cost table: give it a cost in builtinCosts (charges.go), or nil if its work and result are bounded whatever its arguments", name)
			continue
		}
		if seen, ok := declarations[name].(*starlark.Builtin); c != nil && ok && seen == b {
			t.Errorf("%s has a cost but a source calls the universe's own", name)
		}
	}
	types := map[string]bool{}
	for _, v := range methodTypes {
		types[v.Type()] = true
		for _, name := range v.AttrNames() {
			if _, known := methodCosts[v.Type()][name]; !known {
				t.Errorf("%s.%s is in no cost table: give it a cost in methodCosts (charges.go), or nil if its work and result are bounded whatever its arguments", v.Type(), name)
			}
			if !builtinMethods[name] {
				t.Errorf("%s.%s: the loader does not route it through the charges", v.Type(), name)
			}
		}
	}
	for typ := range methodCosts {
		if !types[typ] {
			t.Errorf("methodCosts has %s, which methodTypes does not list", typ)
		}
	}
	// Every value a source can make, besides this package's own: none has methods the
	// tables miss.
	for _, v := range []starlark.Value{starlark.MakeInt(1), starlark.Float(1), starlark.None, starlark.True, starlark.Tuple{}} {
		if ha, ok := v.(starlark.HasAttrs); ok && len(ha.AttrNames()) > 0 {
			t.Errorf("%s has methods %v that no cost table lists", v.Type(), ha.AttrNames())
		}
	}
}

// TestCharges_WhatIsNotInTheTablesCannotBeReached: a universe builtin without an
// entry is predeclared as a refusal, and a method without one is refused when looked
// up, so a library update adds nothing a source can reach before it is charged.
func TestCharges_WhatIsNotInTheTablesCannotBeReached(t *testing.T) {
	starlark.Universe["novel"] = starlark.NewBuiltin("novel", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.None, nil
	})
	defer delete(starlark.Universe, "novel")
	d := starlark.StringDict{}
	growBuiltins(d)
	thread := &starlark.Thread{}
	newBudget(thread, DefaultLimits, DefaultLimits.Steps, "the handler")
	if _, err := starlark.Call(thread, d["novel"], nil, nil); err == nil || !strings.Contains(err.Error(), "novel is not available") {
		t.Errorf("a builtin missing from builtinCosts: got %v, want a refusal", err)
	}

	upper := methodCosts["string"]["upper"]
	delete(methodCosts["string"], "upper")
	defer func() { methodCosts["string"]["upper"] = upper }()
	if _, err := callMethod(thread, starlark.String("a"), "upper", nil, nil); err == nil || !strings.Contains(err.Error(), "string.upper is not available") {
		t.Errorf("a method missing from methodCosts: got %v, want a refusal", err)
	}
	if _, err := attrOf(starlark.String("a"), "upper"); err == nil {
		t.Error("a method missing from methodCosts can be taken as a value")
	}
}

// attacks are handler bodies that, without their charge, allocate gigabytes or run
// for seconds in a few builtin calls. Each must stop at its line with the bound's
// message naming the operation whose charge stops it (op).
var attacks = []struct {
	name, code, at, op, want string
}{
	{"zip bomb", `x = zip(*([range(65536)] * 100000))`, "zip(", "zip()", "built more than"},
	{"list of a range kept in a loop", "keep = []\n    for i in range(3500):\n        keep.append(list(range(65536)))", "list(range", "list()", "built more than"},
	{"max over a big list in a loop", "x = [0] * 1000000\n    for i in range(100):\n        y = max(x)", "max(x)", "max()", "did more than"},
	{"sorted with a key", "x = list(range(65536))\n    y = sorted(x, key = lambda v: -v)", "sorted(", "sorted()", "did more than"},
	{"string times an int", `x = "x" * (1 << 30)`, `"x" *`, "*", "built more than"},
	{"join of a huge list", `x = ",".join(["abcdef"] * 500000)`, ".join(", ".join()", "built more than"},
	{"split of a huge string", "x = \"a \" * 500000\n    for i in range(10):\n        y = x.split(\" \")", ".split(", ".split()", "built more than"},
	{"split taken as a value", "x = \"a \" * 500000\n    f = x.split\n    y = f(\" \")", "f(", ".split()", "built more than"},
	{"split through getattr", "x = \"a \" * 500000\n    y = getattr(x, \"split\")(\" \")", "getattr(", ".split()", "built more than"},
	{"dict of a zip", "r = range(30000)\n    for i in range(100):\n        d = dict(zip(r, r))", "dict(zip", "dict()|zip()", "did more than"},
	{"formatting with %", "x = [list(range(1000))] * 1000\n    y = \"%s\" % (x,)", `"%s" %`, "%", "built more than"},
	{"deep equality", "a = [0] * 10\n    b = [0] * 10\n    for i in range(7):\n        a = [a] * 10\n        b = [b] * 10\n    y = a == b", "a == b", "==", "did more than"},
	{"in a big list, in a loop", "x = [0] * 1000000\n    for i in range(1000):\n        y = -1 in x", "-1 in x", "in", "did more than"},
	{"hash of a long string, in a loop", "x = \"x\" * 1000000\n    for i in range(100):\n        y = hash(x)", "hash(x)", "hash()", "did more than"},
	{"unpacking a huge list into a call", "x = [0] * 1000000\n    y = max(*x)", "max(*x)", "*", "built more than"},
	{"int of a huge string", `x = int("9" * 100000)`, "int(", "int", "ints have at most 4096 bits"},
	{"a comprehension over a big range, in a loop", "for i in range(100):\n        y = [j for j in range(65536)]", "y = [j", "", "did more than"},
	{"set of a big list, in a loop", "x = list(range(65536))\n    for i in range(100):\n        y = set(x)", "set(x)", "set()", "did more than"},
	{"copying a big list by slicing, in a loop", "x = [0] * 600000\n    for i in range(100):\n        y = x[1:]", "x[1:]", "[:]", "built more than"},
	{"union of big sets, in a loop", "x = set(range(3000))\n    for i in range(100):\n        y = x | x", "x | x", "|", "did more than"},
	{"an int shifted again and again", "x = 1\n    for i in range(10000):\n        x = x << 500", "x << 500", "<<", "the int would have more than 4096 bits"},
	{"a dict literal's key nested by sharing", "t = (0,)\n    for i in range(60):\n        t = (t, t)\n    d = {t: 1}", "d = {t", "a key", "a key or index of more than 256 values"},
	{"an index nested by sharing", "t = (0,)\n    for i in range(60):\n        t = (t, t)\n    d = {}\n    d[t] = 1", "d[t] = 1", "a key", "a key or index of more than 256 values"},
	{"a comprehension's key nested by sharing", "t = (0,)\n    for i in range(60):\n        t = (t, t)\n    d = {t: i for i in range(2)}", "d = {t", "a key", "a key or index of more than 256 values"},
	{"ints grown by addition", "x = 1\n    for i in range(20000):\n        x = x + x", "x + x", "+", "the int would have more than 4096 bits"},
	{"long strings compared, in a loop", "x = \"x\" * 500000\n    y = \"x\" * 500000\n    for i in range(60000):\n        z = x == y", "x == y", "==", "did more than"},
	{"a long string as a key, in a loop", "x = \"x\" * 500000\n    d = {}\n    for i in range(60000):\n        d[x] = i", "d[x] = i", "a key", "a key or index of more than 256 values"},
	{"searching long bytes, in a loop", "x = b\"x\" * 1000000\n    for i in range(60000):\n        y = b\"y\" in x", "b\"y\" in x", "in", "did more than"},
	{"join of a set of long strings, in a loop", "d = set([\"x\" * 300000, \"y\" * 300000])\n    for i in range(100):\n        y = \"\".join(d)", ".join(d)", ".join()", "built more than"},
	{"strip by a long set of characters, in a loop", "c = \"\\u00e9\" * 200000\n    for i in range(1000):\n        y = \"ab\".strip(c)", ".strip(c)", ".strip()", "did more than"},
	{"list.index over a big list, in a loop", "x = [0] * 1000000\n    for i in range(100):\n        y = x.index(0)", ".index(", ".index()", "did more than"},
}

// attackSource is a source whose on_request runs code, or whose top level does, in a
// function it calls (load).
func attackSource(code string, atLoad bool) string {
	if atLoad {
		return header + "def init(setup):\n    return {\"count\": 0}\n\ndef attack():\n    " + code + "\n\nattack()\n"
	}
	return header + "def init(setup):\n    return {\"count\": 0}\n\ndef on_request(ctx, s):\n    " + code + "\n"
}

// TestCharges_AttacksStopAtTheirLine runs every attack in a handler and at the top
// level: each ends in an *Error at its line naming the operation and the bound, after
// allocating a few MiB at most, and a handler's work counter (its thread's steps,
// builtins' work included) stays within the bound.
func TestCharges_AttacksStopAtTheirLine(t *testing.T) {
	for _, a := range attacks {
		for _, atLoad := range []bool{false, true} {
			where := "handler"
			if atLoad {
				where = "load"
			}
			t.Run(a.name+"/"+where, func(t *testing.T) {
				src := attackSource(a.code, atLoad)
				line := strings.Count(src[:strings.Index(src, a.at)], "\n") + 1
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				var err error
				var steps uint64
				if atLoad {
					_, err = Load("test", src)
				} else {
					spec := mustLoad(t, src)
					setup := &sim.Setup{IDs: []int{0, 1, 2}}
					nd := spec.New(0, setup)
					ctx := sim.NewContext(0, setup.IDs)
					nd.Step(ctx, &sim.Input{Kind: sim.Request})
					err = ctx.Err()
					steps = nd.(*node).run.thread.Steps
				}
				runtime.ReadMemStats(&after)
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("got %v, want an *Error", err)
				}
				who, limit := "the handler ", "100000"
				if atLoad {
					who, limit = "the top level ", "200000"
				}
				want := a.want
				switch want {
				case "did more than":
					want = who + want + " " + limit + " units of work"
				case "built more than":
					want = who + want + " 1048576 elements or bytes"
				}
				byOp := false
				for _, op := range strings.Split(a.op, "|") {
					byOp = byOp || strings.HasPrefix(e.Msg, op)
				}
				if e.Line != line || !strings.Contains(e.Msg, want) || !byOp {
					t.Errorf("got %s (line %d), want %q from %q at line %d", e, e.Line, want, a.op, line)
				}
				if !atLoad && e.Handler != "on_request" {
					t.Errorf("got the handler %q, want on_request", e.Handler)
				}
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
					t.Errorf("allocated %d MiB", grew>>20)
				}
				if steps > DefaultLimits.Steps {
					t.Errorf("the handler's work counter reached %d, past its bound", steps)
				}
			})
		}
	}
}

// TestCharges_GlobalsBuiltAtLoadAreCharged: module top-level code that keeps large
// values in globals is charged as a handler is, against the top level's budgets.
func TestCharges_GlobalsBuiltAtLoadAreCharged(t *testing.T) {
	for _, c := range []struct{ code, want string }{
		{"keep = [list(range(65536)) for i in range(3500)]", "list(): the top level built more than 1048576 elements or bytes"},
		{"big = [0] * 1000000\nm = [max(big) for i in range(100)]", "max(): the top level did more than 200000 units of work"},
	} {
		src := header + "def init(setup):\n    return {\"count\": 0}\n" + c.code + "\n"
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load("test", src)
		runtime.ReadMemStats(&after)
		var e *Error
		if !errors.As(err, &e) || e.Line != strings.Count(src, "\n") || !strings.Contains(e.Msg, c.want) {
			t.Errorf("%s: got %v, want %q at line %d", c.code, err, c.want, strings.Count(src, "\n"))
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
			t.Errorf("%s: allocated %d MiB", c.code, grew>>20)
		}
	}
}

// TestCharges_EncodeShowsNoHugeText: encode may return a value small in memory and
// huge as text; the inspector shows that it is too large instead of writing it.
func TestCharges_EncodeShowsNoHugeText(t *testing.T) {
	src := header + "def init(setup):\n    return {\"count\": 0}\n\ndef encode(ctx, s):\n    x = [0]\n    for i in range(60):\n        x = [x, x]\n    return [(\"x\", x), (\"d\", {(1, 2): [3]})]\n"
	nd := mustLoad(t, src).New(0, &sim.Setup{IDs: []int{0, 1, 2}})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := string(sim.EncodeState(nd))
	runtime.ReadMemStats(&after)
	if !strings.Contains(got, "(a list too large to show)") || !strings.Contains(got, "{(1, 2): [3]}") {
		t.Errorf("got %s", got)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("allocated %d MiB", grew>>20)
	}
}

// TestCharges_OrdinaryCodeRunsAsBefore: the routed methods, comparisons and unpacking
// compute what Starlark computes, on small values, within the budgets.
func TestCharges_OrdinaryCodeRunsAsBefore(t *testing.T) {
	code := `
    x = [3, 1, 2]
    y = x
    up = "ab".upper
    checks = [
        (sorted(x, key = lambda v: -v), [3, 2, 1]),
        (x == y, True), (x != [3, 1, 2], False), ([1, 2] < [1, 3], True), ((1, "a") >= (1, "a"), True),
        (2 in x, True), ("b" in "abc", True), (5 not in x, True), ((1, 2) in {(1, 2): 0}, True),
        (max(x), 3), (min(*x), 1), (max(7, 4), 7), (list(zip([1, 2], "ab".elems())), [(1, "a"), (2, "b")]),
        (dict(zip(["k"], [1]), j = 2), {"k": 1, "j": 2}), ("a-b-c".split("-"), ["a", "b", "c"]),
        (up(), "AB"), (getattr("ab", "upper")(), "AB"), (getattr(x, "nope", 0), 0), (x.index(2), 2),
        ("{}:{}".format(*["a", "b"]), "a:b"), (int("0x1f", 16), 31), (str(10), "10"), (len(set(x)), 3),
        (hash("a"), 97), (list(reversed(x)), [2, 1, 3]), (tuple(enumerate("ab".elems())), ((0, "a"), (1, "b"))),
        ({"a": 1}.get("a"), 1), ("  a ".strip(), "a"), ("a\nb".splitlines(), ["a", "b"]),
        ([1, 2, 3][1:], [2, 3]), ("abc"[::-1], "cba"), (range(5)[1:3], range(1, 3)), (7 - 2, 5), (6 | 1, 7), (6 & 3, 2), (6 ^ 3, 5), (3 << 2, 12),
        (sorted(set([1, 2]) | set([3])), [1, 2, 3]), (sorted(set([1, 2]) - set([1])), [2]), ({"a": 1} | {"b": 2}, {"a": 1, "b": 2}),
        ({(1, 2): 3}[(1, 2)], 3), ({k: 1 for k in [(1, "a")]}, {(1, "a"): 1}), ([5, 6][-1], 6),
        (s.count, 0), (any([0, 1]), True), (all([]), True), (bytes("ab"), b"ab"), (sorted(set([2, 1]).union([3])), [1, 2, 3]),
    ]
    n = 5
    n -= 2
    n |= 8
    n <<= 1
    checks.append((n, 22))
    d = {(1, 2): 1}
    k = (1, 2)
    d[k] += 1
    d[k] += n
    checks.append((d[k], 24))
    for k, (got, want) in enumerate(checks):
        if got != want:
            fail("check %d: got %s, want %s" % (k, got, want))
    s.count = s.count + 1
`
	src := header + "def init(setup):\n    return {\"count\": 0}\n\ndef on_request(ctx, s):" + code
	spec := mustLoad(t, src)
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	nd.Step(ctx, &sim.Input{Kind: sim.Request})
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestCharges_SmallIntComparisonsAreNotChecked: a comparison of a name or field with
// another is tested for ints first ($flat), so the templates' comparisons call no
// builtin.
func TestCharges_SmallIntComparisonsAreNotChecked(t *testing.T) {
	spec := mustLoad(t, header+"def init(setup):\n    return {\"count\": 0, \"seen\": []}\n"+
		"def on_request(ctx, s):\n    if s.count < ctx.self or s.count == ctx.n or ctx.self != s.count:\n        s.count = 0\n")
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	in := &sim.Input{Kind: sim.Request}
	allocs := testing.AllocsPerRun(100, func() {
		ctx.Reset(0)
		nd.Step(ctx, in)
	})
	if allocs > 1 {
		t.Errorf("%.1f allocations per step, want at most 1 (the handler's frame)", allocs)
	}
}

// TestCharges_TheWorkBudgetIsPerCall: a handler that does most of its work bound in
// builtins can do so at every call.
func TestCharges_TheWorkBudgetIsPerCall(t *testing.T) {
	spec := mustLoad(t, attackSource("x = [0] * 80000\n    y = max(x)", false))
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	for k := range 3 {
		ctx.Reset(0)
		nd.Step(ctx, &sim.Input{Kind: sim.Request})
		if err := ctx.Err(); err != nil {
			t.Fatalf("call %d: %v", k, err)
		}
	}
}

// TestCharges_NoCostTableNameIsStale: the tables name only what the library has, so a
// renamed or removed builtin or method is noticed.
func TestCharges_NoCostTableNameIsStale(t *testing.T) {
	for name := range builtinCosts {
		if _, ok := starlark.Universe[name]; !ok {
			t.Errorf("builtinCosts has %s, which the universe does not", name)
		}
	}
	for _, v := range methodTypes {
		for name := range methodCosts[v.Type()] {
			if !slices.Contains(v.AttrNames(), name) {
				t.Errorf("methodCosts has %s.%s, which the library does not", v.Type(), name)
			}
		}
	}
}

// TestCharges_DeclarationErrorsShowNoHugeText: a declaration list holding a value
// huge as text is refused by its type, not its text.
func TestCharges_DeclarationErrorsShowNoHugeText(t *testing.T) {
	src := strings.Replace(header, "rules = [rule(", "def big():\n    x = [0]\n    for i in range(60):\n        x = [x, x]\n    return x\nrules = [big(), rule(", 1) + body
	_, err := Load("test", src)
	if err == nil || !strings.Contains(err.Error(), "rules[0]: got list, want rule(...)") {
		t.Errorf("got %v, want rules[0] refused by its type", err)
	}
}
