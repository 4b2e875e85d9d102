package pages

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/sim"
)

// The geometry of the compare page's charts: measured and theory curves against N,
// axes and ticks, in SVG viewBox units (compare.templ draws them).

// Chart geometry, in viewBox units.
const (
	chartW, chartH                         = 640, 300
	padL, padR, padT, padB                 = 56, 16, 14, 44
	plotX0, plotY0, plotX1, plotY1         = padL, padT, chartW - padR, chartH - padB
	maxSeriesClasses                       = 10
	desiredYTicks                          = 5
	chartXLabelY, chartYLabelX             = chartH - 8, 14
	chartXLabelX, chartYLabelY     float64 = (plotX0 + plotX1) / 2, (plotY0 + plotY1) / 2
)

// dash is the stroke-dasharray of a family's k-th theory curve.
func dash(k int) string {
	dashes := [...]string{"7 5", "2 4", "12 4 2 4"}
	return dashes[k%len(dashes)]
}

// dashClasses is how many dash patterns dash cycles through.
const dashClasses = 3

// The empty chart's message: characters per line (13 px italic in a plot 568 units
// wide, with room to spare) and the height of a line.
const (
	emptyChars = 52
	emptyLineH = 18.0
)

// wrapWords breaks s into lines of at most width characters, at spaces (a longer word
// has a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func f1(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func buildChart(id, title, ylabel, key string, specs []*sim.Spec, ns []int, res *compare.Result) chart {
	ch := chart{ID: "chart-" + id, Title: title + " against N", YLabel: ylabel, Width: chartW, Height: chartH,
		Box: fmt.Sprintf("0 0 %d %d", chartW, chartH)}
	var measured, theory []line
	var ranges []band
	ymax := 0.0
	var desc []string
	for _, spec := range specs {
		class := seriesClass(spec)
		m := line{class: class, name: spec.Title}
		// One dashed curve per figure with a value: the notes' formulas, then the
		// project's derived ones; figures with the same points share a curve.
		var th []line
		var sources [][]string // per curve: where its figures come from
		var formula []string   // per curve: the first figure's formula
		byFigure := map[string]int{}
		var bands []band // the ranges, one band each
		byBand := map[string]int{}
		for _, n := range ns {
			c := res.Cells[spec.Slug][n]
			if c == nil {
				continue
			}
			if v, ok := c.Values[key].Mean(); ok {
				m.pts = append(m.pts, pt{n, v})
				ymax = max(ymax, v)
			}
			ts := c.Theory[key]
			for _, f := range append(notesFigures(ts), derivedFigures(ts)...) {
				if f.rng != nil {
					k, ok := byBand[f.title]
					if !ok {
						k = len(bands)
						byBand[f.title] = k
						bands = append(bands, band{name: spec.Title + ", " + f.source + ": " + f.formula, title: f.title})
					}
					bands[k].low = append(bands[k].low, pt{n, f.rng.Low})
					bands[k].high = append(bands[k].high, pt{n, f.rng.High})
					ymax = max(ymax, f.rng.High)
					continue
				}
				if f.value == nil {
					continue
				}
				k, ok := byFigure[f.title]
				if !ok {
					k = len(th)
					byFigure[f.title] = k
					th = append(th, line{title: f.title})
					sources, formula = append(sources, []string{f.source}), append(formula, f.formula)
				}
				th[k].pts = append(th[k].pts, pt{n, *f.value})
				ymax = max(ymax, *f.value)
			}
		}
		th, sources, formula = mergeCurves(th, sources, formula)
		for k := range th {
			th[k].class, th[k].dash = class+" d"+strconv.Itoa(k%dashClasses), dash(k)
			th[k].name = spec.Title + ", " + strings.Join(sources[k], " and ") + ": " + formula[k]
		}
		measured = append(measured, m)
		ch.Legend = append(ch.Legend, legendItem{Class: class, Name: spec.Title + " (measured)"})
		for _, t := range th {
			if len(t.pts) > 0 {
				theory = append(theory, t)
				ch.Legend = append(ch.Legend, legendItem{Class: t.class, Name: t.name, Title: t.title, Theory: true, Dash: t.dash})
			}
		}
		for k := range bands {
			bands[k].class = class
			ranges = append(ranges, bands[k])
			ch.Legend = append(ch.Legend, legendItem{Class: class, Name: bands[k].name, Title: bands[k].title, Theory: true, Band: true})
		}
		if end := lineEnd(spec, key, ns, res); end != "" {
			ch.Ends = append(ch.Ends, end)
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
	shaded := ""
	if len(ranges) > 0 {
		shaded = " A figure that is a range is a shaded band between its least and its most."
	}
	ch.Desc = fmt.Sprintf("Measured %s (solid lines, one per algorithm, mean over the seeds), the notes' formulas and the project's derived figures (dashed).%s %s. The table below gives every value.",
		ylabel, shaded, strings.Join(desc, "; "))

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
	// The message stays inside the plot, clear of the axes' labels: wrapped to the
	// plot's width, its lines centred on the plot's middle.
	ch.EmptyX = f1(chartXLabelX)
	lines := wrapWords(ch.Empty, emptyChars)
	for k, l := range lines {
		y := (plotY0+plotY1)/2 + emptyLineH*(float64(k)-float64(len(lines)-1)/2)
		ch.EmptyLines = append(ch.EmptyLines, textLine{Text: l, Y: f1(y)})
	}
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
	// A band's outline: along its most from left to right, back along its least.
	for _, b := range ranges {
		outline := line{class: b.class, name: b.name, pts: slices.Clone(b.high)}
		for k := len(b.low) - 1; k >= 0; k-- {
			outline.pts = append(outline.pts, b.low[k])
		}
		s := points(outline, false)
		s.Name = b.title
		ch.Bands = append(ch.Bands, s)
	}
	for _, l := range measured {
		ch.Measured = append(ch.Measured, points(l, true))
	}
	return ch
}

// seriesClass is an algorithm's colour class on every chart: its place among the
// algorithms of its family in the registry, so that it keeps its colour whichever
// algorithms a comparison shows beside it.
func seriesClass(spec *sim.Spec) string {
	k := 0
	for _, s := range algorithms.All() {
		if s.Slug == spec.Slug {
			break
		}
		if s.Family == spec.Family {
			k++
		}
	}
	return "s" + strconv.Itoa(k%maxSeriesClasses)
}

// lineEnd says why an algorithm's measured line has no point at some sizes ("" when it
// has them all): from which N, and what the runs there did instead.
func lineEnd(spec *sim.Spec, key string, ns []int, res *compare.Result) string {
	var missing []int
	why := ""
	for _, n := range ns {
		c := res.Cells[spec.Slug][n]
		if c != nil {
			if _, ok := c.Values[key].Mean(); ok {
				continue
			}
		}
		missing = append(missing, n)
		if why != "" {
			continue
		}
		switch {
		case c == nil:
			why = "not run"
		case c.Failed > 0 && c.FirstError != "":
			why = fmt.Sprintf("%d of %d runs failed: %s", c.Failed, c.Runs, c.FirstError)
		case c.Unserved > 0:
			why = fmt.Sprintf("requests were left unserved (%d over %d runs): the processes deadlocked or starved, so no entry was measured", c.Unserved, c.Runs)
		case c.Unsettled > 0:
			why = fmt.Sprintf("%d of %d elections did not settle", c.Unsettled, c.Elections)
		default:
			why = "nothing to measure in these runs"
		}
	}
	if len(missing) == 0 {
		return ""
	}
	where := "N=" + strconv.Itoa(missing[0])
	if len(missing) > 1 {
		where = "from N=" + strconv.Itoa(missing[0])
		if missing[len(missing)-1]-missing[0] != len(missing)-1 {
			where = "at N=" + strings.Trim(strings.ReplaceAll(fmt.Sprint(missing), " ", ", "), "[]")
		}
	}
	return fmt.Sprintf("%s: no value %s: %s.", spec.Title, where, why)
}

// pt is a point of a curve: a value at N.
type pt struct {
	n int
	v float64
}

// line is one curve of a chart before it is laid out.
type line struct {
	class, name, title, dash string
	pts                      []pt
}

// band is a range's figure before it is laid out: its least and its most at each N.
type band struct {
	class, name, title string
	low, high          []pt
}

// mergeCurves folds curves with the same points into the first of them, joining
// their sources ("the notes (001)", "derived") and titles: four notes and the
// derived figure all saying 2(N-1) draw one curve, not five on top of each other.
func mergeCurves(th []line, sources [][]string, formula []string) ([]line, [][]string, []string) {
	var out []line
	var src [][]string
	var form []string
	for k, l := range th {
		same := slices.IndexFunc(out, func(o line) bool { return slices.Equal(o.pts, l.pts) })
		if same < 0 {
			out, src, form = append(out, l), append(src, sources[k]), append(form, formula[k])
			continue
		}
		out[same].title += "\n" + l.title
		if !slices.Contains(src[same], sources[k][0]) {
			src[same] = append(src[same], sources[k]...)
		}
	}
	return out, src, form
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
