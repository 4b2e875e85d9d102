package starlarkalg

import (
	"errors"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/teach-dist/playground/runtime/sim"
)

// loadBoth loads src with the rewrites that only save time and as written.
func loadBoth(t *testing.T, src string) (rewritten, written *sim.Spec) {
	t.Helper()
	rewritten = mustLoad(t, src)
	plain := DefaultLimits
	plain.AsWritten = true
	written, err := LoadLimits("test", src, plain)
	if err != nil {
		t.Fatalf("as written: %v", err)
	}
	return rewritten, written
}

// A rewritten call site does what the call as written does: the same values, the same
// error at the same line (a failing method lookup at another column), whatever its receiver and arguments are. Each case's
// on_request ends in fail(...) or an error, so the run's error shows the outcome.
func TestSites_BehaveAsTheCallsAsWritten(t *testing.T) {
	cases := []struct{ name, defs, body, want string }{
		{"max and min", "", `fail(repr([max(1, 2), max(2, 1), min(3, 1, 2), max([4, 5]), max(1, 2, key = lambda x: -x), min(1, 1.0), max(1.0, 1)]))`, "[2, 2, 1, 5, 1, 1, 1.0]"},
		{"len abs range", "", `fail(repr([len([1, 2]), abs(-3), list(range(3)), list(range(1, 7, 2))]))`, "[2, 3, [0, 1, 2], [1, 3, 5]]"},
		{"max of values that do not compare", "", `max(1, "a")`, `max: string > int not implemented`},
		{"range keeps its bound", "", `range(100000)`, "more than the 65536 allowed"},
		{"range of a string", "", `range("a")`, `range: for parameter 1: got string, want int`},
		{"append to the state's list", "", "s.seen.append(3)\n    s.seen.append(ctx.id(1))\n    fail(repr(s.seen))", "[3, 1]"},
		{"append to a frozen list", "FROZEN = []\n", "FROZEN.append(1)", "cannot append to frozen list"},
		{"append to what has none", "", "s.count.append(1)", "int has no .append field or method"},
		{"ctx method on another receiver", "def h(ctx, s):\n    ctx.rule(\"T-1\")\n", "h(s, s)", `no variable "rule"`},
		{"ctx method with a keyword it lacks", "", `ctx.rule("T-1", because = "x")`, `unexpected keyword argument "because"`},
		{"a keyword the fast path does not take", "", "ctx.set_timer(\"t\", after = 2)\n    fail(\"set\")", "set"},
		{"wrong argument", "", `ctx.id("x")`, "ctx.id: want a node index, got string"},
		{"calls inside calls", "def h(ctx, s, v):\n    s.seen.append(ctx.id(v))\n    return max(v, 0)\n", "ctx.send(h(ctx, s, 1), \"PING\", ts = max(h(ctx, s, 2), len(s.seen)))\n    s.seen.append(max(len(s.seen), h(ctx, s, 0)))\n    fail(repr(s.seen))", "[1, 2, 0, 2]"},
		{"shadowed builtin", "def max(a, b):\n    return 0\n", "fail(repr(max(3, 4)))", "0"},
		{"arguments in order", "def note(s, v):\n    s.seen.append(v)\n    return v\n", "ctx.send(note(s, 1), \"PING\", ts = note(s, 2))\n    fail(repr(s.seen))", "[1, 2]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := header + c.defs + "def init(setup):\n    return {\"count\": 0, \"seen\": []}\n" +
				"def on_request(ctx, s):\n    " + c.body + "\n"
			rewritten, written := loadBoth(t, src)
			got, want := runErr(t, rewritten), runErr(t, written)
			var g, w *Error
			if !errors.As(got, &g) || !errors.As(want, &w) || g.Line != w.Line || g.Msg != w.Msg || g.Rule != w.Rule {
				// The column of a failing attribute lookup may differ: it is made at the call.
				t.Fatalf("rewritten: %v\nas written: %v", got, want)
			}
			if !strings.Contains(got.Error(), c.want) {
				t.Errorf("got %v, want %q in it", got, c.want)
			}
		})
	}
}

// The Ricart-Agrawala template's handlers call no builtin with arguments once the
// sites are rewritten (only its own helper older, a Starlark function, is).
func TestSites_RewriteTheTemplatesBuiltinCalls(t *testing.T) {
	src, ok := Template("ricart-agrawala")
	if !ok {
		t.Fatal("no ricart-agrawala template")
	}
	f, err := fileOptions.Parse("ra.star", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	inlineHelpers(f)
	if sites := rewriteSites(f); len(sites) < 10 {
		t.Fatalf("%d sites, want at least 10", len(sites))
	}
	for _, s := range f.Stmts {
		d, ok := s.(*syntax.DefStmt)
		if !ok || !strings.HasPrefix(d.Name.Name, "on_") {
			continue
		}
		syntax.Walk(d, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
				if id, ok := c.Fn.(*syntax.Ident); !ok || id.Name != "older" {
					start, _ := c.Span()
					t.Errorf("%s: a call with arguments at %s", d.Name.Name, start)
				}
			}
			return true
		})
	}
}

// A handler that fires a rule and takes a max allocates only its own frame: the
// arguments of the builtin calls are not copied.
func TestSites_ABuiltinCallAllocatesNothing(t *testing.T) {
	spec := mustLoad(t, header+"def init(setup):\n    return {\"count\": 0, \"seen\": []}\n"+
		"def on_request(ctx, s):\n    ctx.rule(\"T-1\")\n    s.count = max(s.count, ctx.id(1)) + 0\n")
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

// ctx.rule's and ctx.send's sites place their values where unpackKeys would, worked
// out once per site; a shape unpackKeys refuses is not planned, so every call of it
// still goes through unpackKeys and its message.
func TestSites_PlannedCallsPlaceAsUnpackKeys(t *testing.T) {
	cases := []struct {
		call    string
		planned bool
	}{
		{`ctx.send(j, "X")`, true},
		{`ctx.send(j, "X", ts = t)`, true},
		{`ctx.send(j, type = "X", ts = t)`, true},
		{`ctx.send(to = j, type = "X", queue = q)`, true},
		{`ctx.send(j, "X", t, vec = q, arg = t)`, true},
		{`ctx.send(j, "X", to = j)`, false},
		{`ctx.send(j, ts = t)`, false},
		{`ctx.send(j, "X", bogus = t)`, false},
		{`ctx.send(j, "X", t, t, q, q, t)`, false},
		{`ctx.rule("A")`, true},
		{`ctx.rule("A", why = w)`, true},
		{`ctx.rule(label = "A", why = w)`, true},
		{`ctx.rule(why = w)`, false},
	}
	for _, c := range cases {
		t.Run(c.call, func(t *testing.T) {
			f, err := fileOptions.Parse("t.star", "def on_request(ctx, s, j, t, q, w):\n    "+c.call+"\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			sites := rewriteSites(f)
			if len(sites) != 1 {
				t.Fatalf("%d sites, want 1", len(sites))
			}
			s := sites[0]
			if s.planned != c.planned {
				t.Fatalf("planned %v, want %v", s.planned, c.planned)
			}
			names, required := sendArgs, 2
			if s.method == "rule" {
				names, required = ruleArgs, 1
			}
			vals := make([]starlark.Value, s.total-1) // after the receiver
			for k := range vals {
				vals[k] = starlark.MakeInt(100 + k)
			}
			want := make([]starlark.Value, len(names))
			npos := len(vals) - s.nkw
			err = unpackKeys("ctx."+s.method, vals[:npos], s.keys, vals[npos:], names, required, want)
			if c.planned != (err == nil) {
				t.Fatalf("unpackKeys: %v, but planned is %v", err, c.planned)
			}
			if !c.planned {
				return
			}
			got := make([]starlark.Value, len(names))
			s.place(vals, got)
			for k := range names {
				if got[k] != want[k] {
					t.Errorf("%s: placed %v, unpackKeys %v", names[k], got[k], want[k])
				}
			}
		})
	}
}
