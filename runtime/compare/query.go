// Package compare runs algorithms headless for a range of N, a workload and several
// seeds, and aggregates what runtime/cost measured: the engine behind the /compare
// page. A comparison is named by its query, so the page is a link to share and a
// result can be cached under the query's canonical form.
package compare

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// Limits of one comparison: a server does the work on the request, so it is capped.
type Limits struct {
	MaxN     int
	MaxSizes int
	MaxSeeds int
	MaxRuns  int
	// MaxWork bounds the sum over runs of N² (doubled under heavy load), which
	// tracks a run's cost: about 8 s on two cores for the costliest algorithms.
	MaxWork   int
	MaxEvents int // per run
}

// DefaultLimits are the limits of the playground's /compare page.
func DefaultLimits() Limits {
	return Limits{MaxN: 32, MaxSizes: 16, MaxSeeds: 10, MaxRuns: 300, MaxWork: 200_000, MaxEvents: 300_000}
}

// Defaults is what a query that leaves a parameter out compares.
func Defaults() url.Values {
	return url.Values{"alg": {"ricart-agrawala", "central", "lamport"}, "n": {"3-9"}, "workload": {"light"}, "seeds": {"3"}}
}

// Query is a parsed comparison.
type Query struct {
	Specs    []*sim.Spec
	Ns       []int
	Workload string // "light" or "heavy"
	Seeds    int
}

// ParamError is a bad query parameter: the page says which and why.
type ParamError struct{ Param, Reason string }

func (e *ParamError) Error() string { return e.Param + ": " + e.Reason }

func badParam(param, format string, args ...any) *ParamError {
	return &ParamError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// ParseQuery reads the query within lim; a parameter left out takes its default.
func ParseQuery(q url.Values, lim Limits) (Query, *ParamError) {
	for key := range q {
		switch key {
		case "alg", "n", "workload", "seeds":
		default:
			return Query{}, badParam(key, "unknown parameter (allowed: alg, n, workload, seeds)")
		}
	}
	defaults := Defaults()
	get := func(key string) []string {
		if v, ok := q[key]; ok {
			return v
		}
		return defaults[key]
	}
	var cq Query
	for _, slug := range get("alg") {
		spec, ok := algorithms.Lookup(slug)
		if !ok {
			return cq, badParam("alg", "%q is not an algorithm (allowed: %s)", slug, strings.Join(algorithms.Slugs(), ", "))
		}
		if !slices.ContainsFunc(cq.Specs, func(s *sim.Spec) bool { return s.Slug == slug }) {
			cq.Specs = append(cq.Specs, spec)
		}
	}
	if len(cq.Specs) == 0 {
		return cq, badParam("alg", "choose at least one algorithm")
	}
	ns, err := ParseSizes(lastOf(get("n")), lim)
	if err != nil {
		return cq, err
	}
	cq.Ns = ns
	switch w := lastOf(get("workload")); w {
	case "light", "heavy":
		cq.Workload = w
	default:
		return cq, badParam("workload", "%q is not a workload (allowed: light, heavy)", w)
	}
	seeds, convErr := strconv.Atoi(lastOf(get("seeds")))
	if convErr != nil || seeds < 1 || seeds > lim.MaxSeeds {
		return cq, badParam("seeds", "%q is not a number of seeds from 1 to %d", lastOf(get("seeds")), lim.MaxSeeds)
	}
	cq.Seeds = seeds
	if runs := len(cq.Specs) * len(cq.Ns) * cq.Seeds; runs > lim.MaxRuns {
		return cq, badParam("n", "%d algorithms × %d sizes × %d seeds is %d runs; the server does at most %d per page: choose fewer sizes, seeds or algorithms",
			len(cq.Specs), len(cq.Ns), cq.Seeds, runs, lim.MaxRuns)
	}
	if w := cq.work(); w > lim.MaxWork {
		return cq, badParam("n", "these runs are too big to do on a page (%d%% of the limit: large N cost about N² each, twice that under heavy load): choose smaller N, fewer seeds or fewer algorithms",
			100*w/lim.MaxWork)
	}
	return cq, nil
}

// work estimates the cost of the runs, in the unit of Limits.MaxWork.
func (cq Query) work() int {
	w := 0
	for _, n := range cq.Ns {
		w += n * n
	}
	w *= len(cq.Specs) * cq.Seeds
	if cq.Workload == "heavy" {
		w *= 2
	}
	return w
}

func lastOf(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// ParseSizes reads "3-9", "4,6,8" or a mix ("3-5,8") within lim.
func ParseSizes(s string, lim Limits) ([]int, *ParamError) {
	var out []int
	bad := func() *ParamError {
		return badParam("n", "%q is not a range of N (write 3-9 or 4,6,8; each from %d to %d, at most %d sizes)", s, sim.MinNodes, lim.MaxN, lim.MaxSizes)
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a > b || a < sim.MinNodes || b > lim.MaxN {
			return nil, bad()
		}
		for n := a; n <= b; n++ {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
			if len(out) > lim.MaxSizes {
				return nil, bad()
			}
		}
	}
	if len(out) == 0 {
		return nil, bad()
	}
	slices.Sort(out)
	return out, nil
}

// Canonical is the query in a fixed form: the cache key and the shareable link.
func (cq Query) Canonical() string {
	v := url.Values{}
	for _, s := range cq.Specs {
		v.Add("alg", s.Slug)
	}
	v.Set("n", SizesString(cq.Ns))
	v.Set("workload", cq.Workload)
	v.Set("seeds", strconv.Itoa(cq.Seeds))
	return v.Encode()
}

// SizesString writes sizes back as ranges: 3-9 or 3-5,8.
func SizesString(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
