package pages

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/compare"
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
