package starlarkalg

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// TestGrow_OneStepCannotBuildAHugeValue runs handlers that would build gigabytes in one
// call, each with a different operation: every one stops at the operation that would
// pass the budget, at its line, before building it.
func TestGrow_OneStepCannotBuildAHugeValue(t *testing.T) {
	cases := []struct{ name, code, at string }{
		{"string repetition", `x = "x" * (1 << 40)`, `"x" * (1 << 40)`},
		{"list repetition by a variable", "n = 1 << 30\n    x = [0] * n", "[0] * n"},
		{"repetition, int first", `x = (1 << 30) * "ab"`, `(1 << 30) * "ab"`},
		{"doubling with +", "x = \"ab\"\n    for i in range(64):\n        x = x + x", "x = x + x"},
		{"doubling with +=", "x = [1]\n    for i in range(64):\n        x += x", "x += x"},
		{"doubling with extend", "x = [1]\n    for i in range(64):\n        x.extend(x)", "x.extend(x)"},
		{"doubling with join", "x = \"ab\"\n    for i in range(64):\n        x = \"\".join([x, x])", `"".join([x, x])`},
		{"doubling with replace", "x = \"aa\"\n    for i in range(64):\n        x = x.replace(\"a\", \"aa\")", `x.replace("a", "aa")`},
		{"doubling with %", "x = \"ab\"\n    for i in range(64):\n        x = \"%s%s\" % (x, x)", `"%s%s" % (x, x)`},
		{"doubling with format", "x = \"ab\"\n    for i in range(64):\n        x = \"{}{}\".format(x, x)", `"{}{}".format(x, x)`},
		{"str of a shared list", "x = []\n    for i in range(64):\n        x = [x, x]\n    y = str(x)", "str(x)"},
		{"many large strings kept", "keep = []\n    for i in range(1000):\n        keep.append(\"x\" * 60000)", `"x" * 60000`},
		{"int squaring", "x = 3\n    for i in range(64):\n        x = x * x", "x * x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := header + strings.Replace(body, "    s.seen.append(m.sender)", "    "+c.code, 1)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			err := runErr(t, mustLoad(t, src))
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			line := strings.Count(src[:strings.Index(src, c.at)], "\n") + 1
			if e.Line != line || e.Handler != "on_PING" || !(strings.Contains(e.Msg, "the handler built more than 1048576 elements or bytes") || strings.Contains(e.Msg, "bits")) {
				t.Errorf("got %s (line %d), want the growth bound at line %d", e, e.Line, line)
			}
			// Two nodes each ran the handler: far below the gigabytes the code asks for.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
				t.Errorf("the run allocated %d MiB", grew>>20)
			}
		})
	}
}

// TestGrow_OrdinaryCodeRunsAsBefore: the checked operations compute what Starlark's
// own do, augmented assignments keep their meaning (a list's += extends it in place),
// and the budget is per call.
func TestGrow_OrdinaryCodeRunsAsBefore(t *testing.T) {
	code := `
    a = [1]
    b = a
    b += [2]
    n = 7
    n += 3
    n *= 2
    n %= 6
    q = "%d-%s" % (n, "x") + "{}".format(len(a)) + "/".join(["p", "q"]) + "aXa".replace("X", "-")
    r = [0] * 3 + 2 * [1]
    a.extend(r)
    if a != [1, 2, 0, 0, 0, 1, 1] or q != "2-x2p/qa-a" or str([1, "a"]) != '[1, "a"]' or n != 2:
        fail("got a=%s q=%s n=%d" % (a, q, n))
    s.seen.append(m.sender)
    big = "x" * 600000   # within one call's budget: and again at every call
`
	src := header + strings.Replace(body, "    s.seen.append(m.sender)\n", code, 1)
	if err := runErr(t, mustLoad(t, src)); err != nil {
		t.Fatal(err)
	}
}

// TestGrow_AugmentedAssignmentToAComputedTargetIsRefused: the check reads the target a
// second time, so a target that calls a function is refused at load, at its line.
func TestGrow_AugmentedAssignmentToAComputedTargetIsRefused(t *testing.T) {
	src := header + strings.Replace(body, "    s.seen.append(m.sender)", "    s.seen[len(s.seen) - 1] += m.sender", 1)
	_, err := Load("test", src)
	var e *Error
	if !errors.As(err, &e) || e.Line != strings.Count(src[:strings.Index(src, "s.seen[len")], "\n")+1 || !strings.Contains(e.Msg, "t = t + y") {
		t.Fatalf("got %v, want a load error at the += naming the rewrite", err)
	}
}

// TestGrow_EveryPlaceAnOperationCanBeIsChecked: the rewrite reaches + * % wherever the
// grammar puts them (a lambda, a comprehension, a default value, a dict entry, a
// slice, a conditional, a call's keyword argument, a nested function), computing what
// Starlark computes, and a repetition in each of them is checked.
func TestGrow_EveryPlaceAnOperationCanBeIsChecked(t *testing.T) {
	places := []struct{ name, code string }{
		{"lambda", "f = lambda a: a * K\n    v = f(\"ab\")"},
		{"comprehension", "v = [c * K for c in [\"ab\"]][0]"},
		{"comprehension condition", "v = [c for c in [\"ab\"] if len(c * K) > 0][0] * K"},
		{"default value", "def g(a = \"ab\" * K):\n        return a\n    v = g()"},
		{"dict entry", "v = {\"k\": \"ab\" * K}[\"k\"]"},
		{"slice bound", "v = (\"ab\" * K)[0:2 * K]"},
		{"conditional", "v = \"ab\" * K if True else \"\""},
		{"keyword argument", "v = dict(k = \"ab\" * K)[\"k\"]"},
		{"nested function", "def g():\n        return \"ab\" * K\n    v = g()"},
	}
	for _, p := range places {
		t.Run(p.name, func(t *testing.T) {
			for _, c := range []struct {
				k       string
				wantErr bool
			}{{"2", false}, {"(1 << 20)", true}} {
				code := "K = " + c.k + "\n    " + p.code + "\n    if len(v) != 2 * K:\n        fail(\"got %d\" % len(v))\n    s.seen.append(m.sender)"
				src := header + strings.Replace(body, "    s.seen.append(m.sender)", "    "+code, 1)
				err := runErr(t, mustLoad(t, src))
				if got := err != nil; got != c.wantErr || (err != nil && !strings.Contains(err.Error(), "the handler built more than")) {
					t.Errorf("K = %s: %v, want an error: %v", c.k, err, c.wantErr)
				}
			}
		})
	}
}
