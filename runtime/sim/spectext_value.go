package sim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// costValue is a cost's value as a text gives it: one number of n, a range, or one of n
// and k; the fields that do not apply are nil.
type costValue struct {
	n, low, high func(n int) float64
	k            func(n, k int) float64
}

// parseCostValue reads "EXPR" or "LOW to HIGH".
func parseCostValue(text string) (costValue, error) {
	if lo, hi, ok := strings.Cut(text, " to "); ok {
		low, usesK, err := compileCostExpr(lo)
		if err != nil {
			return costValue{}, err
		}
		high, usesK2, err := compileCostExpr(hi)
		if err != nil {
			return costValue{}, err
		}
		if usesK || usesK2 {
			return costValue{}, fmt.Errorf("a range is of n alone")
		}
		return costValue{low: costOfN(low), high: costOfN(high)}, nil
	}
	e, usesK, err := compileCostExpr(text)
	if err != nil {
		return costValue{}, err
	}
	if usesK {
		return costValue{k: func(n, k int) float64 { return e(float64(n), float64(k)) }}, nil
	}
	return costValue{n: costOfN(e)}, nil
}

func costOfN(e costExpr) func(int) float64 {
	return func(n int) float64 { return e(float64(n), 0) }
}

// costExpr is a compiled expression of n and k.
type costExpr func(n, k float64) float64

// compileCostExpr parses an arithmetic expression (numbers, n, k, + - * /, parentheses,
// sqrt) and says whether it uses k.
func compileCostExpr(text string) (costExpr, bool, error) {
	c := &exprParser{text: text}
	e, err := c.binary(0)
	if err == nil && c.peek() != "" {
		err = fmt.Errorf("unexpected %q", c.peek())
	}
	if err != nil {
		return nil, false, fmt.Errorf("value %q: %w", strings.TrimSpace(text), err)
	}
	return e, c.usesK, nil
}

type exprParser struct {
	text  string
	pos   int
	usesK bool
}

// peek returns the next token: a number, a name, or one character; "" at the end.
func (c *exprParser) peek() string {
	for c.pos < len(c.text) && c.text[c.pos] == ' ' {
		c.pos++
	}
	end := c.pos
	for end < len(c.text) && (isExprWord(c.text[end]) || c.text[end] == '.') {
		end++
	}
	if end == c.pos && end < len(c.text) {
		end++
	}
	return c.text[c.pos:end]
}

func isExprWord(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

func (c *exprParser) next() string {
	t := c.peek()
	c.pos += len(t)
	return t
}

// exprLevels are the binary operators by precedence, loosest first.
var exprLevels = []string{"+-", "*/"}

// binary reads operands of the exprLevels above level joined by level's operators, from
// the left: binary(0) is a whole expression.
func (c *exprParser) binary(level int) (costExpr, error) {
	if level == len(exprLevels) {
		return c.factor()
	}
	e, err := c.binary(level + 1)
	for err == nil && len(c.peek()) == 1 && strings.Contains(exprLevels[level], c.peek()) {
		op := c.next()
		var r costExpr
		if r, err = c.binary(level + 1); err == nil {
			e = exprArith(op, e, r)
		}
	}
	return e, err
}

// factor: number | "n" | "k" | "(" expression ")" | "sqrt(" expression ")".
func (c *exprParser) factor() (costExpr, error) {
	switch t := c.next(); t {
	case "n":
		return func(n, _ float64) float64 { return n }, nil
	case "k":
		c.usesK = true
		return func(_, k float64) float64 { return k }, nil
	case "(":
		return c.group()
	case "sqrt":
		if c.next() != "(" {
			return nil, fmt.Errorf("want sqrt(...)")
		}
		e, err := c.group()
		if err != nil {
			return nil, err
		}
		return func(n, k float64) float64 { return math.Sqrt(e(n, k)) }, nil
	default:
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return nil, fmt.Errorf("want a number, n, k, ( or sqrt, got %q", t)
		}
		return func(float64, float64) float64 { return v }, nil
	}
}

// group reads the rest of a parenthesised expression.
func (c *exprParser) group() (costExpr, error) {
	e, err := c.binary(0)
	if err == nil && c.next() != ")" {
		err = fmt.Errorf("want )")
	}
	return e, err
}

func exprArith(op string, l, r costExpr) costExpr {
	switch op {
	case "+":
		return func(n, k float64) float64 { return l(n, k) + r(n, k) }
	case "-":
		return func(n, k float64) float64 { return l(n, k) - r(n, k) }
	case "*":
		return func(n, k float64) float64 { return l(n, k) * r(n, k) }
	}
	return func(n, k float64) float64 { return l(n, k) / r(n, k) }
}
