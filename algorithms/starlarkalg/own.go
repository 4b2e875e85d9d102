package starlarkalg

import (
	"fmt"
	"math"
	"strings"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// An algorithm written from scratch declares what a Go algorithm registers and a
// template borrows from its Go twin: its own name, its costs and the explorer's
// canonical forms.
//
//	name = "token-bag"
//	costs = [cost("messages per CS entry", "N+1", value = lambda n: n + 1),
//	         cost("messages per election", "2N to 3N-1", low = lambda n: 2 * n, high = lambda n: 3 * n - 1)]
//	canon = {"asynchronous": True, "forget_when_quiet": ["clock"]}

// MaxNameLen bounds a declared name.
const MaxNameLen = 40

// validName: lower-case letters, digits and dashes, starting with a letter.
func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// ownName reads the global name.
func ownName(g starlark.StringDict) (string, error) {
	name, err := optString(g, "name", false)
	if err != nil || name == "" {
		return "", err
	}
	if !validName(name) {
		return "", fmt.Errorf("name: %q must be 1 to %d lower-case letters, digits and dashes, starting with a letter", name, MaxNameLen)
	}
	return name, nil
}

// CostTable is a declared cost evaluated for every number of processes: Values[n]
// for n from sim.MinNodes to sim.MaxNodes (the others are 0), or a range, Low[n] to
// High[n]. It holds numbers only, so that a server can draw the figures without
// running the source.
type CostTable struct {
	Name, Formula string
	Values        []float64
	Low, High     []float64
}

// Cost is the table as a sim.Cost: a value, a range (sim.Cost.Low and High, as a Go
// algorithm declares one) or a formula alone.
func (t CostTable) Cost() sim.Cost {
	return sim.Cost{Name: t.Name, Formula: t.Formula, Value: table(t.Values), Low: table(t.Low), High: table(t.High)}
}

// table is values as a function of n (nil for none); NaN outside the table.
func table(values []float64) func(int) float64 {
	if values == nil {
		return nil
	}
	return func(n int) float64 {
		if n < 0 || n >= len(values) {
			return math.NaN()
		}
		return values[n]
	}
}

// costTables reads costs = [cost(...)]: each with a value, or a range (low and high),
// or neither (a formula only); a value or a bound is a number or a function of n,
// evaluated now for every n.
func costTables(thread *starlark.Thread, g starlark.StringDict) ([]CostTable, error) {
	decls, err := listOf(g, "costs", "cost", func(d *decl) (*decl, error) { return d, nil })
	if err != nil {
		return nil, err
	}
	var tables []CostTable
	for k, d := range decls {
		field := fmt.Sprintf("costs[%d]", k)
		name, err := d.str("name", true)
		if err != nil {
			return nil, &posError{pos: d.pos, msg: field + ": " + err.Error()}
		}
		formula, err := d.str("formula", false)
		if err != nil {
			return nil, &posError{pos: d.pos, msg: field + ": " + err.Error()}
		}
		if strings.TrimSpace(name) == "" || len(name) > 200 || len(formula) > 400 {
			return nil, &posError{pos: d.pos, msg: field + ": the name must be 1 to 200 characters, the formula at most 400"}
		}
		_, hasValue := d.args["value"]
		_, hasLow := d.args["low"]
		_, hasHigh := d.args["high"]
		switch {
		case hasValue && !hasLow && !hasHigh:
			t, err := evalCost(thread, d, "value")
			if err != nil {
				return nil, &posError{pos: d.pos, msg: field + ": " + err.Error()}
			}
			tables = append(tables, CostTable{Name: name, Formula: formula, Values: t})
		case hasLow && hasHigh && !hasValue:
			lo, err := evalCost(thread, d, "low")
			if err == nil {
				var hi []float64
				if hi, err = evalCost(thread, d, "high"); err == nil {
					for n := range lo {
						if lo[n] > hi[n] {
							err = fmt.Errorf("low is %v and high %v for %d processes: low must not exceed high", lo[n], hi[n], n)
							break
						}
					}
					tables = append(tables, CostTable{Name: name, Formula: formula, Low: lo, High: hi})
				}
			}
			if err != nil {
				return nil, &posError{pos: d.pos, msg: field + ": " + err.Error()}
			}
		case !hasValue && !hasLow && !hasHigh:
			tables = append(tables, CostTable{Name: name, Formula: formula})
		default:
			return nil, &posError{pos: d.pos, msg: field + ": give value, or low and high (a range), or neither"}
		}
	}
	return tables, nil
}

// evalCost evaluates a cost's argument for every number of processes.
func evalCost(thread *starlark.Thread, d *decl, key string) ([]float64, error) {
	v := d.args[key]
	out := make([]float64, sim.MaxNodes+1)
	for n := sim.MinNodes; n <= sim.MaxNodes; n++ {
		x := v
		if fn, ok := v.(starlark.Callable); ok {
			var err error
			if x, err = starlark.Call(thread, fn, starlark.Tuple{starlark.MakeInt(n)}, nil); err != nil {
				return nil, fmt.Errorf("%s(%d): %v", key, n, err)
			}
		}
		f, ok := starlark.AsFloat(x)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: got %s for %d processes, want a number or a function of n giving one", key, x.Type(), n)
		}
		out[n] = f
	}
	return out, nil
}

// canonHints reads canon = {"asynchronous": bool, "forget_when_quiet": [names]}: the
// explorer's canonical forms (sim.Canon). A variable named in forget_when_quiet only
// shapes future requests (a Lamport clock): once the workload is over, an int there is
// taken as 0, so states that differ only in it are one.
func canonHints(g starlark.StringDict) (*sim.Canon, []string, error) {
	dict, err := optional[*starlark.Dict](g, "canon", "a dict")
	if dict == nil {
		return nil, nil, err
	}
	c := &sim.Canon{}
	var forget []string
	for _, kv := range dict.Items() {
		key, _ := starlark.AsString(kv[0])
		switch key {
		case "asynchronous":
			b, isBool := kv[1].(starlark.Bool)
			if !isBool {
				return nil, nil, fmt.Errorf("canon.asynchronous: want True or False")
			}
			c.Asynchronous = bool(b)
		case "forget_when_quiet":
			var err error
			if forget, err = stringsOf("canon.forget_when_quiet", kv[1]); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, fmt.Errorf("canon.%s: unknown (allowed: asynchronous, forget_when_quiet)", key)
		}
	}
	return c, forget, nil
}

// forgetNode is sim.Canon.Node for forget_when_quiet: the named int variables at 0
// once the workload is over.
func forgetNode(names []string) func(sim.Node, bool) sim.Node {
	return func(nd sim.Node, quiet bool) sim.Node {
		if !quiet {
			return nd
		}
		var n *node
		switch x := nd.(type) {
		case *node:
			n = x
		case tokenNode:
			n = x.node
		default:
			return nd
		}
		if n.st == nil {
			return nd
		}
		var out sim.Node
		var c *node
		for _, name := range names {
			for k, have := range n.st.names {
				if have != name {
					continue
				}
				if i, isInt := n.st.vals[k].(starlark.Int); !isInt || i.Sign() == 0 {
					continue
				}
				if c == nil {
					out = n.Clone()
					switch x := out.(type) {
					case *node:
						c = x
					case tokenNode:
						c = x.node
					}
				}
				c.st.vals[k] = starlark.MakeInt(0)
			}
		}
		if out == nil {
			return nd
		}
		return out
	}
}
