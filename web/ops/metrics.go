package ops

import (
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The server's Prometheus metrics, served at /metrics (docs/operations.md). No metric
// has a per-session, per-lecture or per-client label: their number is bounded by the
// code, not by the traffic. Each Server has its own registry, so tests do not share
// counters.

// Metrics holds the metrics. Its methods are the hooks other parts of the server
// call; a nil *Metrics is valid and counts nothing.
type Metrics struct {
	reg *prometheus.Registry

	sessionStarts prometheus.Counter
	traceEvents   prometheus.Counter
	slowDropped   prometheus.Counter
	sockets       *prometheus.GaugeVec
	panics        *prometheus.CounterVec
	rateLimitedN  *prometheus.CounterVec
	refusedN      *prometheus.CounterVec
	evictedN      *prometheus.CounterVec
	lecEvictedN   prometheus.Counter
	explorerRuns  *prometheus.CounterVec
	followers     prometheus.Gauge
	restingN      prometheus.Gauge
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	ready         atomic.Bool
}

// Gauges are what the metrics read when scraped.
type Gauges struct {
	Sessions Counts
	Lectures func() int // live lectures
}

// NewMetrics registers every metric on a registry of its own; the server is ready.
func NewMetrics(g Gauges) *Metrics {
	o := &Metrics{reg: prometheus.NewRegistry()}
	f := promFactory{o.reg}
	o.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f.gaugeFunc("playground_sessions", "Live sessions (runs) on this server.", func() float64 { return float64(g.Sessions.Len()) })
	f.gaugeFunc("playground_sessions_max", "The cap on live sessions (--max-sessions).", func() float64 { return float64(g.Sessions.Max()) })
	f.gaugeFunc("playground_lectures", "Live lectures on this server.", func() float64 { return float64(g.Lectures()) })
	f.gaugeFunc("playground_ready", "1 while the server takes new work, 0 while it shuts down (/readyz).", func() float64 {
		if o.ready.Load() {
			return 1
		}
		return 0
	})
	o.sessionStarts = f.counter("playground_session_starts_total", "Sessions started.")
	o.traceEvents = f.counter("playground_trace_events_total", "Trace events published by live sessions to their viewers (rate() of it is events per second).")
	o.slowDropped = f.counter("playground_slow_clients_dropped_total", "WebSocket clients closed with 1013 because their send queue filled.")
	o.sockets = f.gaugeVec("playground_websockets", "Open WebSocket connections, by socket (session, presenter, follower).", "socket")
	o.panics = f.counterVec("playground_panics_total", "Panics contained: in a session's run (that session ended) or in an HTTP handler (that request failed).", "where")
	o.rateLimitedN = f.counterVec("playground_rate_limited_total", "Requests and WebSocket frames refused by a per-client rate limit, by limit.", "limit")
	o.lecEvictedN = f.counter("playground_lectures_evicted_total", "Lectures ended on a full server to make room for another client's (--lecture-share).")
	o.evictedN = f.counterVec("playground_sessions_evicted_total", "Sessions ended on a full server to make room for another client's, by whether one was watched.", "watched")
	o.refusedN = f.counterVec("playground_capacity_refusals_total", "Requests refused at a cap (sessions, viewers, lectures, followers).", "cap")
	o.explorerRuns = f.counterVec("playground_explorer_runs_total", "Explorer searches run from the browser, by outcome.", "outcome")
	o.restingN = f.gauge("playground_sessions_resting", "Live sessions whose still run is at rest: only its recipe kept, rebuilt by replay when next needed.")
	o.followers = f.gauge("playground_lecture_followers", "Followers attached to the lectures of this server.")
	o.requests = f.counterVec("playground_http_requests_total", "HTTP requests by route pattern and status code.", "route", "code")
	o.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "playground_http_request_duration_seconds", Help: "Time to answer an HTTP request (WebSockets excluded), by route pattern.",
		Buckets: []float64{.001, .005, .025, .1, .5, 2.5, 10},
	}, []string{"route"})
	o.reg.MustRegister(o.duration)
	for _, l := range []string{"pages", "sessions", "api", "sockets", "commands"} {
		o.rateLimitedN.WithLabelValues(l) // present at 0, so a rate() has a start
	}
	for _, c := range []string{"sessions", "viewers", "lectures", "followers"} {
		o.refusedN.WithLabelValues(c)
	}
	for _, w := range []string{"session", "http"} {
		o.panics.WithLabelValues(w)
	}
	o.ready.Store(true)
	return o
}

type promFactory struct{ reg *prometheus.Registry }

func (f promFactory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f promFactory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f promFactory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f promFactory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

func (f promFactory) gaugeFunc(name, help string, fn func() float64) {
	f.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// Handler serves /metrics.
func (o *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// SetReady says whether the server takes new work (false once shutdown began).
func (o *Metrics) SetReady(ready bool) { o.ready.Store(ready) }

// IsReady reports what SetReady said last (true from the start).
func (o *Metrics) IsReady() bool { return o.ready.Load() }

// Hooks. Each is safe for concurrent use and on a nil *Metrics.

func (o *Metrics) SessionStarted() {
	if o != nil {
		o.sessionStarts.Inc()
	}
}

func (o *Metrics) Resting(yes bool) {
	switch {
	case o == nil:
	case yes:
		o.restingN.Inc()
	default:
		o.restingN.Dec()
	}
}

func (o *Metrics) EventsPublished(n int) {
	if o != nil && n > 0 {
		o.traceEvents.Add(float64(n))
	}
}

func (o *Metrics) SlowClient() {
	if o != nil {
		o.slowDropped.Inc()
	}
}

// SocketOpened counts an open WebSocket of this kind until the returned func runs.
func (o *Metrics) SocketOpened(kind string) func() {
	if o == nil {
		return func() {}
	}
	g := o.sockets.WithLabelValues(kind)
	g.Inc()
	return g.Dec
}

func (o *Metrics) Panicked(where string) {
	if o != nil {
		o.panics.WithLabelValues(where).Inc()
	}
}

func (o *Metrics) RateLimited(limit string) {
	if o != nil {
		o.rateLimitedN.WithLabelValues(limit).Inc()
	}
}

// Refused counts a request turned away at a cap: "sessions", "viewers", "lectures" or
// "followers".
func (o *Metrics) Refused(cap string) {
	if o != nil {
		o.refusedN.WithLabelValues(cap).Inc()
	}
}

// LectureEvicted counts a lecture ended on a full server to make room for another
// client's.
func (o *Metrics) LectureEvicted() {
	if o != nil {
		o.lecEvictedN.Inc()
	}
}

// Evicted counts a session ended on a full server to make room for another client's
// (runtime/session/share.go), by whether it still had a viewer.
func (o *Metrics) Evicted(watched bool) {
	if o != nil {
		o.evictedN.WithLabelValues(strconv.FormatBool(watched)).Inc()
	}
}

// ExplorerRun counts one search of the explorer (web/explore.go) by its outcome: "ok"
// (every property holds), "violation", "bounded" (a limit on states, memory or time
// stopped it), "cancelled" or "error". Anything else counts as "other", which keeps
// the label's values few.
func (o *Metrics) ExplorerRun(outcome string) {
	if o == nil {
		return
	}
	switch outcome {
	case "ok", "violation", "bounded", "cancelled", "error":
	default:
		outcome = "other"
	}
	o.explorerRuns.WithLabelValues(outcome).Inc()
}

// FollowerJoined counts a lecture follower until the returned func runs: lecture code
// calls `defer metrics.FollowerJoined()()` once Follow succeeded.
func (o *Metrics) FollowerJoined() func() {
	if o == nil {
		return func() {}
	}
	o.followers.Inc()
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			o.followers.Dec()
		}
	}
}

// request counts one answered request under its route pattern (bounded: the routes
// of the route table, or "unmatched").
func (o *Metrics) request(route string, status int, seconds float64, socket bool) {
	if o == nil {
		return
	}
	o.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	if !socket {
		o.duration.WithLabelValues(route).Observe(seconds)
	}
}
