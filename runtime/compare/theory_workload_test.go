package compare

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/cost"
)

// figures lists the theory of one cell's metric as "name=value".
func figures(ts []cost.Theory) []string {
	var out []string
	for _, t := range ts {
		if t.Value != nil {
			out = append(out, fmt.Sprintf("%s=%g", t.Name, *t.Value))
		}
	}
	return out
}

// With the heavy workload every live process starts the election at once, so
// ring-list (variant list) measures about 2kN messages for k = N-1 initiators; the
// chart was drawn against the one-initiator 2N and the other variant's N². The figures
// a cell is measured against now come from the algorithm's declared costs for the
// workload's situation: k initiators, the variant run.
func TestComparisonsDrawTheFiguresOfTheirWorkload(t *testing.T) {
	e := New(Options{})
	for _, tc := range []struct {
		alg, workload string
		want          func(n int) []string // the figures drawn, by name=value
		near          string               // the figure the measure must be near
	}{
		{"ring-list", "heavy", func(n int) []string {
			// k = n-1 initiators round a live ring of n-1: the crashed leader is bypassed.
			return []string{fmt.Sprintf("messages, k concurrent initiators (variant list)=%d", 2*(n-1)*(n-1))}
		}, "messages, k concurrent initiators (variant list)"},
		{"ring-list", "light", func(n int) []string {
			return []string{fmt.Sprintf("messages, one initiator (variant list)=%d", 2*(n-1)),
				fmt.Sprintf("messages, k concurrent initiators (variant list)=%d", 2*(n-1))}
		}, "messages, one initiator (variant list)"},
		{"bully", "heavy", func(n int) []string {
			return []string{fmt.Sprintf("messages, worst case (the lowest id calls, the highest has crashed)=%d", n*n-n-1)}
		}, ""},
	} {
		t.Run(tc.alg+" "+tc.workload, func(t *testing.T) {
			cq, perr := ParseQuery(url.Values{"alg": {tc.alg}, "n": {"4-8"}, "workload": {tc.workload}, "seeds": {"3"}}, e.Limits())
			if perr != nil {
				t.Fatal(perr)
			}
			res, err := e.work(context.Background(), cq)
			if err != nil {
				t.Fatal(err)
			}
			for n := 4; n <= 8; n++ {
				c := res.Cells[tc.alg][n]
				got := figures(c.Theory[cost.ElectionMessages])
				if strings.Join(got, "; ") != strings.Join(tc.want(n), "; ") {
					t.Errorf("N=%d: drawn against %q, want %q", n, got, tc.want(n))
				}
				if tc.near == "" {
					continue
				}
				m, ok := c.Values[cost.ElectionMessages].Mean()
				for _, th := range c.Theory[cost.ElectionMessages] {
					if th.Name == tc.near && (!ok || m < 0.7**th.Value || m > 1.25**th.Value) {
						t.Errorf("N=%d: measured %.1f (%v), the figure says %g", n, m, ok, *th.Value)
					}
				}
			}
		})
	}
}
