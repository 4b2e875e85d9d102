package pages

import (
	"strings"

	"github.com/teach-dist/playground/runtime/cost"
)

// The compare page's cost figures: the notes' formulas, as the notes write them and
// naming the notes, apart from the project's own derived figures, for the table's two
// columns and the charts' dashed curves.

// figure is one formula of a cost evaluated for one N.
type figure struct {
	source  string // "the notes (000, 004)" or "derived"
	formula string // as shown: the notes' whole, the derived one without its explanation
	title   string // the cost's name and the formula in full
	value   *float64
	rng     *cost.Range // a range's bounds (value is then nil): a band on the charts
}

// notesFigures are the notes' formulas of ts, in order.
func notesFigures(ts []cost.Theory) []figure {
	var out []figure
	for _, t := range ts {
		for _, f := range t.Notes {
			src := "the notes (" + strings.Join(f.In, ", ") + ")"
			out = append(out, figure{source: src, formula: f.Formula, title: t.Name + ": " + f.Formula + ", " + src, value: f.Value})
		}
	}
	return out
}

// derivedFigures are the project's own figures of ts, in order.
func derivedFigures(ts []cost.Theory) []figure {
	var out []figure
	for _, t := range ts {
		if t.Formula == "" {
			continue
		}
		out = append(out, figure{source: "derived", formula: shortFormula(t.Formula),
			title: t.Name + ": " + t.Formula + " (derived for this implementation, not in the notes)", value: t.Value, rng: t.Range})
	}
	return out
}

// text is the figure as a table cell writes it: a count "3(N-1) = 12", a delay in
// message times T "2T: 2 T" (the table's delays are in T), a range with both bounds
// "0 to 2(N-1) = 0 to 8".
func (f figure) text(unit string) string {
	var v string // the figure's number for N, or its two bounds
	switch {
	case f.rng != nil:
		v = f1(f.rng.Low) + " to " + f1(f.rng.High)
	case f.value != nil:
		v = f1(*f.value)
	default:
		return f.formula
	}
	switch {
	case unit == cost.UnitTime:
		return f.formula + ": " + v + " T"
	case f.formula == v:
		return f.formula
	}
	return f.formula + " = " + v
}

// figuresCell is a table cell listing figures; none says why it is empty.
func figuresCell(fs []figure, unit, none string) tableCell {
	var texts, titles []string
	for _, f := range fs {
		t := f.text(unit)
		if f.source != "derived" {
			t += " (" + strings.TrimPrefix(strings.TrimSuffix(f.source, ")"), "the notes (") + ")"
		}
		texts = append(texts, t)
		titles = append(titles, f.title)
	}
	if len(texts) == 0 {
		return tableCell{Text: "—", Class: "na", Title: none}
	}
	return tableCell{Text: strings.Join(texts, "; "), Title: strings.Join(titles, "\n")}
}
