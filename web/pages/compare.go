package pages

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/sim"
)

// The compare page (/compare) draws what runtime/compare measured beside the notes'
// formulas: charts against N and a table. All its choices are query parameters, so
// the page is a link to share.

// View models of the compare page, shaped like the screen.

type Compare struct {
	Waiting string // the comparison waits for the server: its place, said in words
	Form    CompareForm
	Link    string // the canonical shareable URL
	Summary string
	Groups  []compareGroup // one per family that was chosen
}

type CompareForm struct {
	Families []formFamily
	N        string
	Workload string
	Seeds    string
	Error    *compare.ParamError
	Limits   compare.Limits // said beside the fields
}

type formFamily struct {
	Name  string
	Algos []formAlgo
}

type formAlgo struct {
	Slug, Title string
	Checked     bool
}

type compareGroup struct {
	ID      string
	Name    string
	About   string
	Charts  []chart
	Columns []string
	Rows    []tableRow
	// Claims are the notes' comparisons between the algorithms shown, each checked
	// against the notes' figures and the runs on the sizes compared.
	Claims []string
}

type tableRow struct {
	Algorithm string
	N         int
	Cells     []tableCell
}

type tableCell struct {
	Text  string
	Title string
	Class string
}

type chart struct {
	ID, Title, Desc string
	YLabel          string
	Width, Height   int
	Box             string // viewBox
	XTicks, YTicks  []tick
	Axis            axis
	Measured        []series
	Theory          []series
	Bands           []series // the ranges: a shaded area between their bounds (Points, a closed outline)
	Legend          []legendItem
	Empty           string   // said in the plot when nothing was measured
	Ends            []string // why a measured line has no point at some sizes
	// EmptyLines is Empty wrapped to fit the plot, each line with its y; EmptyX is
	// their centre.
	EmptyLines []textLine
	EmptyX     string
}

type textLine struct{ Text, Y string }

type axis struct{ X0, Y0, X1, Y1, XLabelX, XLabelY, YLabelX, YLabelY string }

type tick struct {
	Label string
	// A line from (X1,Y1) to (X2,Y2) and the label at (TX,TY).
	X1, Y1, X2, Y2, TX, TY string
}

type series struct {
	Class  string // s0..s7 (the algorithm's colour); theory curves add d0..d2 (the dash)
	Name   string
	Points string
	Dash   string // stroke-dasharray, theory only
	Dots   []dot
}

type dot struct{ X, Y, Label string }

type legendItem struct {
	Class  string
	Name   string
	Title  string // the cost's full name and formula
	Theory bool
	Band   bool // a range: its swatch is a shaded box
	Dash   string
}

func NewCompareForm(q url.Values, cq compare.Query, lim compare.Limits) CompareForm {
	f := CompareForm{N: "3-9", Workload: "light", Seeds: "3", Limits: lim}
	chosen := map[string]bool{}
	for _, s := range cq.Specs {
		chosen[s.Slug] = true
	}
	if len(cq.Specs) == 0 { // a bad query: keep what was asked for
		for _, a := range q["alg"] {
			chosen[a] = true
		}
		if _, ok := q["alg"]; !ok {
			for _, a := range compare.Defaults()["alg"] {
				chosen[a] = true
			}
		}
	}
	for _, fam := range familyNames() {
		ff := formFamily{Name: fam.name}
		for _, spec := range algorithms.All() {
			if spec.Family == fam.family {
				ff.Algos = append(ff.Algos, formAlgo{Slug: spec.Slug, Title: spec.Title, Checked: chosen[spec.Slug]})
			}
		}
		f.Families = append(f.Families, ff)
	}
	if v := q.Get("n"); v != "" {
		f.N = v
	}
	if v := q.Get("workload"); v != "" {
		f.Workload = v
	}
	if v := q.Get("seeds"); v != "" {
		f.Seeds = v
	}
	if len(cq.Ns) > 0 {
		f.N = compare.SizesString(cq.Ns)
	}
	return f
}

// chartSpec is what one chart draws: a metric, its title and its axis label.
type chartSpec struct{ key, title, ylabel string }

// chartsOf are the charts of a family.
func chartsOf(f sim.Family) []chartSpec {
	if f == sim.Election {
		return []chartSpec{
			{cost.ElectionMessages, "Messages per election", "messages per election"},
			{cost.ElectionTime, "Election time", "election time (T)"},
		}
	}
	return []chartSpec{
		{cost.PerEntry, "Messages per CS entry", "messages per entry"},
		{cost.ClientDelay, "Client delay", "client delay (T)"},
		{cost.SyncDelay, "Synchronisation delay", "synchronisation delay (T)"},
	}
}

// workloadAbout says what a workload does in a family's runs.
func workloadAbout(f sim.Family, workload string) string {
	switch {
	case f == sim.Election && workload == "heavy":
		return "heavy: the leader, the highest id, has crashed; every live process calls an election at once"
	case f == sim.Election:
		return "light: the leader, the highest id, has crashed; one process drawn from the seed calls an election (the situation the notes compare the elections in)"
	case workload == "heavy":
		return "heavy: every process asks again as soon as it can, for a while; then the queue drains"
	}
	return "light: one request at a time, by a process drawn from the seed, long after the previous one was served (max(6, 2N) requests)"
}

func BuildCompare(form CompareForm, res *compare.Result) Compare {
	cq, net := res.Query, compare.Network()
	p := Compare{Form: form, Link: "/compare?" + cq.Canonical()}
	p.Summary = fmt.Sprintf("%d runs in %s, on N = %s with %d seed%s each. Every run: delays uniform in [%d, %d] time units, FIFO channels, %d time units in the CS; T, the notes' message time, is the mean delay %g.",
		res.Runs, res.Elapsed.Round(1e6), compare.SizesString(cq.Ns), cq.Seeds, plural(cq.Seeds), net.DelayMin, net.DelayMax, compare.CS, cost.MeanDelay(net))
	for _, fam := range familyNames() {
		var specs []*sim.Spec
		for _, s := range cq.Specs {
			if s.Family == fam.family {
				specs = append(specs, s)
			}
		}
		if len(specs) == 0 {
			continue
		}
		g := compareGroup{ID: string(fam.family), Name: fam.name, About: workloadAbout(fam.family, cq.Workload)}
		for _, c := range chartsOf(fam.family) {
			g.Charts = append(g.Charts, buildChart(string(fam.family)+"-"+c.key, c.title, c.ylabel, c.key, specs, cq.Ns, res))
		}
		g.Columns, g.Rows = buildTable(fam.family, specs, cq.Ns, res)
		g.Claims = notesClaims(specs, cq.Ns, res)
		p.Groups = append(p.Groups, g)
	}
	return p
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func buildTable(fam sim.Family, specs []*sim.Spec, ns []int, res *compare.Result) ([]string, []tableRow) {
	var cols []string
	type col struct{ key, name, unit string }
	var metrics []col
	if fam == sim.Mutex {
		metrics = []col{{cost.PerEntry, "messages per entry", cost.UnitMessages}, {cost.ToEnter, "to enter (alone)", cost.UnitMessages},
			{cost.OnExit, "sent on exit", cost.UnitMessages}, {cost.ClientDelay, "client delay (T)", cost.UnitTime},
			{cost.ExitDelay, "exit delay (T)", cost.UnitTime}, {cost.SyncDelay, "sync. delay (T)", cost.UnitTime}}
	} else {
		metrics = []col{{cost.ElectionMessages, "messages per election", cost.UnitMessages}, {cost.ElectionTime, "election time (T)", cost.UnitTime}}
	}
	// Each measure beside the notes' formulas and, apart, the project's own figures.
	for _, m := range metrics {
		cols = append(cols, m.name, "the notes", "derived here")
	}
	if fam == sim.Mutex {
		cols = append(cols, "grants out of order (causal; bakery: 002's property)", "unserved")
	} else {
		cols = append(cols, "elections (unsettled)")
	}
	cols = append([]string{"algorithm", "N", "runs"}, cols...)
	var rows []tableRow
	for _, spec := range specs {
		for _, n := range ns {
			c := res.Cells[spec.Slug][n]
			if c == nil {
				continue
			}
			row := tableRow{Algorithm: spec.Title, N: n}
			runs := tableCell{Text: strconv.Itoa(c.Runs)}
			if c.Failed > 0 {
				runs = tableCell{Text: fmt.Sprintf("%d (%d stopped)", c.Runs, c.Failed), Title: c.FirstError, Class: "warn"}
			}
			row.Cells = append(row.Cells, runs)
			for _, m := range metrics {
				ts := c.Theory[m.key]
				row.Cells = append(row.Cells, measuredCell(c.Values[m.key]),
					forN(figuresCell(notesFigures(ts), m.unit, "the notes give no figure for this"), c.TheoryOf[m.key]),
					forN(figuresCell(derivedFigures(ts), m.unit, "no figure derived for this"), c.TheoryOf[m.key]))
			}
			if fam == sim.Mutex {
				o := tableCell{Text: fmt.Sprintf("%d of %d", c.Violations, c.Checked), Title: "grants that overtook a request which happened before them, of those that had one"}
				if spec.DoorwayEnds != "" {
					o.Text += " (bakery order)"
					o.Title = "002's bakery property: grants that overtook a process which entered the bakery before they entered the doorway, of those that had one"
				}
				if c.Violations > 0 {
					o.Class = "bad"
					o.Title += fmt.Sprintf("; first in seed %d", c.ViolationSeed)
				}
				row.Cells = append(row.Cells, o)
				u := tableCell{Text: strconv.Itoa(c.Unserved)}
				if c.Unserved > 0 {
					u.Class = "warn"
					u.Title = "requests still waiting when the run ended (a deadlock, or a run cut short)"
				}
				row.Cells = append(row.Cells, u)
			} else {
				e := tableCell{Text: fmt.Sprintf("%d (%d)", c.Elections, c.Unsettled)}
				if c.Unsettled > 0 {
					e.Class = "warn"
				}
				row.Cells = append(row.Cells, e)
			}
			rows = append(rows, row)
		}
	}
	return cols, rows
}

func measuredCell(a compare.Agg) tableCell {
	m, ok := a.Mean()
	if !ok {
		return tableCell{Text: "n/a", Class: "na", Title: "nothing to measure in these runs"}
	}
	c := tableCell{Text: f1(m)}
	if a.N > 1 && a.Max-a.Min > 1e-9 {
		c.Text += " (" + f1(a.Min) + "–" + f1(a.Max) + ")"
		c.Title = fmt.Sprintf("mean over %d seeds (lowest–highest)", a.N)
	}
	return c
}

// forN says in a figures cell which n its formulas are evaluated at when that is not
// every process of the run ("n = 7 live processes": a ring election's formulas count
// the live ring, the crashed leader bypassed).
func forN(c tableCell, of string) tableCell {
	if c.Class == "na" || !strings.Contains(of, "live") {
		return c
	}
	c.Text += ", for " + of
	c.Title += "\n(evaluated for " + of + ")"
	return c
}

// notesClaims checks each of the notes' comparisons between two algorithms shown
// (sim.Spec.Comparisons) against the notes' figures and the measured means, on the
// sizes compared: 002's "3√N < 2(N-1) for N > 4" says at which N the formulas and the
// runs agree with it.
func notesClaims(specs []*sim.Spec, ns []int, res *compare.Result) []string {
	shown := map[string]*sim.Spec{}
	for _, s := range specs {
		shown[s.Slug] = s
	}
	var out []string
	for _, s := range specs {
		for _, cmp := range s.Comparisons {
			other := shown[cmp.Other]
			if other == nil {
				continue
			}
			var below, notBelow, runsBelow, runsNot []string
			for _, n := range ns {
				a, b := res.Cells[s.Slug][n], res.Cells[other.Slug][n]
				if a == nil || b == nil {
					continue
				}
				fa, fb := noteValue(a.Theory[cmp.Metric], cmp.Formula), noteValue(b.Theory[cmp.Metric], cmp.OtherFormula)
				if fa != nil && fb != nil {
					if *fa < *fb {
						below = append(below, strconv.Itoa(n))
					} else {
						notBelow = append(notBelow, strconv.Itoa(n))
					}
				}
				ma, okA := a.Values[cmp.Metric].Mean()
				mb, okB := b.Values[cmp.Metric].Mean()
				if okA && okB {
					if ma < mb {
						runsBelow = append(runsBelow, strconv.Itoa(n))
					} else {
						runsNot = append(runsNot, strconv.Itoa(n))
					}
				}
			}
			text := fmt.Sprintf("The notes compare: %q (%s). By the notes' formulas here, %s < %s at N = %s",
				cmp.Claim, strings.Join(cmp.In, ", "), cmp.Formula, cmp.OtherFormula, listOr(below))
			if len(notBelow) > 0 {
				text += ", not at N = " + strings.Join(notBelow, ", ")
			}
			text += fmt.Sprintf(". Measured, %s costs less than %s at N = %s", s.Title, other.Title, listOr(runsBelow))
			if len(runsNot) > 0 {
				text += ", not at N = " + strings.Join(runsNot, ", ")
			}
			out = append(out, text+".")
		}
	}
	return out
}

// noteValue is the value of the notes' formula written formula among ts.
func noteValue(ts []cost.Theory, formula string) *float64 {
	for _, t := range ts {
		for _, f := range t.Notes {
			if f.Formula == formula && f.Value != nil {
				return f.Value
			}
		}
	}
	return nil
}

func listOr(ns []string) string {
	if len(ns) == 0 {
		return "none of the sizes compared"
	}
	return strings.Join(ns, ", ")
}
