package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
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

// handleCompare serves /compare.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	cq, perr := compare.ParseQuery(r.URL.Query(), s.compare.Limits())
	form := newCompareForm(r.URL.Query(), cq, s.compare.Limits())
	if perr != nil {
		form.Error = perr
		s.render(w, r, http.StatusBadRequest, comparePageView(comparePage{Form: form}))
		return
	}
	res, err := s.compare.Compare(r.Context(), cq)
	if err != nil {
		if r.Context().Err() != nil {
			return // the visitor left
		}
		w.Header().Set("Retry-After", "30")
		form.Error = &compare.ParamError{Param: "n", Reason: fmt.Sprintf("the runs took longer than %s (%v): choose fewer sizes, seeds or algorithms", s.compare.Timeout(), err)}
		s.render(w, r, http.StatusServiceUnavailable, comparePageView(comparePage{Form: form}))
		return
	}
	s.render(w, r, http.StatusOK, comparePageView(buildComparePage(form, res)))
}

// View models of the compare page, shaped like the screen.

type comparePage struct {
	Form    compareForm
	Link    string // the canonical shareable URL
	Summary string
	Groups  []compareGroup // one per family that was chosen
}

type compareForm struct {
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
	Legend          []legendItem
	Empty           string // said in the plot when nothing was measured
	EmptyX, EmptyY  string
}

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
	Dash   string
}

func newCompareForm(q url.Values, cq compare.Query, lim compare.Limits) compareForm {
	f := compareForm{N: "3-9", Workload: "light", Seeds: "3", Limits: lim}
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
	for _, fam := range familyNames {
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

// What each chart of a family draws: a metric, its label, and whether it is in T.
var chartsOf = map[sim.Family][]struct {
	key, title, ylabel string
}{
	sim.Mutex: {
		{cost.PerEntry, "Messages per CS entry", "messages per entry"},
		{cost.ClientDelay, "Client delay", "client delay (T)"},
		{cost.SyncDelay, "Synchronisation delay", "synchronisation delay (T)"},
	},
	sim.Election: {
		{cost.ElectionMessages, "Messages per election", "messages per election"},
		{cost.ElectionTime, "Election time", "election time (T)"},
	},
}

var workloadAbout = map[sim.Family]map[string]string{
	sim.Mutex: {
		"light": "light: one request at a time, by a process drawn from the seed, long after the previous one was served (max(6, 2N) requests)",
		"heavy": "heavy: every process asks again as soon as it can, for a while; then the queue drains",
	},
	sim.Election: {
		"light": "light: one process drawn from the seed calls an election (for Bully the leader, the highest id, has crashed first)",
		"heavy": "heavy: every process calls an election at once (for Bully, every live one after the leader crashed)",
	},
}

func buildComparePage(form compareForm, res *compare.Result) comparePage {
	cq, net := res.Query, compare.Network()
	p := comparePage{Form: form, Link: "/compare?" + cq.Canonical()}
	p.Summary = fmt.Sprintf("%d runs in %s, on N = %s with %d seed%s each. Every run: delays uniform in [%d, %d] time units, FIFO channels, %d time units in the CS; T, the notes' message time, is the mean delay %g.",
		res.Runs, res.Elapsed.Round(1e6), compare.SizesString(cq.Ns), cq.Seeds, plural(cq.Seeds), net.DelayMin, net.DelayMax, compare.CS, cost.MeanDelay(net))
	for _, fam := range familyNames {
		var specs []*sim.Spec
		for _, s := range cq.Specs {
			if s.Family == fam.family {
				specs = append(specs, s)
			}
		}
		if len(specs) == 0 {
			continue
		}
		g := compareGroup{ID: string(fam.family), Name: fam.name, About: workloadAbout[fam.family][cq.Workload]}
		for _, c := range chartsOf[fam.family] {
			g.Charts = append(g.Charts, buildChart(string(fam.family)+"-"+c.key, c.title, c.ylabel, c.key, specs, cq.Ns, res))
		}
		g.Columns, g.Rows = buildTable(fam.family, specs, cq.Ns, res)
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

// Chart geometry, in viewBox units.
const (
	chartW, chartH                         = 640, 300
	padL, padR, padT, padB                 = 56, 16, 14, 44
	plotX0, plotY0, plotX1, plotY1         = padL, padT, chartW - padR, chartH - padB
	maxSeriesClasses                       = 8
	desiredYTicks                          = 5
	chartXLabelY, chartYLabelX             = chartH - 8, 14
	chartXLabelX, chartYLabelY     float64 = (plotX0 + plotX1) / 2, (plotY0 + plotY1) / 2
)

var dashes = []string{"7 5", "2 4", "12 4 2 4"}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func buildChart(id, title, ylabel, key string, specs []*sim.Spec, ns []int, res *compare.Result) chart {
	ch := chart{ID: "chart-" + id, Title: title + " against N", YLabel: ylabel, Width: chartW, Height: chartH,
		Box: fmt.Sprintf("0 0 %d %d", chartW, chartH)}
	type pt struct {
		n int
		v float64
	}
	type line struct {
		class, name, title, dash string
		pts                      []pt
	}
	var measured, theory []line
	ymax := 0.0
	var desc []string
	for i, spec := range specs {
		class := "s" + strconv.Itoa(i%maxSeriesClasses)
		m := line{class: class, name: spec.Title}
		var th []line
		for _, n := range ns {
			c := res.Cells[spec.Slug][n]
			if c == nil {
				continue
			}
			if v, ok := c.Values[key].Mean(); ok {
				m.pts = append(m.pts, pt{n, v})
				ymax = max(ymax, v)
			}
			for k, t := range c.Theory[key] {
				if t.Value == nil {
					continue
				}
				for len(th) <= k {
					th = append(th, line{class: class + " d" + strconv.Itoa(len(th)%len(dashes)), dash: dashes[len(th)%len(dashes)]})
				}
				th[k].name = spec.Title + ", the notes: " + shortFormula(t.Formula)
				th[k].title = t.Name + ": " + t.Formula
				th[k].pts = append(th[k].pts, pt{n, *t.Value})
				ymax = max(ymax, *t.Value)
			}
		}
		measured = append(measured, m)
		ch.Legend = append(ch.Legend, legendItem{Class: class, Name: spec.Title + " (measured)"})
		for _, t := range th {
			if len(t.pts) > 0 {
				theory = append(theory, t)
				ch.Legend = append(ch.Legend, legendItem{Class: t.class, Name: t.name, Title: t.title, Theory: true, Dash: t.dash})
			}
		}
		if len(m.pts) == 0 {
			desc = append(desc, spec.Title+": nothing measured")
		} else {
			first, last := m.pts[0], m.pts[len(m.pts)-1]
			desc = append(desc, fmt.Sprintf("%s: %s at N=%d to %s at N=%d", spec.Title, f1(first.v), first.n, f1(last.v), last.n))
		}
	}
	if ymaxMeasured := slices.ContainsFunc(measured, func(l line) bool { return len(l.pts) > 0 }); !ymaxMeasured {
		ch.Empty = "Nothing to measure in these runs"
		if key == cost.SyncDelay {
			ch.Empty += ": it needs a process waiting when another leaves (try the heavy workload)"
		}
	}
	ch.Desc = fmt.Sprintf("Measured %s (solid lines, one per algorithm, mean over the seeds) and the notes' formulas (dashed). %s. The table below gives every value.",
		ylabel, strings.Join(desc, "; "))

	xlo, xhi := float64(ns[0]), float64(ns[len(ns)-1])
	if xlo == xhi {
		xlo, xhi = xlo-1, xhi+1
	}
	step, top := niceScale(ymax)
	x := func(n float64) float64 { return plotX0 + (n-xlo)/(xhi-xlo)*(plotX1-plotX0) }
	y := func(v float64) float64 { return plotY1 - v/top*(plotY1-plotY0) }
	for v := 0.0; v <= top+step/2; v += step {
		yy := f1(y(v))
		ch.YTicks = append(ch.YTicks, tick{Label: f1(v), X1: f1(plotX0), Y1: yy, X2: f1(plotX1), Y2: yy, TX: f1(plotX0 - 6), TY: f1(y(v) + 4)})
	}
	every := 1 + (len(ns)-1)/10 // at most about ten labels
	for k, n := range ns {
		if k%every != 0 && k != len(ns)-1 {
			continue
		}
		xx := f1(x(float64(n)))
		ch.XTicks = append(ch.XTicks, tick{Label: strconv.Itoa(n), X1: xx, Y1: f1(plotY1), X2: xx, Y2: f1(plotY1 + 5), TX: xx, TY: f1(plotY1 + 18)})
	}
	ch.EmptyX, ch.EmptyY = f1(chartXLabelX), f1((plotY0+plotY1)/2)
	ch.Axis = axis{X0: f1(plotX0), Y0: f1(plotY1), X1: f1(plotX1), Y1: f1(plotY1),
		XLabelX: f1(chartXLabelX), XLabelY: f1(chartXLabelY), YLabelX: f1(chartYLabelX), YLabelY: f1(chartYLabelY)}
	points := func(l line, dots bool) series {
		s := series{Class: l.class, Name: l.name, Dash: l.dash}
		if l.title != "" {
			s.Name = l.title
		}
		var b strings.Builder
		for k, p := range l.pts {
			if k > 0 {
				b.WriteByte(' ')
			}
			xs, ys := f1(x(float64(p.n))), f1(y(p.v))
			b.WriteString(xs + "," + ys)
			if dots {
				s.Dots = append(s.Dots, dot{X: xs, Y: ys, Label: fmt.Sprintf("%s, N=%d: %s", l.name, p.n, f1(p.v))})
			}
		}
		s.Points = b.String()
		return s
	}
	for _, l := range theory {
		ch.Theory = append(ch.Theory, points(l, false))
	}
	for _, l := range measured {
		ch.Measured = append(ch.Measured, points(l, true))
	}
	return ch
}

// niceScale picks a tick step of 1, 2, 2.5 or 5 times a power of ten, and the top of
// the axis, for values up to ymax.
func niceScale(ymax float64) (step, top float64) {
	if ymax <= 0 || math.IsNaN(ymax) || math.IsInf(ymax, 0) {
		return 1, desiredYTicks
	}
	raw := ymax * 1.05 / desiredYTicks
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(ymax*1.05/step) * step
}

// shortFormula keeps the formula itself, without the explanation after it: "2(N-1)";
// "3" from "3 (REQUEST, GRANT, RELEASE); 0 for ..."; "N²-N-1" from "... = N²-N-1, O(N²)".
func shortFormula(f string) string {
	for _, sep := range []string{": ", "; "} {
		if i := strings.Index(f, sep); i > 0 {
			f = f[:i]
		}
	}
	// " (" starts an explanation when words follow, not a term such as (N-1)/2.
	for i := strings.Index(f, " ("); i >= 0; {
		if wordy.MatchString(f[i:]) {
			f = f[:i]
			break
		}
		k := strings.Index(f[i+2:], " (")
		if k < 0 {
			break
		}
		i += 2 + k
	}
	if i := strings.Index(f, ", "); i > 0 {
		f = f[:i]
	}
	if i := strings.LastIndex(f, " = "); i >= 0 {
		f = f[i+3:]
	}
	return strings.TrimSpace(f)
}

var wordy = regexp.MustCompile(`^ \([^)]*[A-Za-z]{3}`)

func buildTable(fam sim.Family, specs []*sim.Spec, ns []int, res *compare.Result) ([]string, []tableRow) {
	var cols []string
	type col struct {
		key    string
		theory bool
	}
	var keys []col
	if fam == sim.Mutex {
		cols = []string{"messages per entry", "theory", "to enter (alone)", "theory", "sent on exit", "theory",
			"client delay (T)", "theory", "sync. delay (T)", "theory", "grants out of causal order", "unserved"}
		keys = []col{{cost.PerEntry, false}, {cost.PerEntry, true}, {cost.ToEnter, false}, {cost.ToEnter, true},
			{cost.OnExit, false}, {cost.OnExit, true}, {cost.ClientDelay, false}, {cost.ClientDelay, true},
			{cost.SyncDelay, false}, {cost.SyncDelay, true}}
	} else {
		cols = []string{"messages per election", "theory", "election time (T)", "theory", "elections (unsettled)"}
		keys = []col{{cost.ElectionMessages, false}, {cost.ElectionMessages, true}, {cost.ElectionTime, false}, {cost.ElectionTime, true}}
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
			for _, k := range keys {
				if k.theory {
					row.Cells = append(row.Cells, theoryCell(c.Theory[k.key]))
					continue
				}
				row.Cells = append(row.Cells, measuredCell(c.Values[k.key]))
			}
			if fam == sim.Mutex {
				o := tableCell{Text: fmt.Sprintf("%d of %d", c.Violations, c.Checked), Title: "grants that overtook a request which happened before them, of those that had one"}
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

func theoryCell(ts []cost.Theory) tableCell {
	var texts, titles []string
	for _, t := range ts {
		s := shortFormula(t.Formula)
		if t.Value != nil && s != f1(*t.Value) {
			s += " = " + f1(*t.Value)
		}
		texts = append(texts, s)
		titles = append(titles, t.Name+": "+t.Formula)
	}
	if len(texts) == 0 {
		return tableCell{Text: "—", Class: "na", Title: "the notes give no figure for this"}
	}
	return tableCell{Text: strings.Join(texts, "; "), Title: strings.Join(titles, "\n")}
}
