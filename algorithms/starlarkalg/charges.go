package starlarkalg

import (
	"fmt"
	"math/bits"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// What one builtin call may cost. The interpreter counts one step per instruction, but
// one instruction can call a builtin that visits a million elements (max(x)), builds
// them (list(range(n)), zip(*x)) or compares two values element by element to any
// depth (x == y). So every builtin and every method of Starlark's own values that a
// source can reach is charged before it runs, by a cost computed from its receiver and
// arguments (the tables below), in two budgets of the running call:
//
//   - work, in the thread's step counter: a unit is a step, an element a builtin visits
//     (compares, hashes, iterates), 16 it copies, 64 bytes it scans, and insertUnits
//     an entry it adds to a dict or set; a handler call does at most Limits.Steps
//     units of steps and builtins' work together (LoadSteps to load);
//   - memory, in the call's growBudget: the elements or bytes a builtin builds, at most
//     Limits.Grow in all (grow.go).
//
// A cost is an upper bound computed without doing the work: lengths, and the size of
// nested values counted no further than what is left of the budget, so measuring never
// costs more than the budget either. A builtin or method whose work and result are
// bounded whatever its arguments (len, type, append) has a nil cost and is left as it
// is. A name missing from the tables cannot be reached: a universe builtin that is
// not in builtinCosts is predeclared as a refusal, and a method not in methodCosts is
// refused when it is looked up (TestCharges_EveryBuiltinAndMethodIsChargedOrRemoved
// fails on either, so that a library update is looked at).
//
// Some costs are paid in the instructions themselves, which no builtin call reaches:
// the loader routes comparisons, slices, f(*x), f(**x), the operators that build
// (grow.go) and dict keys and indexes ($key, below) through checks too.
//
// Methods are reached through attributes, so the loader routes every x.name whose name
// is a method of a Starlark type through callMethod (a call) or attrOf (a method
// taken as a value), which charge before calling; getattr does the same.

// cost is what a call of a builtin or method will do at most: units of work, and
// elements or bytes it builds.
type cost func(t *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (work, elems int)

// bytesPerUnit is how many bytes a builtin scans (compares, copies, searches) for one
// unit of work.
const bytesPerUnit = 64

// insertUnits is what adding one entry to a dict or set costs (hashing it, allocating
// its slot), in units of work.
const insertUnits = 8

// builtinCosts are the universe's builtins. The ones with a nil cost are left as
// they are; the others are replaced by a builtin that pays first (growBuiltins), or
// by one of this package's own (range, max, min, print, getattr, str, repr, int).
var builtinCosts = map[string]cost{
	"abs":   nil, // ints have at most maxIntBits bits
	"any":   iterates(0),
	"all":   iterates(0),
	"bool":  nil,
	"bytes": bytesCost,
	"chr":   nil,
	"dict":  dictCost,
	"dir":   nil, // the attributes of a type (or a state's variables)
	"enumerate": func(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
		n := lenArg(t, args, 0)
		return n, 3 * n
	},
	"fail":     printed,
	"float":    scans(0),
	"getattr":  nil, // this package's: methods come charged (attrOf)
	"hasattr":  nil,
	"hash":     hashCost,
	"int":      nil, // this package's: a string of at most maxIntText bytes (intOf)
	"len":      nil,
	"list":     copies(0),
	"max":      compares,
	"min":      compares,
	"ord":      scans(0),
	"print":    nil, // this package's: does nothing
	"range":    nil, // this package's: at most MaxRange elements, and lazy
	"repr":     printed,
	"reversed": copies(0),
	"set":      hashes,
	"sorted":   sortCost,
	"str":      printed,
	"tuple":    copies(0),
	"type":     nil,
	"zip":      zipCost,
}

// methodCosts are the methods of Starlark's own values, by the type's name.
var methodCosts = map[string]map[string]cost{
	"string": {
		"capitalize":     rewrites,
		"codepoint_ords": nil, // lazy: what consumes them pays
		"codepoints":     nil,
		"count":          searches,
		"elem_ords":      nil,
		"elems":          nil,
		"endswith":       scansArgs,
		"find":           searches,
		"format":         formatCost,
		"index":          searches,
		"isalnum":        scansRecv,
		"isalpha":        scansRecv,
		"isdigit":        scansRecv,
		"islower":        scansRecv,
		"isspace":        scansRecv,
		"istitle":        scansRecv,
		"isupper":        scansRecv,
		"join":           joinCost,
		"lower":          rewrites,
		"lstrip":         stripCost,
		"partition":      searches,
		"removeprefix":   scansArgs,
		"removesuffix":   scansArgs,
		"replace":        replaceCost,
		"rfind":          searches,
		"rindex":         searches,
		"rpartition":     searches,
		"rsplit":         splitCost,
		"rstrip":         stripCost,
		"split":          splitCost,
		"splitlines":     splitLinesCost,
		"startswith":     scansArgs,
		"strip":          stripCost,
		"title":          rewrites,
		"upper":          rewrites,
	},
	"list": {
		"append": nil,
		"clear":  nil,
		"extend": extendCost,
		"index":  searchesElems,
		"insert": shifts,
		"pop":    shifts,
		"remove": searchesElems,
	},
	"dict": {
		"clear": shifts,
		"get":   hashesKey,
		"items": func(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
			n := shallow(recv)
			return n, 3 * n
		},
		"keys": func(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
			n := shallow(recv)
			return n, n
		},
		"pop":        hashesKey,
		"popitem":    nil,
		"setdefault": hashesKey,
		"update":     dictCost,
		"values": func(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
			n := shallow(recv)
			return n, n
		},
	},
	"set": {
		"add":                  hashesKey,
		"clear":                shifts,
		"difference":           setOp,
		"discard":              hashesKey,
		"intersection":         setOp,
		"issubset":             setOp,
		"issuperset":           setOp,
		"pop":                  nil,
		"remove":               hashesKey,
		"symmetric_difference": setOp,
		"union":                setOp,
		"update":               setOp,
	},
	"bytes": {
		"elems": nil,
	},
}

// methodTypes are values of each type in methodCosts, to ask for their methods.
var methodTypes = []starlark.HasAttrs{starlark.String(""), starlark.NewList(nil), starlark.NewDict(0), starlark.NewSet(0), starlark.Bytes("")}

// builtinMethods are the names of every method of Starlark's own values, whether charged
// or not: the loader routes each x.name with one of these names through callMethod or
// attrOf.
var builtinMethods = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range methodTypes {
		for _, name := range v.AttrNames() {
			m[name] = true
		}
	}
	return m
}()

// pay charges a cost to the running call: memory first, then work.
func pay(t *starlark.Thread, work, elems int, op string) error {
	if elems > 0 {
		if err := charge(t, elems, op); err != nil {
			return err
		}
	}
	if work > 0 {
		return spend(t, work, op)
	}
	return nil
}

// spend takes n units of work from the running call, in its step counter.
func spend(t *starlark.Thread, n int, op string) error {
	b := budgetOf(t)
	if b == nil {
		return fmt.Errorf("%s: no work budget (an internal error)", op)
	}
	if uint64(n) > b.steps-min(t.Steps, b.steps) {
		return fmt.Errorf("%s: %s did more than %d units of work (this call would add at least %d: a unit is a step, an element a builtin visits, %d it copies, %d bytes it scans, %d an entry it adds to a dict or set)", op, b.who, b.steps, n, copyPerUnit, bytesPerUnit, insertUnits)
	}
	t.Steps += uint64(n)
	return nil
}

// workLeft is how many units the running call may still spend, plus one: where a
// measure may stop counting.
func workLeft(t *starlark.Thread) int {
	b := budgetOf(t)
	if b == nil || t.Steps >= b.steps {
		return 1
	}
	return int(min(b.steps-t.Steps, 1<<40)) + 1
}

// maxDepth is how deep weight looks into nested values; deeper counts as too heavy.
const maxDepth = 64

// weight is about the work of visiting v entirely (comparing it, hashing it): one
// unit per value, nested values counted as often as they are reached (x = [x, x]
// doubles it), strings by their bytes; counted no further than limit.
func weight(v starlark.Value, limit int) int {
	n := 0
	var walk func(v starlark.Value, depth int)
	walk = func(v starlark.Value, depth int) {
		if n >= limit {
			return
		}
		if depth > maxDepth {
			n = limit
			return
		}
		n++
		switch v := v.(type) {
		case starlark.String:
			n += len(v) / bytesPerUnit
		case starlark.Bytes:
			n += len(v) / bytesPerUnit
		case starlark.Int:
			if _, ok := v.Int64(); !ok {
				n += v.BigInt().BitLen() / bytesPerUnit
			}
		case *starlark.List:
			for k := 0; k < v.Len() && n < limit; k++ {
				walk(v.Index(k), depth+1)
			}
		case starlark.Tuple:
			for k := 0; k < len(v) && n < limit; k++ {
				walk(v[k], depth+1)
			}
		case *starlark.Dict:
			for k, x := range v.Entries() {
				if n >= limit {
					return
				}
				walk(k, depth+1)
				walk(x, depth+1)
			}
		case *starlark.Set:
			for x := range v.Elements() {
				if n >= limit {
					return
				}
				walk(x, depth+1)
			}
		case starlark.Sequence: // range, string.elems: flat
			n += v.Len()
		}
	}
	walk(v, 0)
	return min(n, limit)
}

// elemsWeight is the weight of the elements of an iterable (what comparing each of
// them with something costs), counted no further than limit; an iterable of unknown
// length is counted as it is iterated.
func elemsWeight(v starlark.Value, limit int) int {
	switch v := v.(type) {
	case *starlark.List, starlark.Tuple, *starlark.Dict, *starlark.Set:
		return max(weight(v, limit+1)-1, 0) // the container itself is not compared
	case starlark.Sequence:
		return v.Len()
	}
	return iterLen(v, limit)
}

// iterLen is the number of elements of an iterable (0 for anything else), counted no
// further than limit for one whose length is known only by iterating it.
func iterLen(v starlark.Value, limit int) int {
	switch v := v.(type) {
	case starlark.Sequence:
		return v.Len()
	case starlark.Iterable:
		it := v.Iterate()
		defer it.Done()
		var x starlark.Value
		n := 0
		for n < limit && it.Next(&x) {
			n++
		}
		return n
	}
	return 0
}

// lenArg is iterLen of args[k] (0 when it is missing).
func lenArg(t *starlark.Thread, args starlark.Tuple, k int) int {
	if k >= len(args) {
		return 0
	}
	return iterLen(args[k], workLeft(t))
}

// strLen is the length of a string or bytes, 0 for anything else.
func strLen(v starlark.Value) int {
	switch v := v.(type) {
	case starlark.String:
		return len(v)
	case starlark.Bytes:
		return len(v)
	}
	return 0
}

// The costs, by kind.

// iterates: visits every element of args[k].
func iterates(k int) cost {
	return func(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
		return lenArg(t, args, k), 0
	}
}

// copies: builds a list or tuple of the elements of args[k], copying each (a unit per
// copyPerUnit of them).
func copies(k int) cost {
	return func(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
		n := lenArg(t, args, k)
		return n / copyPerUnit, n
	}
}

// copyPerUnit is how many elements a builtin copies for one unit of work.
const copyPerUnit = 16

// scans: reads the string args[k].
func scans(k int) cost {
	return func(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
		if k >= len(args) {
			return 0, 0
		}
		return strLen(args[k]) / bytesPerUnit, 0
	}
}

// scansRecv: reads the receiver.
func scansRecv(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
	return strLen(recv) / bytesPerUnit, 0
}

// scansArgs: reads the arguments (a prefix, or a tuple of them).
func scansArgs(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	return weight(args, workLeft(t)), 0
}

// searches: looks for the argument in the receiver (find, count, partition ...).
func searches(_ *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	n := strLen(recv)
	if len(args) > 0 {
		n += strLen(args[0])
	}
	return n / bytesPerUnit, 3
}

// rewrites: builds a string as long as the receiver (upper, title ...).
func rewrites(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
	n := strLen(recv)
	return n / bytesPerUnit, n
}

// printed: formats its arguments (str, repr, fail), as long as their text.
func printed(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int, int) {
	n := 0
	for _, a := range args {
		n += deepSize(a, t)
	}
	for _, kv := range kwargs {
		n += deepSize(kv[1], t)
	}
	return n / bytesPerUnit, n
}

// compares: min and max compare every element (the arguments, or the elements of
// the one argument).
func compares(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 1 {
		return elemsWeight(args[0], workLeft(t)), 0
	}
	return elemsWeight(args, workLeft(t)), 0
}

// hashes: set(x) hashes every element of x and adds it.
func hashes(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	n := lenArg(t, args, 0)
	return elemsWeight(args[0], workLeft(t)) + insertUnits*n, n
}

// hashCost: hash(s) decodes every character of s (a unit per 8 bytes).
func hashCost(_ *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	return strLen(args[0]) / 8, 0
}

// hashesKey: looks up or adds one key (dict.get, set.add ...).
func hashesKey(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	return weight(args[0], workLeft(t)) + insertUnits, 1
}

// searchesElems: compares an argument with the receiver's elements (list.index,
// list.remove), and may shift them.
func searchesElems(t *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
	return elemsWeight(recv, workLeft(t)) + shallow(recv)/copyPerUnit, 0
}

// shifts: moves or clears the receiver's elements (insert, pop, clear).
func shifts(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
	return shallow(recv) / copyPerUnit, 0
}

// sortCost: sorting n elements compares about n log n pairs (the key function, when
// there is one, pays for its own calls).
func sortCost(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	n := lenArg(t, args, 0)
	w := elemsWeight(args[0], workLeft(t))
	return w * (bits.Len(uint(n)) + 1), n
}

// zipCost: zip builds as many tuples as its shortest argument has elements, each as
// long as it has arguments.
func zipCost(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	rows := -1
	for k := range args {
		n := lenArg(t, args, k)
		if rows < 0 || n < rows {
			rows = n
		}
	}
	cells := rows * len(args)
	return cells, cells + rows
}

// dictCost: dict(x, **kw) and d.update(x, **kw) hash every key and build an entry for
// each.
func dictCost(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int, int) {
	w, n := 0, len(kwargs)
	if len(args) > 0 {
		w += elemsWeight(args[0], workLeft(t))
		n += lenArg(t, args, 0)
	}
	return w + insertUnits*n, 2 * n
}

// setOp: a set operation visits the receiver and hashes every element of the
// arguments, and builds at most all of them.
func setOp(t *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	w, n := shallow(recv), shallow(recv)
	for k := range args {
		w += elemsWeight(args[k], workLeft(t))
		n += lenArg(t, args, k)
	}
	return w + insertUnits*n, n
}

// bytesCost: bytes(s) copies a string; bytes(x) builds one byte per element.
func bytesCost(t *starlark.Thread, _ starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) == 0 {
		return 0, 0
	}
	if n := strLen(args[0]); n > 0 {
		return n / bytesPerUnit, n
	}
	n := lenArg(t, args, 0)
	return n, n
}

// stripCost: strip may look up every character of the receiver among chars.
func stripCost(_ *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	chars := 1
	if len(args) > 0 {
		chars += strLen(args[0])
	}
	return (strLen(recv) + 1) * chars / bytesPerUnit, 0
}

func splitCost(_ *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	s := string(recv.(starlark.String))
	pieces := len(s)/2 + 1 // on white space: at most every other byte starts one
	if len(args) > 0 {
		if sep, ok := args[0].(starlark.String); ok && len(sep) > 0 {
			pieces = strings.Count(s, string(sep)) + 1
		}
	}
	return len(s)/bytesPerUnit + pieces, pieces
}

func splitLinesCost(_ *starlark.Thread, recv starlark.Value, _ starlark.Tuple, _ []starlark.Tuple) (int, int) {
	s := string(recv.(starlark.String))
	pieces := strings.Count(s, "\n") + strings.Count(s, "\r") + 1
	return len(s)/bytesPerUnit + pieces, pieces
}

func joinCost(t *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) != 1 {
		return 0, 0
	}
	sep := strLen(recv)
	// the elements' lengths (the method refuses anything but strings), counted no
	// further than the memory budget allows
	limit, count, n := 1, 0, 0
	if b := budgetOf(t); b != nil {
		limit = b.left + 1
	}
	if seq, ok := args[0].(starlark.Indexable); ok {
		for k := 0; k < seq.Len() && n < limit; k++ {
			n += sep + strLen(seq.Index(k))
			count++
		}
	} else if it, ok := args[0].(starlark.Iterable); ok {
		iter := it.Iterate()
		defer iter.Done()
		var x starlark.Value
		for n < limit && iter.Next(&x) {
			n += sep + strLen(x)
			count++
		}
	}
	return count + n/bytesPerUnit, n
}

func replaceCost(_ *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	s := string(recv.(starlark.String))
	if len(args) < 2 {
		return 0, 0
	}
	old, ok1 := args[0].(starlark.String)
	repl, ok2 := args[1].(starlark.String)
	if !ok1 || !ok2 {
		return 0, 0
	}
	count := strings.Count(s, string(old))
	if len(old) == 0 {
		count = len(s) + 1
	}
	n := len(s) + count*len(repl)
	return n / bytesPerUnit, n
}

func formatCost(t *starlark.Thread, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) (int, int) {
	s := string(recv.(starlark.String))
	most := 0
	for _, a := range args {
		most = max(most, deepSize(a, t))
	}
	for _, kv := range kwargs {
		most = max(most, deepSize(kv[1], t))
	}
	n := len(s) + strings.Count(s, "{")*most
	return n / bytesPerUnit, n
}

func extendCost(t *starlark.Thread, recv starlark.Value, args starlark.Tuple, _ []starlark.Tuple) (int, int) {
	if len(args) != 1 {
		return 0, 0
	}
	n := lenArg(t, args, 0)
	return n / copyPerUnit, shallow(recv) + n
}

// chargeCall pays a builtin's or method's cost.
func chargeCall(t *starlark.Thread, c cost, op string, recv starlark.Value, args starlark.Tuple, kwargs []starlark.Tuple) error {
	if c == nil {
		return nil
	}
	work, elems := c(t, recv, args, kwargs)
	return pay(t, work, elems, op)
}

// methodsOf is the cost table of a value of one of Starlark's own types, or nil (this
// package's values: ctx, state, message ...).
func methodsOf(recv starlark.Value) map[string]cost {
	switch recv.(type) {
	case starlark.String, *starlark.List, *starlark.Dict, *starlark.Set, starlark.Bytes:
		return methodCosts[recv.Type()]
	}
	return nil
}

// lookup is recv.name and its cost; an error when recv has no such field or method, or
// has a method missing from methodCosts (which cannot be reached).
func lookup(recv starlark.Value, name string) (starlark.Value, cost, error) {
	ha, ok := recv.(starlark.HasAttrs)
	if !ok {
		return nil, nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	costs := methodsOf(recv)
	c, known := costs[name]
	if costs != nil && !known {
		if fn, _ := ha.Attr(name); fn != nil {
			return nil, nil, fmt.Errorf("%s.%s is not available to a source", recv.Type(), name)
		}
	}
	fn, err := ha.Attr(name)
	if err != nil {
		return nil, nil, err
	}
	if fn == nil {
		return nil, nil, fmt.Errorf("%s has no .%s field or method", recv.Type(), name)
	}
	return fn, c, nil
}

// callMethod is recv.name(args...), charged first.
func callMethod(t *starlark.Thread, recv starlark.Value, name string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	fn, c, err := lookup(recv, name)
	if err != nil {
		return nil, err
	}
	if err := chargeCall(t, c, "."+name+"()", recv, args, kwargs); err != nil {
		return nil, err
	}
	return starlark.Call(t, fn, args, kwargs)
}

// attrOf is recv.name as a value: a method of Starlark's own values comes as a builtin
// that charges each call.
func attrOf(recv starlark.Value, name string) (starlark.Value, error) {
	fn, c, err := lookup(recv, name)
	if err != nil || c == nil {
		return fn, err
	}
	return starlark.NewBuiltin(name, func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := chargeCall(t, c, "."+name+"()", recv, args, kwargs); err != nil {
			return nil, err
		}
		return starlark.Call(t, fn, args, kwargs)
	}), nil
}

// Names of the checking builtins the loader calls in place of comparisons and
// argument unpacking (grow.go's rewriter).
const (
	starName     = "$star"
	starStarName = "$starstar"
)

// attrPrefix names the readers of x.name for a method's name: x.count is read as
// $.count[x] (an index, which allocates nothing: s.count may be a state variable read
// in every step).
const attrPrefix = "$."

// attrValuePrefix names the predeclared readers; the file's globals $.name hold them
// (a def reads a global by its index, a predeclared name by a lookup in a map).
const attrValuePrefix = "$.v."

// attrReader is $.name: indexed by x, it is x.name, a method of Starlark's own values
// coming as a builtin that charges its calls (attrOf).
type attrReader struct{ name string }

func (a *attrReader) String() string        { return attrPrefix + a.name }
func (a *attrReader) Type() string          { return "attribute" }
func (a *attrReader) Freeze()               {}
func (a *attrReader) Truth() starlark.Bool  { return true }
func (a *attrReader) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: attribute") }
func (a *attrReader) Get(x starlark.Value) (starlark.Value, bool, error) {
	if ha, ok := x.(starlark.HasAttrs); ok && methodsOf(x) == nil {
		// this package's values (a state variable named count): a field
		v, err := ha.Attr(a.name)
		if err == nil && v == nil {
			err = fmt.Errorf("%s has no .%s field or method", x.Type(), a.name)
		}
		return v, err == nil, err
	}
	v, err := attrOf(x, a.name)
	return v, err == nil, err
}

// compareNames are the checking builtins of the comparisons.
var compareNames = map[syntax.Token]string{
	syntax.EQL: "$eq", syntax.NEQ: "$ne", syntax.LT: "$lt", syntax.LE: "$le", syntax.GT: "$gt", syntax.GE: "$ge",
	syntax.IN: "$in", syntax.NOT_IN: "$notin",
}

// keyName is the global that holds the predeclared keyValue, a keyProbe.
const (
	keyName  = "$key"
	keyValue = "$keyv"
)

// probe is what a predeclared probe is as a starlark.Value: the loader's rewrites
// index it (its Get says the answer), a script never sees it otherwise.
type probe struct{ name string }

func (p probe) String() string      { return p.name }
func (probe) Type() string          { return "probe" }
func (probe) Freeze()               {}
func (probe) Truth() starlark.Bool  { return true }
func (probe) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: probe") }

// maxKeyWeight bounds the weight of a dict key or an index: hashing or comparing a
// key happens in the instruction that indexes, which no charge can reach, so a key
// weighing more is refused. Keys are small in an algorithm ((ts, id) weighs 3).
const maxKeyWeight = 256

// keyProbe is $key: the loader writes d[k] (and {k: v}) as d[$key[k]] when k is not a
// literal, and $key[k] is k when it weighs at most maxKeyWeight, else an error. A
// tuple that holds itself twice at every level (t = (t, t), forty times) weighs 2^40:
// hashing it would never end.
type keyProbe struct{ probe }

func (keyProbe) Get(k starlark.Value) (starlark.Value, bool, error) {
	if !flat(k) || strLen(k) >= bytesPerUnit {
		if w := weight(k, maxKeyWeight+1); w > maxKeyWeight {
			return nil, false, fmt.Errorf("a key or index of more than %d values", maxKeyWeight)
		}
	}
	return k, true, nil
}

// flatName is the global that holds the predeclared flatValue, a flatProbe.
const (
	flatName  = "$flat"
	flatValue = "$flatv"
)

// flatProbe is $flat: $flat[x] says whether x is flat.
type flatProbe struct{ probe }

func (flatProbe) Get(x starlark.Value) (starlark.Value, bool, error) {
	return starlark.Bool(flat(x) && strLen(x) < bytesPerUnit), true, nil // a long string pays
}

// flat: a value whose comparison with anything costs one unit, or a unit per 64
// bytes for a string.
func flat(v starlark.Value) bool {
	switch v.(type) {
	case starlark.Int, starlark.String, starlark.Bool, starlark.NoneType, starlark.Float, starlark.Bytes:
		return true
	}
	return false
}

// compareWork is what x op y costs: comparing two containers visits both as deep as
// they are alike; x in y compares x with each element of a list or tuple, hashes it
// for a dict or set, searches a string.
func compareWork(t *starlark.Thread, op syntax.Token, x, y starlark.Value) int {
	if op == syntax.IN || op == syntax.NOT_IN {
		switch y := y.(type) {
		case starlark.String, starlark.Bytes:
			return (strLen(y) + strLen(x)) / bytesPerUnit
		case *starlark.List, starlark.Tuple:
			if flat(x) {
				return shallow(y)
			}
			return elemsWeight(y, workLeft(t))
		case *starlark.Dict, *starlark.Set:
			if flat(x) {
				return strLen(x) / bytesPerUnit
			}
			return weight(x, workLeft(t))
		}
		return 0
	}
	if flat(x) || flat(y) {
		return min(strLen(x), strLen(y)) / bytesPerUnit
	}
	limit := workLeft(t)
	return min(weight(x, limit), weight(y, limit))
}

// checkedCompare is the builtin of one comparison.
func checkedCompare(op syntax.Token) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	name := op.String()
	return func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		if xi, ok := x.(starlark.Int); ok {
			if yi, ok := y.(starlark.Int); ok && op != syntax.IN && op != syntax.NOT_IN {
				c, _ := xi.Cmp(yi, 0)
				return starlark.Bool(cmpHolds(op, c)), nil
			}
		}
		if n := compareWork(t, op, x, y); n > 0 {
			if err := spend(t, n, name); err != nil {
				return nil, err
			}
		}
		if op == syntax.IN || op == syntax.NOT_IN {
			return starlark.Binary(op, x, y)
		}
		ok, err := starlark.Compare(op, x, y)
		if err != nil {
			return nil, err
		}
		return starlark.Bool(ok), nil
	}
}

// cmpHolds says whether op holds for a three-way comparison's result c.
func cmpHolds(op syntax.Token, c int) bool {
	switch op {
	case syntax.EQL:
		return c == 0
	case syntax.NEQ:
		return c != 0
	case syntax.LT:
		return c < 0
	case syntax.LE:
		return c <= 0
	case syntax.GT:
		return c > 0
	}
	return c >= 0 // GE
}

// sliceName is the check of a slice's operand.
const sliceName = "$slice"

// checkedSlice is $slice(x) in x[lo:hi:step]: the slice copies at most all of x.
func checkedSlice(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x := args[0]
	switch x.(type) {
	case starlark.String, starlark.Bytes:
		n := strLen(x)
		if err := pay(t, n/bytesPerUnit, n, "[:]"); err != nil {
			return nil, err
		}
	case *starlark.List, starlark.Tuple:
		n := shallow(x)
		if err := pay(t, n/copyPerUnit, n, "[:]"); err != nil {
			return nil, err
		}
	} // a range's slice is a range
	return x, nil
}

// checkedBinary is the check of x - y, x | y, x & y, x ^ y and x << y (and their
// augmented forms, which pass a third argument and get y back): on ints, a shift must
// not make an int longer than maxIntBits; on sets and dicts, the operation hashes the
// elements of both and builds at most all of them.
func checkedBinary(op syntax.Token) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	name := op.String()
	return func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
		x, y := args[0], args[1]
		xi, xInt := x.(starlark.Int)
		yi, yInt := y.(starlark.Int)
		switch {
		case xInt && yInt:
			if err := sumFits(xi, yi, name); err != nil {
				return nil, err
			}
			if op == syntax.LTLT {
				k, ok := yi.Int64()
				if !ok || k > 0 && int64(intBits(xi))+k > maxIntBits {
					return nil, fmt.Errorf("%s: the int would have more than %d bits", name, maxIntBits)
				}
			}
		case xInt || yInt:
		default:
			limit, n := workLeft(t), shallow(x)+shallow(y)
			if err := pay(t, elemsWeight(x, limit)+elemsWeight(y, limit)+insertUnits*n, n, name); err != nil {
				return nil, err
			}
		}
		return result(args, op)
	}
}

// intBits is the length of an int in bits.
func intBits(i starlark.Int) int {
	if v, ok := i.Int64(); ok {
		if v < 0 {
			v = -v
		}
		return bits.Len64(uint64(v))
	}
	return i.BigInt().BitLen()
}

// checkedStar is f(*x)'s x: the call copies every element of x into its arguments.
func checkedStar(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	n := iterLen(args[0], workLeft(t))
	if err := pay(t, n/copyPerUnit, n, "*"); err != nil {
		return nil, err
	}
	return args[0], nil
}

// checkedStarStar is f(**x)'s x: the call copies every entry of x.
func checkedStarStar(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	n := iterLen(args[0], workLeft(t))
	if err := pay(t, n, 2*n, "**"); err != nil {
		return nil, err
	}
	return args[0], nil
}

// maxIntText bounds the strings int() converts: longer ones would make ints longer
// than maxIntBits (a base-2 literal of maxIntBits digits, a sign, a prefix and
// underscores between digits).
const maxIntText = 2*maxIntBits + 8

// intOf is Starlark's int, refusing strings too long for an int of maxIntBits bits.
func intOf(t *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		if n := strLen(args[0]); n > maxIntText {
			return nil, fmt.Errorf("int: a string of %d bytes (ints have at most %d bits)", n, maxIntBits)
		} else if err := spend(t, n/bytesPerUnit, "int()"); err != nil {
			return nil, err
		}
	}
	v, err := starlark.Universe["int"].(*starlark.Builtin).CallInternal(t, args, kwargs)
	if err != nil {
		return nil, err
	}
	if i, ok := v.(starlark.Int); ok {
		if _, small := i.Int64(); !small && i.BigInt().BitLen() > maxIntBits {
			return nil, fmt.Errorf("int: the int would have more than %d bits", maxIntBits)
		}
	}
	return v, nil
}

// getattrOf is Starlark's getattr, with methods charged as x.name's are.
func getattrOf(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, dflt starlark.Value
	var name string
	if err := starlark.UnpackPositionalArgs("getattr", args, kwargs, 2, &x, &name, &dflt); err != nil {
		return nil, err
	}
	v, err := attrOf(x, name)
	if err != nil || v == nil {
		if dflt != nil {
			return dflt, nil
		}
		if err == nil {
			err = fmt.Errorf("%s has no .%s field or method", x.Type(), name)
		}
		return nil, fmt.Errorf("getattr: %v", err)
	}
	return v, nil
}

// chargedBuiltin is a universe builtin that pays its cost first.
func chargedBuiltin(name string, c cost) *starlark.Builtin {
	general := starlark.Universe[name].(*starlark.Builtin)
	op := name + "()"
	return starlark.NewBuiltin(name, func(t *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := chargeCall(t, c, op, nil, args, kwargs); err != nil {
			return nil, err
		}
		return general.CallInternal(t, args, kwargs)
	})
}
