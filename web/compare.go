package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/sim"
)

// The compare page (/compare) runs algorithms headless for a range of N, a workload
// and several seeds, and draws what they measured beside the notes' formulas. All its
// choices are query parameters, so the page is a link to share.

// Limits of one comparison: the server does the work on the request, so it is capped.
const (
	compareMaxN     = 32
	compareMaxSizes = 16
	compareMaxSeeds = 10
	compareMaxRuns  = 300
	// compareMaxWork bounds the sum over runs of N² (doubled under heavy load), which
	// tracks a run's cost: about 8 s on two cores for the costliest algorithms.
	compareMaxWork   = 200_000
	compareMaxEvents = 300_000 // per run
	compareTimeout   = 30 * time.Second
)

// The network every comparison runs on: the notes' T is its mean delay, 2.
var compareNet = sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true}

const compareCS = 2

var compareDefaults = url.Values{
	"alg": {"ricart-agrawala", "central", "lamport"}, "n": {"3-9"}, "workload": {"light"}, "seeds": {"3"},
}

// compareQuery is a parsed /compare URL.
type compareQuery struct {
	Specs    []*sim.Spec
	Ns       []int
	Workload string
	Seeds    int
}

// paramError is a bad query parameter: the page says which and why.
type paramError struct{ Param, Reason string }

func (e *paramError) Error() string { return e.Param + ": " + e.Reason }

func badParam(param, format string, args ...any) *paramError {
	return &paramError{Param: param, Reason: fmt.Sprintf(format, args...)}
}

// parseCompare reads the query; nothing given means the defaults.
func parseCompare(q url.Values) (compareQuery, *paramError) {
	for key := range q {
		switch key {
		case "alg", "n", "workload", "seeds":
		default:
			return compareQuery{}, badParam(key, "unknown parameter (allowed: alg, n, workload, seeds)")
		}
	}
	get := func(key string) []string {
		if v, ok := q[key]; ok {
			return v
		}
		return compareDefaults[key]
	}
	var cq compareQuery
	for _, slug := range get("alg") {
		spec, ok := algorithms.Lookup(slug)
		if !ok {
			return cq, badParam("alg", "%q is not an algorithm (allowed: %s)", slug, strings.Join(algorithms.Slugs(), ", "))
		}
		if !slices.Contains(cq.Specs, spec) {
			cq.Specs = append(cq.Specs, spec)
		}
	}
	if len(cq.Specs) == 0 {
		return cq, badParam("alg", "choose at least one algorithm")
	}
	ns, err := parseSizes(lastOf(get("n")))
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
	if convErr != nil || seeds < 1 || seeds > compareMaxSeeds {
		return cq, badParam("seeds", "%q is not a number of seeds from 1 to %d", lastOf(get("seeds")), compareMaxSeeds)
	}
	cq.Seeds = seeds
	if runs := len(cq.Specs) * len(cq.Ns) * cq.Seeds; runs > compareMaxRuns {
		return cq, badParam("n", "%d algorithms × %d sizes × %d seeds is %d runs; the server does at most %d per page: choose fewer sizes, seeds or algorithms",
			len(cq.Specs), len(cq.Ns), cq.Seeds, runs, compareMaxRuns)
	}
	if w := cq.work(); w > compareMaxWork {
		return cq, badParam("n", "these runs are too big to do on a page (%d%% of the limit: large N cost about N² each, twice that under heavy load): choose smaller N, fewer seeds or fewer algorithms",
			100*w/compareMaxWork)
	}
	return cq, nil
}

// work estimates the cost of the runs, in the unit of compareMaxWork.
func (cq compareQuery) work() int {
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

// parseSizes reads "3-9", "4,6,8" or a mix ("3-5,8").
func parseSizes(s string) ([]int, *paramError) {
	var out []int
	bad := func() *paramError {
		return badParam("n", "%q is not a range of N (write 3-9 or 4,6,8; each from %d to %d, at most %d sizes)", s, sim.MinNodes, compareMaxN, compareMaxSizes)
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		if !isRange {
			hi = lo
		}
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a > b || a < sim.MinNodes || b > compareMaxN {
			return nil, bad()
		}
		for n := a; n <= b; n++ {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
			if len(out) > compareMaxSizes {
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

// canonical is the query in a fixed form: the cache key and the shareable link.
func (cq compareQuery) canonical() string {
	v := url.Values{}
	for _, s := range cq.Specs {
		v.Add("alg", s.Slug)
	}
	v.Set("n", sizesString(cq.Ns))
	v.Set("workload", cq.Workload)
	v.Set("seeds", strconv.Itoa(cq.Seeds))
	return v.Encode()
}

// sizesString writes sizes back as ranges: 3-9 or 3-5,8.
func sizesString(ns []int) string {
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

// workloadConfig builds one run of a comparison.
func workloadConfig(spec *sim.Spec, n int, workload string, seed uint64) (sim.Config, error) {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = i
	}
	var params any
	if spec.ParseParams != nil {
		var err error
		if params, err = spec.ParseParams(nil, ids); err != nil {
			return sim.Config{}, err
		}
	}
	cfg := sim.Config{Spec: spec, IDs: ids, Params: params, Seed: seed, Network: compareNet, CS: compareCS,
		MaxEvents: compareMaxEvents, Pending: sim.MaxTime}
	r := rand.New(rand.NewPCG(seed, 0xc0ffee))
	dmax := compareNet.DelayMax
	if spec.Family == sim.Election {
		cfg.CS = 0
		callers := ids
		// The ring elections assume nobody fails during an election, and without
		// acknowledgements a crashed process would swallow it: only an algorithm whose
		// notes start from a crashed leader (Bully) gets one.
		if spec.CrashLeaderFirst {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 0, Do: sim.ActCrash, Node: n - 1})
			callers = ids[:n-1]
		}
		if workload == "light" {
			callers = []int{callers[r.IntN(len(callers))]}
		}
		for _, i := range callers {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 1, Do: sim.ActElect, Node: i})
		}
		cfg.Until = 20 * n * (dmax + 2) * 4
		return cfg, nil
	}
	if workload == "light" {
		// One request at a time, long after the previous one has been served: room for
		// the token to come round the whole ring.
		gap := compareCS + (n+4)*(dmax+2)
		requests := max(6, 2*n)
		for k := range requests {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 1 + k*gap, Do: sim.ActRequest, Node: r.IntN(n)})
		}
		cfg.Until = 1 + (requests+1)*gap
		return cfg, nil
	}
	// Heavy: every process asks again soon after it has left (a request while it
	// still waits or holds the CS is skipped), for long enough that each one enters a
	// few times; then the queue drains.
	period := compareCS + dmax
	span := 2 * n * (compareCS + 2*dmax)
	for i := range n {
		for t := r.IntN(period); t < span; t += period {
			cfg.Actions = append(cfg.Actions, sim.Action{At: t, Do: sim.ActRequest, Node: i})
		}
	}
	cfg.Until = span + n*(compareCS+4*dmax+4) + 50
	return cfg, nil
}

// cell is what one algorithm measured at one N, over the seeds.
type cell struct {
	Runs, Failed         int
	Entries, Unserved    int
	Checked, Violations  int
	Elections, Unsettled int
	Values               map[string]agg // metric key -> over the seeds
	Theory               map[string][]cost.Theory
	FirstError           string
	ViolationSeed        uint64 // the first seed whose run broke the ordering
}

// agg aggregates one metric's per-run means (in T for time metrics).
type agg struct {
	N             int
	Sum, Min, Max float64
}

func (a *agg) add(v float64) {
	if a.N == 0 {
		a.Min, a.Max = v, v
	}
	a.N++
	a.Sum += v
	a.Min = min(a.Min, v)
	a.Max = max(a.Max, v)
}

func (a agg) mean() (float64, bool) {
	if a.N == 0 {
		return 0, false
	}
	return a.Sum / float64(a.N), true
}

// compareResult is every cell of a comparison.
type compareResult struct {
	Query    compareQuery
	Cells    map[string]map[int]*cell // slug -> N -> cell
	Runs     int
	Elapsed  time.Duration
	Computed time.Time
}

type job struct {
	spec *sim.Spec
	n    int
	seed uint64
}

// compareSlots bounds the comparisons computed at once, whatever the number of
// requests; each uses up to GOMAXPROCS goroutines.
var compareSlots = make(chan struct{}, 2)

// runCompare does every run of cq, in parallel, until done or ctx ends.
func runCompare(ctx context.Context, cq compareQuery) (*compareResult, error) {
	select {
	case compareSlots <- struct{}{}:
		defer func() { <-compareSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	start := time.Now()
	var jobs []job
	for _, spec := range cq.Specs {
		for _, n := range cq.Ns {
			for s := range cq.Seeds {
				jobs = append(jobs, job{spec, n, uint64(s + 1)})
			}
		}
	}
	results := make([]cost.Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				j := jobs[k]
				cfg, err := workloadConfig(j.spec, j.n, cq.Workload, j.seed)
				if err == nil {
					results[k], err = cost.Replay(cfg, nil, math.MaxInt)
				}
				errs[k] = err
			}
		}()
	}
	var err error
feed:
	for k := range jobs {
		select {
		case next <- k:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res := &compareResult{Query: cq, Cells: map[string]map[int]*cell{}, Runs: len(jobs), Computed: time.Now()}
	for k, j := range jobs {
		byN := res.Cells[j.spec.Slug]
		if byN == nil {
			byN = map[int]*cell{}
			res.Cells[j.spec.Slug] = byN
		}
		c := byN[j.n]
		if c == nil {
			c = &cell{Values: map[string]agg{}, Theory: map[string][]cost.Theory{}}
			byN[j.n] = c
		}
		c.add(results[k], errs[k], j.seed)
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

func (c *cell) add(r cost.Result, err error, seed uint64) {
	c.Runs++
	if err != nil {
		c.Failed++
		if c.FirstError == "" {
			c.FirstError = fmt.Sprintf("seed %d: %v", seed, err)
		}
		if !errors.Is(err, sim.ErrEventLimit) {
			return
		}
	}
	c.Entries += r.Entries
	c.Unserved += r.Unserved
	if o := r.Ordering; o != nil {
		c.Checked += o.Checked
		c.Violations += o.Violations
		if o.Violations > 0 && c.ViolationSeed == 0 {
			c.ViolationSeed = seed
		}
	}
	for _, el := range r.Elections {
		if el.Settled != nil {
			c.Elections++
		} else {
			c.Unsettled++
		}
	}
	for _, m := range r.Metrics {
		c.Theory[m.Key] = m.Theory
		v := m.Mean
		if m.Unit == cost.UnitTime {
			v = m.MeanT
		}
		if v == nil {
			continue
		}
		a := c.Values[m.Key]
		a.add(*v)
		c.Values[m.Key] = a
	}
}

// compareCache keeps recent comparisons: a shared link opened by a whole class is
// computed once. Results depend only on the canonical query.
var compareCache = struct {
	sync.Mutex
	m     map[string]*compareResult
	order []string
}{m: map[string]*compareResult{}}

const compareCacheSize = 32

func cachedCompare(ctx context.Context, cq compareQuery) (*compareResult, error) {
	key := cq.canonical()
	compareCache.Lock()
	res, ok := compareCache.m[key]
	compareCache.Unlock()
	if ok {
		return res, nil
	}
	res, err := runCompare(ctx, cq)
	if err != nil {
		return nil, err
	}
	compareCache.Lock()
	defer compareCache.Unlock()
	if _, ok := compareCache.m[key]; !ok {
		compareCache.m[key] = res
		compareCache.order = append(compareCache.order, key)
		if len(compareCache.order) > compareCacheSize {
			delete(compareCache.m, compareCache.order[0])
			compareCache.order = compareCache.order[1:]
		}
	}
	return res, nil
}

// handleCompare serves /compare.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	cq, perr := parseCompare(r.URL.Query())
	form := newCompareForm(r.URL.Query(), cq)
	if perr != nil {
		form.Error = perr
		s.render(w, r, http.StatusBadRequest, comparePageView(comparePage{Form: form}))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), compareTimeout)
	defer cancel()
	res, err := cachedCompare(ctx, cq)
	if err != nil {
		if r.Context().Err() != nil {
			return // the visitor left
		}
		w.Header().Set("Retry-After", "30")
		form.Error = &paramError{Param: "n", Reason: fmt.Sprintf("the runs took longer than %s (%v): choose fewer sizes, seeds or algorithms", compareTimeout, err)}
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
	Error    *paramError
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

func newCompareForm(q url.Values, cq compareQuery) compareForm {
	f := compareForm{N: "3-9", Workload: "light", Seeds: "3"}
	chosen := map[string]bool{}
	for _, s := range cq.Specs {
		chosen[s.Slug] = true
	}
	if len(cq.Specs) == 0 { // a bad query: keep what was asked for
		for _, a := range q["alg"] {
			chosen[a] = true
		}
		if _, ok := q["alg"]; !ok {
			for _, a := range compareDefaults["alg"] {
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
		f.N = sizesString(cq.Ns)
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

func buildComparePage(form compareForm, res *compareResult) comparePage {
	cq := res.Query
	p := comparePage{Form: form, Link: "/compare?" + cq.canonical()}
	p.Summary = fmt.Sprintf("%d runs in %s, on N = %s with %d seed%s each. Every run: delays uniform in [%d, %d] time units, FIFO channels, %d time units in the CS; T, the notes' message time, is the mean delay %g.",
		res.Runs, res.Elapsed.Round(1e6), sizesString(cq.Ns), cq.Seeds, plural(cq.Seeds), compareNet.DelayMin, compareNet.DelayMax, compareCS, cost.MeanDelay(compareNet))
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

func buildChart(id, title, ylabel, key string, specs []*sim.Spec, ns []int, res *compareResult) chart {
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
			if v, ok := c.Values[key].mean(); ok {
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

func buildTable(fam sim.Family, specs []*sim.Spec, ns []int, res *compareResult) ([]string, []tableRow) {
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

func measuredCell(a agg) tableCell {
	m, ok := a.mean()
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
