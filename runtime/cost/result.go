package cost

// What a run measured: the Result a Collector reports, and how it is put together
// from the collector's counters.

import (
	"math"
	"slices"
	"strconv"

	"github.com/teach-dist/playground/runtime/sim"
)

// Metric keys (stable: the web page and the compare page use them).
const (
	PerEntry         = "messages-per-entry"
	ToEnter          = "messages-to-enter"
	OnExit           = "messages-on-exit"
	ClientDelay      = "client-delay"
	ExitDelay        = "exit-delay"
	SyncDelay        = "sync-delay"
	ElectionMessages = "election-messages"
	ElectionTime     = "election-time"
)

// Units of a metric.
const (
	UnitMessages = "messages"
	UnitTime     = "time" // virtual time; MeanT/MaxT give it in message times (T)
)

// Ordering verdicts.
const (
	OrderKept    = "kept"    // every grant came after the requests that happened before it
	OrderBroken  = "broken"  // some grant overtook a request that happened before it
	OrderNothing = "nothing" // no request happened before another one that was granted
)

// Result is what a run measured, beside the theory.
type Result struct {
	Algorithm string  `json:"algorithm"`
	Family    string  `json:"family"`
	N         int     `json:"n"`
	Step      int     `json:"step"` // the run was measured up to this step (-1: unknown)
	T         int     `json:"t"`    // virtual time of the last event
	MeanDelay float64 `json:"meanDelay"`

	Messages   int `json:"messages"`   // algorithm messages sent
	Background int `json:"background"` // background messages (heartbeats), not counted
	Requests   int `json:"requests"`
	Entries    int `json:"entries"`
	Exits      int `json:"exits"`
	Unserved   int `json:"unserved"` // requests still waiting at the end (live processes)

	Metrics   []Metric   `json:"metrics"`
	Ordering  *Ordering  `json:"ordering,omitempty"`  // mutex only
	Elections []Election `json:"elections,omitempty"` // election only, at most MaxElections
}

// MaxElections bounds the election list of a Result; the metrics count them all.
const MaxElections = 50

// Metric is one measured figure and the notes' figures for it.
type Metric struct {
	Key     string   `json:"key"`
	Name    string   `json:"name"`
	Unit    string   `json:"unit"`
	Samples int      `json:"samples"`
	Mean    *float64 `json:"mean"` // nil: nothing measured yet
	Max     *float64 `json:"max,omitempty"`
	MeanT   *float64 `json:"meanT,omitempty"` // time metrics: mean in message times
	MaxT    *float64 `json:"maxT,omitempty"`
	Theory  []Theory `json:"theory"`
	Note    string   `json:"note,omitempty"`
	// TheoryN is the n the figures of Theory are evaluated at, and TheoryOf says which n
	// it is ("n = 5 live processes"): all the processes of the run, or for an election
	// whose formulas count the live ring (sim.Spec.CostsCountLive), those alive when it
	// started.
	TheoryN  int    `json:"theoryN"`
	TheoryOf string `json:"theoryOf"`
}

// Theory is one of the algorithm's costs, evaluated for the run's N: the notes'
// formulas (Notes, as the notes write them) and the project's own derived figure
// (Formula, Value) kept apart, so a page never shows one under the other's name.
type Theory struct {
	Name    string       `json:"name"`
	Notes   []NoteFigure `json:"notes"`
	Formula string       `json:"formula"` // derived by the project; "" when it derives none
	Value   *float64     `json:"value"`   // Formula for N (delays in T); nil: no single number
	// Time is Value in time units (Value × T, the run's mean delay), for delays.
	Time *float64 `json:"time,omitempty"`
	// Range is Formula for N when it is a range (sim.Cost.Low and High); Value is then
	// nil.
	Range *Range `json:"range,omitempty"`
}

// Range is a figure that lies between two bounds: a band on the charts.
type Range struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
	// LowTime and HighTime are the bounds in time units, for delays (as Theory.Time).
	LowTime  *float64 `json:"lowTime,omitempty"`
	HighTime *float64 `json:"highTime,omitempty"`
}

// NoteFigure is one formula of the notes, evaluated like Theory's.
type NoteFigure struct {
	In      []string `json:"in"` // the notes that give it: "000" ... "004"
	Formula string   `json:"formula"`
	Value   *float64 `json:"value"`
	Time    *float64 `json:"time,omitempty"`
}

// Definitions of ordering a verdict can judge (Ordering.Definition).
const (
	// OrderHappenedBefore: "requests to enter the CS are served in order of arrival
	// (according to the happened-before relation)" (002); 003 likewise.
	OrderHappenedBefore = "happened-before"
	// OrderBakery: 002's property of the bakery, "if p_i enters the bakery before p_j
	// enters the doorway, then p_i will enter the CS before p_j".
	OrderBakery = "bakery"
)

// Ordering is the verdict on the notes' ordering property.
type Ordering struct {
	// Definition is the property judged: OrderHappenedBefore, or OrderBakery for an
	// algorithm that declares its doorway (sim.Spec.DoorwayEnds).
	Definition string     `json:"definition"`
	Verdict    string     `json:"verdict"`
	Checked    int        `json:"checked"`    // grants that had a causally earlier request of another process
	Violations int        `json:"violations"` // grants that overtook such a request
	First      *Violation `json:"first,omitempty"`
}

// Violation is a grant that overtook a request which happened before it.
type Violation struct {
	Earlier Point `json:"earlier"` // the request that happened before, still waiting
	Later   Point `json:"later"`   // the request granted first
	Grant   Point `json:"grant"`   // the later request's entry to the CS
}

// Point is one trace event: its process id, seq, step (-1 if unknown) and time.
type Point struct {
	Node int   `json:"node"`
	Seq  int64 `json:"seq"`
	Step int   `json:"step"`
	T    int   `json:"t"`
}

// Election is one election: from the first call (or the first message of a process
// that started one by itself) until every live process names the same live leader.
type Election struct {
	Start    Point  `json:"start"`
	Settled  *Point `json:"settled,omitempty"`
	Leader   int    `json:"leader"` // -1 until settled
	Messages int    `json:"messages"`
	Time     int    `json:"time"` // settled.t - start.t, 0 until settled
	Live     int    `json:"live"` // processes alive when it started
}

// Result returns the metrics so far; the collector can go on reading events.
func (c *Collector) Result() Result {
	n := len(c.ids)
	exitMsgs := c.exitMsgs + c.act.exitSends()
	res := Result{
		Algorithm: c.spec.Slug, Family: string(c.spec.Family), N: n, Step: c.step, T: c.lastT,
		MeanDelay: c.meanDelay, Messages: c.msgs, Background: c.bgMsgs,
		Requests: c.requests, Entries: c.entries, Exits: c.exits,
	}
	for i, p := range c.pending {
		if p != nil && c.alive[i] {
			res.Unserved++
		}
	}
	if c.spec.Family == sim.Mutex {
		perEntry := Metric{Key: PerEntry, Name: "messages per CS entry (all messages / entries)", Unit: UnitMessages, Samples: c.entries}
		if c.entries > 0 {
			perEntry.Mean = ptr(float64(c.msgs) / float64(c.entries))
		}
		toEnter := c.statMetric(ToEnter, "messages to enter (sent while a lone request waited)", UnitMessages, c.toEnter)
		if c.toEnter.n == 0 && c.entries > 0 {
			toEnter.Note = "every entry so far had competition: measured only for a request that waited alone"
		}
		onExit := Metric{Key: OnExit, Name: "messages sent on leaving the CS, per exit", Unit: UnitMessages, Samples: c.exits}
		if c.exits > 0 {
			onExit.Mean = ptr(float64(exitMsgs) / float64(c.exits))
		}
		client := c.statMetric(ClientDelay, "client delay (request to entry)", UnitTime, c.client)
		sync := c.statMetric(SyncDelay, "synchronisation delay (exit to the next entry of a waiting process)", UnitTime, c.sync)
		if c.sync.n == 0 && c.entries > 0 {
			sync.Note = "needs a process waiting when another leaves the CS"
		}
		exitDelay := c.statMetric(ExitDelay, "exit delay (leaving the CS to the arrival of the last message sent on leaving)", UnitTime, c.exitDelay)
		if c.exitDelay.n == 0 && c.exits > 0 {
			exitDelay.Note = "no exit has sent a message yet (a coordinator or a token holder that keeps the token sends none)"
		}
		res.Metrics = []Metric{perEntry, toEnter, onExit, client, exitDelay, sync}
		o := &Ordering{Definition: OrderHappenedBefore, Checked: c.checked, Violations: c.violations, First: c.first}
		if c.spec.DoorwayEnds != "" {
			o.Definition = OrderBakery
		}
		switch {
		case c.violations > 0:
			o.Verdict = OrderBroken
		case c.checked > 0:
			o.Verdict = OrderKept
		default:
			o.Verdict = OrderNothing
		}
		res.Ordering = o
	} else {
		var msgs, time stat
		for _, el := range c.elections {
			if el.Settled != nil {
				msgs.add(float64(el.Messages))
				time.add(float64(el.Time))
			}
		}
		em := c.statMetric(ElectionMessages, "messages per election (until the next one starts)", UnitMessages, msgs)
		et := c.statMetric(ElectionTime, "election time (call to every live process knowing the leader)", UnitTime, time)
		res.Metrics = []Metric{em, et}
		res.Elections = c.elections[:min(len(c.elections), MaxElections)]
		res.Elections = slices.Clone(res.Elections)
	}
	tn, of := c.TheoryN()
	for k := range res.Metrics {
		res.Metrics[k].Theory = theoryFor(c.spec, res.Metrics[k].Key, tn, c.meanDelay, c.params)
		res.Metrics[k].TheoryN, res.Metrics[k].TheoryOf = tn, of
	}
	return res
}

// TheoryN is the n the run's cost formulas are evaluated at, and the words that say
// which n it is. It is the run's N, except for an election whose formulas count the live
// ring (sim.Spec.CostsCountLive): there it is the processes alive when the first election
// started (alive now, before any election).
func (c *Collector) TheoryN() (int, string) {
	n := len(c.ids)
	if c.spec.Family != sim.Election || !c.spec.CostsCountLive {
		return n, NOf(n, n)
	}
	live := 0
	if len(c.elections) > 0 {
		live = c.elections[0].Live
	} else {
		for _, a := range c.alive {
			if a {
				live++
			}
		}
	}
	return live, NOf(live, n)
}

// NOf says which n a formula is evaluated at: "n = 6 processes", or "n = 5 live
// processes" when live is fewer than all.
func NOf(live, all int) string {
	if live == all {
		return "n = " + strconv.Itoa(all) + " processes"
	}
	return "n = " + strconv.Itoa(live) + " live processes"
}

func (c *Collector) statMetric(key, name, unit string, s stat) Metric {
	m := Metric{Key: key, Name: name, Unit: unit, Samples: s.n}
	if s.n == 0 {
		return m
	}
	m.Mean = ptr(s.sum / float64(s.n))
	m.Max = ptr(s.max)
	if unit == UnitTime && c.meanDelay > 0 {
		m.MeanT = ptr(*m.Mean / c.meanDelay)
		m.MaxT = ptr(s.max / c.meanDelay)
	}
	return m
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Get returns the metric with this key, or nil.
func (r *Result) Get(key string) *Metric {
	for k := range r.Metrics {
		if r.Metrics[k].Key == key {
			return &r.Metrics[k]
		}
	}
	return nil
}
