package pages

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/sim"
)

func TestShortFormula(t *testing.T) {
	for in, want := range map[string]string{
		"2(N-1)": "2(N-1)",
		"3 (REQUEST, GRANT, RELEASE); 0 for the coordinator itself": "3",
		"N(N-1)/2 + (N-1)(N-2)/2 + N-2 = N²-N-1, O(N²)":             "N²-N-1",
		"3N-1 (N-1 to reach the highest, N back to it, N ELECTED)":  "3N-1",
		"about 2N + N/2 (exactly 2N + (N-1)/2)":                     "about 2N + N/2",
		"1 to N-1 (0 when it is already here)":                      "1 to N-1",
		"3(K-1): REQUEST, REPLY and RELEASE":                        "3(K-1)",
		"2(K-1) (the notes: 2 sqrt(N))":                             "2(K-1)",
		"T (one message)":                                           "T",
	} {
		if got := shortFormula(in); got != want {
			t.Errorf("shortFormula(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceScale(t *testing.T) {
	for _, tc := range []struct{ ymax, step, top float64 }{
		{14, 5, 15}, {3, 1, 4}, {0, 1, 5}, {991, 250, 1250}, {0.8, 0.2, 1},
	} {
		step, top := niceScale(tc.ymax)
		if step != tc.step || top != tc.top || top < tc.ymax {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tc.ymax, step, top, tc.step, tc.top)
		}
	}
}

// The empty chart's message is wrapped to fit the plot (unwrapped, it ran past both
// edges and over the axis label).
func TestWrapWords(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"Nothing to measure", 40, []string{"Nothing to measure"}},
		{"Nothing to measure in these runs: it needs a process waiting when another leaves (try the heavy workload)", emptyChars,
			[]string{"Nothing to measure in these runs: it needs a process", "waiting when another leaves (try the heavy workload)"}},
		{"a verylongwordindeed b", 5, []string{"a", "verylongwordindeed", "b"}},
	} {
		got := wrapWords(tc.in, tc.width)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q at %d: %q, want %q", tc.in, tc.width, got, tc.want)
		}
		for _, l := range got {
			if len([]rune(l)) > tc.width && strings.Contains(l, " ") {
				t.Errorf("%q is longer than %d", l, tc.width)
			}
		}
	}
}

// 002: Maekawa is "more efficient than Ricart and Agrawala for large-scale systems,
// since 3√N < 2(N-1) for N > 4". Compared together, the page draws both formulas and
// says where they and the runs agree with the claim.
func TestCompareChecksTheNotesComparisonOfMaekawaAndRicartAgrawala(t *testing.T) {
	q, _ := url.ParseQuery("alg=maekawa&alg=ricart-agrawala&n=3-9&seeds=2")
	e := compare.New(compare.Options{})
	cq, perr := compare.ParseQuery(q, e.Limits())
	if perr != nil {
		t.Fatal(perr)
	}
	res, err := e.Compare(context.Background(), cq)
	if err != nil {
		t.Fatal(err)
	}
	p := BuildCompare(NewCompareForm(q, cq, e.Limits()), res)
	var claims []string
	var legend []string
	for _, g := range p.Groups {
		claims = append(claims, g.Claims...)
		for _, c := range g.Charts {
			for _, l := range c.Legend {
				legend = append(legend, l.Name)
			}
		}
	}
	if len(claims) != 1 {
		t.Fatalf("claims %q, want 002's one", claims)
	}
	for _, want := range []string{"3√N < 2(N-1) for N > 4", "(002)", "3√N < 2(N-1) at N = 5, 6, 7, 8, 9, not at N = 3, 4", "Measured, Maekawa"} {
		if !strings.Contains(claims[0], want) {
			t.Errorf("the claim %q does not say %q", claims[0], want)
		}
	}
	// Both of 002's formulas are drawn (curves with the same points share a line,
	// named by its first formula and every note that gives it).
	for _, want := range [][2]string{{"Maekawa", "3√N"}, {"Ricart-Agrawala, the notes", "the notes (002)"}} {
		if !slices.ContainsFunc(legend, func(l string) bool { return strings.HasPrefix(l, want[0]) && strings.Contains(l, want[1]) }) {
			t.Errorf("no curve of %s's %s in the legend %q", want[0], want[1], legend)
		}
	}
}

// A figure that is a range ("0 to 2(N-1)") is drawn as the band between its bounds,
// not as a line at one of them, and the table writes both bounds.
func TestARangeIsABand(t *testing.T) {
	spec := &sim.Spec{Slug: "ranged", Title: "Ranged", Family: sim.Mutex}
	ns := []int{3, 4, 5}
	res := &compare.Result{Cells: map[string]map[int]*compare.Cell{spec.Slug: {}}}
	for _, n := range ns {
		high := float64(2 * (n - 1))
		res.Cells[spec.Slug][n] = &compare.Cell{
			Values: map[string]compare.Agg{cost.PerEntry: {N: 1, Sum: high / 2, Min: high / 2, Max: high / 2}},
			Theory: map[string][]cost.Theory{cost.PerEntry: {{Name: "messages per CS entry", Formula: "0 to 2(N-1): none when nobody else asked",
				Range: &cost.Range{Low: 0, High: high}}}},
		}
	}
	ch := buildChart("t", "Messages per CS entry", "messages per entry", cost.PerEntry, []*sim.Spec{spec}, ns, res)
	if len(ch.Theory) != 0 || len(ch.Bands) != 1 || len(ch.Measured) != 1 {
		t.Fatalf("%d theory lines, %d bands, %d measured: want the range as one band and no line", len(ch.Theory), len(ch.Bands), len(ch.Measured))
	}
	var xs, ys []float64
	for _, p := range strings.Fields(ch.Bands[0].Points) {
		x, y, _ := strings.Cut(p, ",")
		xf, _ := strconv.ParseFloat(x, 64)
		yf, _ := strconv.ParseFloat(y, 64)
		xs, ys = append(xs, xf), append(ys, yf)
	}
	// Along the most from N=3 to N=5 (4, 6, 8 messages: rising, so y falls), then back
	// along the least (0 at every N: the x axis).
	if len(xs) != 6 || !(xs[0] < xs[1] && xs[1] < xs[2]) || xs[3] != xs[2] || xs[5] != xs[0] ||
		!(ys[0] > ys[1] && ys[1] > ys[2]) || ys[3] != plotY1 || ys[4] != plotY1 || ys[5] != plotY1 {
		t.Errorf("band outline %q: want the most left to right, then the least right to left", ch.Bands[0].Points)
	}
	if i := slices.IndexFunc(ch.Legend, func(l legendItem) bool { return l.Band }); i < 0 || !strings.HasSuffix(ch.Legend[i].Name, "derived: 0 to 2(N-1)") {
		t.Errorf("legend %+v: want the band named with its formula", ch.Legend)
	}
	if c := figuresCell(derivedFigures(res.Cells[spec.Slug][5].Theory[cost.PerEntry]), cost.UnitMessages, ""); c.Text != "0 to 2(N-1) = 0 to 8" {
		t.Errorf("the table's cell says %q, want 0 to 2(N-1) = 0 to 8", c.Text)
	}
}
