package starlarkalg

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// header is the smallest valid declaration part of a source.
const header = `
title = "Test"
family = "mutex"
rules = [rule("T-1", lines = ["do it"], says = "does it")]
messages = [message("PING", "PING")]
`

// body is a working algorithm after header: on a request, P0 pings everybody.
const body = `
def init(setup):
    return {"count": 0, "seen": []}

def on_request(ctx, s):
    ctx.rule("T-1")
    s.count += 1
    for j in range(ctx.n):
        if j != ctx.self:
            ctx.send(j, "PING", ts = s.count)

def on_PING(ctx, s, m):
    s.seen.append(m.sender)
`

func mustLoad(t *testing.T, src string) *sim.Spec {
	t.Helper()
	spec, err := Load("test", src)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return spec
}

// runErr runs the spec on three nodes with one request from P0 and returns the run's
// error.
func runErr(t *testing.T, spec *sim.Spec) error {
	t.Helper()
	cfg := sim.Config{Spec: spec, IDs: []int{0, 1, 2}, Seed: 1, Until: 50,
		Network: sim.Network{DelayMin: 1, DelayMax: 1},
		Actions: []sim.Action{{At: 1, Do: sim.ActRequest, Node: 0, From: -1, To: -1}}}
	s, err := sim.New(cfg, nil)
	if err != nil {
		return err
	}
	return s.Run()
}

func TestLoad_RejectsBadSourcesAtTheirLine(t *testing.T) {
	cases := []struct {
		name, src string
		line      int    // 0: no line
		want      string // in the message
	}{
		{"syntax", header + "def init(setup)\n    return {}\n", 7, "got newline"},
		{"undefined name", header + "def init(setup):\n    return foo\n", 7, "undefined: foo"},
		{"load is not allowed", `load("x.star", "y")` + header, 1, "load"},
		{"error while loading", header + "x = 1 // 0\n", 6, "division by zero"},
		{"endless loop at load", header + "def f():\n    while True:\n        pass\nf()\n", 7, "the top level did more than 200000 units of work"}, // the while's line
		{"no init", header, 0, "init: missing"},
		{"init takes setup", header + "def init():\n    return {}\n", 6, "init: takes 0 parameters, want 1"},
		{"handler arity", header + body + "def on_timer(ctx, s):\n    pass\n", 19, "on_timer: takes 2 parameters, want 3"},
		{"no rules", `title = "T"` + "\nfamily = \"mutex\"\nmessages = [message(\"A\", \"A\")]\n" + body, 0, "at least one rule"},
		{"bad family", strings.Replace(header, `"mutex"`, `"queue"`, 1) + body, 0, `family: "queue" is unknown`},
		{"duplicate rule", header + `rules = rules + [rule("T-1", lines = ["x"], says = "x")]` + "\n" + body, 6, "cannot reassign global rules"},
		{"message label too long", strings.Replace(header, `"PING", "PING"`, `"PING", "PINGPONG"`, 1) + body, 5, "at most 5 characters"},
		{"unknown rule argument", strings.Replace(header, `says = "does it"`, `says = "does it", colour = "red"`, 1) + body, 4, `unknown argument "colour"`},
		{"bad param kind", header + `params = [param("x", "float")]` + "\n" + body, 6, `kind "float" is unknown`},
		{"bad defaults", header + `defaults = {"nodes": 1}` + "\n" + body, 0, "out of range"},
		{"recursion", header + "def f(n):\n    return f(n)\nf(1)\n", 7, "called recursively"},
		{"range too long", header + "x = list(range(1000000))\n", 6, "range: 1000000 elements, more than the 65536 allowed"},
		{"too big", header + body + strings.Repeat("#", DefaultLimits.Source), 0, "bytes, more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load("test", c.src)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Line != c.line || !strings.Contains(e.Msg, c.want) {
				t.Errorf("got line %d %q, want line %d and %q", e.Line, e.Msg, c.line, c.want)
			}
		})
	}
}

// A script's mistakes during a run stop the run with an error naming the node, the
// handler, the last rule it fired and the line; the kernel never panics.
func TestRun_AScriptErrorFailsTheRunNamingRuleAndLine(t *testing.T) {
	lineOf := func(src, needle string) int {
		return strings.Count(src[:strings.Index(src, needle)], "\n") + 1
	}
	cases := []struct {
		name, body, at, want, rule string
		handler                    string
	}{
		{"init fails", strings.Replace(body, `return {"count": 0`, `return {"count": 1 // 0`, 1), `return {"count": 1 // 0`, "division by zero", "", "init"},
		{"init returns no dict", strings.Replace(body, `return {"count": 0, "seen": []}`, `return [0]`, 1), "", "returned list, want a dict", "", "init"},
		{"runtime error", strings.Replace(body, "s.count += 1", "s.count += 1 // 0", 1), "s.count += 1 // 0", "division by zero", "T-1", "on_request"},
		{"misspelt variable", strings.Replace(body, "s.count += 1", "s.cuont += 1", 1), "s.cuont", `no variable "cuont"`, "T-1", "on_request"},
		{"undeclared rule", strings.Replace(body, `ctx.rule("T-1")`, `ctx.rule("T-9")`, 1), `ctx.rule("T-9")`, `"T-9" is not one of the declared rules`, "", "on_request"},
		{"undeclared message", strings.Replace(body, `"PING", ts`, `"PONG", ts`, 1), `"PONG", ts`, `"PONG" is not one of the declared messages`, "T-1", "on_request"},
		{"send to nobody", strings.Replace(body, "ctx.send(j,", "ctx.send(j + 5,", 1), "ctx.send(j + 5", "node index 6 out of range", "T-1", "on_request"},
		// The step bound is reported at the instruction that ran last: one of the loop's
		// lines (the test at its head carries the while's line, placeLoopHeads).
		{"endless loop", strings.Replace(body, "    s.seen.append(m.sender)", "    while True:\n        s.seen.append(m.sender)\n        s.seen.pop()", 1), "while True", "the handler did more than 100000 units of work", "", "on_PING"},
		{"state too big", strings.Replace(body, "    s.seen.append(m.sender)", "    s.seen = list(range(5000))", 1), "", "more than 4096 values", "", "on_PING"},
		{"not data in the state", strings.Replace(body, "    s.seen.append(m.sender)", "    s.seen = ctx", 1), "", "a ctx cannot be kept in the state", "", "on_PING"},
		{"string too long", strings.Replace(body, "    s.seen.append(m.sender)", `    s.seen = "x" * 5000`, 1), "", "a string of 5000 bytes", "", "on_PING"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := header + c.body
			err := runErr(t, mustLoad(t, src))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			line := 0
			if c.at != "" {
				line = lineOf(src, c.at)
			}
			if c.name == "endless loop" && e.Line > line && e.Line <= line+2 {
				line = e.Line // the loop's body
			}
			if !strings.Contains(e.Msg, c.want) || e.Rule != c.rule || e.Handler != c.handler || (c.at != "" && e.Line != line) {
				t.Errorf("got %s (line %d), want %q in %s after rule %q at line %d", e, e.Line, c.want, c.handler, c.rule, line)
			}
		})
	}
}

// Globals are frozen once the module is loaded: a handler cannot keep anything between
// steps outside the state, so a node is a pure function of its state and input.
func TestRun_GlobalsCannotCarryStateBetweenSteps(t *testing.T) {
	src := header + strings.Replace(body, "    s.seen.append(m.sender)", "    MEMORY.append(1)", 1) + "MEMORY = []\n"
	err := runErr(t, mustLoad(t, src))
	if err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Fatalf("got %v, want an error about a frozen list", err)
	}
}

// Clone is deep: a clone's lists and dicts are its own, and it encodes as its original.
func TestNode_CloneIsDeepAndEncodesAlike(t *testing.T) {
	spec := mustLoad(t, header+body+"def on_release(ctx, s):\n    s.seen.append({\"k\": [1, 2]})\n")
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	a := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	a.Step(ctx, &sim.Input{Kind: sim.Release})
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	b := a.Clone()
	if got, want := string(sim.EncodeState(b)), string(sim.EncodeState(a)); got != want {
		t.Fatalf("clone encodes %s, original %s", got, want)
	}
	ctx.Reset(0)
	b.Step(ctx, &sim.Input{Kind: sim.Release})
	if got, want := string(sim.EncodeState(a)), `{"count":0,"seen":"[{\"k\": [1, 2]}]"}`; got != want {
		t.Errorf("the original changed with its clone: %s, want %s", got, want)
	}
	if got := string(sim.EncodeState(b)); !strings.Contains(got, `[{\"k\": [1, 2]}, {\"k\": [1, 2]}]`) {
		t.Errorf("clone after a step: %s", got)
	}
}

// Params are decoded by algorithms/params from the script's declarations: the same
// checks and the same wording as a Go algorithm's.
func TestParams_AreCheckedAsGoAlgorithmsParams(t *testing.T) {
	src := header + `params = [
    param("coordinator", "node", default = "highest", doc = "who"),
    param("hop", "int", default = "1", min = 1, max = 9),
    param("mode", "choice", default = '"a"', choices = ["a", "b"]),
    param("fd", "object", fields = [param("period", "int", default = "0", min = 0)]),
]
` + body
	spec := mustLoad(t, src)
	ids := []int{3, 5, 7}
	for _, c := range []struct{ raw, want string }{
		{`{"coordinator": 4}`, "params.coordinator: 4 is not a node id (ids: 3 5 7)"},
		{`{"hop": 10}`, "params.hop: must be"},
		{`{"mode": "c"}`, `params.mode: "c" is unknown (allowed: "a", "b")`},
		{`{"fd": {"period": -1}}`, "params.fd.period"},
		{`{"colour": 1}`, "params.colour: unknown field"},
	} {
		_, err := spec.ParseParams([]byte(c.raw), ids)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.raw, err, c.want)
		}
	}
	p, err := spec.ParseParams([]byte(`{"hop": 3, "fd": {"period": 4}}`), ids)
	if err != nil {
		t.Fatal(err)
	}
	pv := p.(*paramsValue)
	want := map[string]string{"coordinator": "7", "hop": "3", "mode": `"a"`}
	for name, v := range want {
		got, _ := pv.Attr(name)
		if got.String() != v {
			t.Errorf("params.%s = %s, want %s", name, got, v)
		}
	}
	fd, _ := pv.Attr("fd")
	if period, _ := fd.(*paramsValue).Attr("period"); period.String() != "4" {
		t.Errorf("params.fd.period = %s, want 4", period)
	}
}

// A session budgets its savepoints by sim.Footprint: a script's big state counts.
func TestNode_FootprintGrowsWithTheState(t *testing.T) {
	spec := mustLoad(t, header+body+"def on_release(ctx, s):\n    s.seen = [\"x\" * 100] * 1000\n")
	setup := &sim.Setup{IDs: []int{0, 1, 2}}
	nd := spec.New(0, setup)
	small := nd.(sim.Footprinter).Footprint()
	ctx := sim.NewContext(0, setup.IDs)
	nd.Step(ctx, &sim.Input{Kind: sim.Release})
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	if big := nd.(sim.Footprinter).Footprint(); big < 100_000 || small > 1000 {
		t.Errorf("footprint %d bytes with 1000 strings of 100 bytes, %d with none", big, small)
	}
}

// A variable that takes a global's list gets a copy of its own after the step: the
// global is frozen and a clone's copy would not be, so without the copy a run and its
// snapshot would part ways at the next append.
func TestState_AGlobalListBecomesTheProcesssOwn(t *testing.T) {
	src := header + `
START = [7]
def init(setup):
    return {"q": START, "d": {}}

def on_request(ctx, s):
    s.q.append(len(s.q))
    s.d = EMPTY

def on_release(ctx, s):
    s.d["k"] = 1

EMPTY = {}
`
	spec := mustLoad(t, src)
	setup := &sim.Setup{IDs: []int{0, 1}}
	nd := spec.New(0, setup)
	ctx := sim.NewContext(0, setup.IDs)
	for _, kind := range []sim.InputKind{sim.Request, sim.Request, sim.Release} {
		ctx.Reset(0)
		nd.Step(ctx, &sim.Input{Kind: kind})
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
	}
	if got, want := string(sim.EncodeState(nd)), `{"d":"{\"k\": 1}","q":[7,1,2]}`; got != want {
		t.Errorf("state %s, want %s", got, want)
	}
}

// The error a student reads names where and when.
func TestError_Wording(t *testing.T) {
	for _, c := range []struct {
		err  Error
		want string
	}{
		{Error{Algorithm: "my-ra", Handler: "on_REQUEST", Node: 3, Rule: "RH1", Line: 42, Col: 9, Msg: "boom"},
			"my-ra:42:9: P3 on_REQUEST (after rule RH1): boom"},
		{Error{Algorithm: "my-ra", Handler: "on_start", Node: 0, Line: 7, Col: 5, Msg: "boom"},
			"my-ra:7:5: P0 on_start (before any rule): boom"},
		{Error{Algorithm: "my-ra", Msg: "init: missing"}, "my-ra: init: missing"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

// Without encode the inspector shows every variable, the declared ones first; an error
// in encode shows in the inspector, it does not stop the run.
func TestEncode_DefaultOrderAndErrors(t *testing.T) {
	setup := &sim.Setup{IDs: []int{4, 9}}
	for _, c := range []struct{ name, src, want string }{
		{"declared first", header + `vars = [var("seen"), var("count")]` + "\n" + body,
			`{"seen":[],"count":0}`},
		{"by name", header + body, `{"count":0,"seen":[]}`},
		{"encode", header + body + "def encode(ctx, s):\n    return [(\"me\", ctx.self_id), (\"pairs\", [(1, 2)]), (\"d\", {\"b\": None})]\n",
			`{"me":9,"pairs":[[1,2]],"d":"{\"b\": None}"}`},
		{"encode fails", header + body + "def encode(ctx, s):\n    return [(\"x\", 1 // 0)]\n",
			`{"error":"test:20:21: P9 encode (before any rule): floored division by zero"}`},
		{"encode acts", header + body + "def encode(ctx, s):\n    ctx.enter()\n    return []\n",
			`{"error":"test:20:14: P9 encode (before any rule): ctx.enter: not allowed here (encode and waiting_for only look)"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			nd := mustLoad(t, c.src).New(1, setup)
			if got := string(sim.EncodeState(nd)); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// A param of its own shape (an object without fields) reaches the source as data, in
// the document's order; what JSON cannot say as Starlark data is a param error.
func TestLoad_ObjectParamOfItsOwnShape(t *testing.T) {
	src := `
title = "t"
family = "mutex"
rules = [rule("X-1", lines = ["x"], says = "x")]
messages = [message("M", "M")]
params = [param("sets", "object", doc = "any shape")]
def init(setup):
    return {"seen": repr(setup.params.sets)}
`
	spec, err := Load("shape", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.Params) != 1 || spec.Params[0].Kind != sim.ParamObject || spec.Params[0].Fields != nil {
		t.Fatalf("params %+v", spec.Params)
	}
	for _, c := range []struct{ raw, want, err string }{
		{`{}`, `None`, ""},
		{`{"sets": {"2": [2, 1], "1": [1, true, null, "x"]}}`, `{"2": [2, 1], "1": [1, True, None, "x"]}`, ""},
		{`{"sets": {"1": [1.5]}}`, "", "params.sets: 1.5 is not an integer"},
		{`{"sets": {"1": [1], "1": [2]}}`, "", `params.sets: "1": given twice`},
		{`{"sets": [` + strings.Repeat("1,", 5000) + `1]}`, "", "params.sets: more than 4096 values"},
	} {
		p, err := spec.ParseParams([]byte(c.raw), []int{1, 2})
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %q", c.raw, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		node := spec.New(0, &sim.Setup{IDs: []int{1, 2}, Params: p})
		var w sim.StateWriter
		node.Encode(&w)
		if got := string(w.Bytes()); !strings.Contains(got, strconv.Quote(c.want)) {
			t.Errorf("%s: the source sees %s, want %s", c.raw, got, c.want)
		}
	}
}
