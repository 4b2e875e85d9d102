package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/runtime/fairq"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/pages"
)

// The Explore action (docs/protocol.md, "Explore"): POST /api/sessions/{id}/explore
// runs the exhaustive search on the page's current scenario and streams its progress
// and result as JSON lines. The search is bounded in states, memory and time; a
// session runs one at a time and the server a few at once, handed out by a fair queue
// across clients (a waiting search streams its place: "queued" lines); a client that goes away
// (closes the dialog, leaves the page) cancels it, because the search runs under the
// request's context.

// ExploreLimits bound a search started from the browser (Options.Explore). Zero
// values take the defaults.
type ExploreLimits struct {
	MaxNodes  int           // processes at most (default ExploreNodes)
	MaxStates int64         // states at most (default 3,000,000)
	MaxMemory int64         // bytes at most, all searches together (default 256 MiB): each of AtOnce gets its part
	Timeout   time.Duration // one search at most, once it runs (default 20 s)
	AtOnce    int           // searches on the whole server at once (default 2)
	// Share is how many of the AtOnce slots one client (an IPv4 address or an IPv6
	// /64) holds while another waits (default 1); Queue how many searches one client
	// may have waiting (default 4). Waiting searches are served fairly (runtime/fairq).
	Share, Queue int
	Progress     time.Duration // between progress lines (default 250 ms)
	// Hold, if set, is called when a search gets its slot, before it runs (as
	// compare.Options.Hold): tests of the server hold searches there to keep the
	// slots busy. An error ends the search with it.
	Hold func(ctx context.Context, algorithm string) error
	// AsAsked searches a free setup at the size asked even when it is predicted past
	// the limits (tests of the limits themselves); by default a smaller one is
	// searched instead, and the page is told (fitSize).
	AsAsked bool
}

func (l ExploreLimits) withDefaults() ExploreLimits {
	defaults.Positive(&l.MaxNodes, ExploreNodes)
	defaults.Positive(&l.MaxStates, 3_000_000)
	defaults.Positive(&l.MaxMemory, 256<<20)
	defaults.Positive(&l.Timeout, 20*time.Second)
	defaults.Positive(&l.AtOnce, 2)
	defaults.Positive(&l.Share, 1)
	defaults.Positive(&l.Queue, 4)
	defaults.Positive(&l.Progress, 250*time.Millisecond)
	return l
}

// ExploreNodes is the most processes the browser's Explore takes by default: the
// server refuses more (handleExplore) and the page turns its button off above it
// (pages.Explore.MaxNodes, static/explore.js), the same figure from this constant.
// At five the reductions keep every mutual exclusion algorithm and election under
// the states budget or make it stop there plainly ("bounded", docs/explorer.md).
const ExploreNodes = 5

// page is what the playground page says of the bounds: the Explore button's limit
// and the budgets the dialog shows before a search starts.
func (l ExploreLimits) page() pages.Explore {
	return pages.Explore{MaxNodes: l.MaxNodes, MaxStates: l.MaxStates, MaxMemory: l.MaxMemory, Timeout: int(l.Timeout / time.Second)}
}

// explorations tracks the searches: one per session, waiting or running, and the
// fair queue for the server's few slots.
type explorations struct {
	queue *fairq.Queue
	run   func(context.Context, *scenarios.Scenario, explore.Options) (*explore.Result, error) // explore.Explore; tests gate it
	// stopping ends with the server's drain: searches waiting or running stop then (a
	// search of a source kills its worker), so a shutdown waits for none of them.
	stopping context.Context
	stop     context.CancelFunc

	mu      sync.Mutex
	running map[string]bool
}

func newExplorations(l ExploreLimits, box *sandbox.Pool) explorations {
	stopping, stop := context.WithCancel(context.Background())
	return explorations{queue: fairq.New(fairq.Options{Slots: l.AtOnce, Share: l.Share, PerClient: l.Queue}),
		run: sandboxed(box), running: map[string]bool{}, stopping: stopping, stop: stop}
}

// sandboxed is explore.Explore, but a search of a student's source runs in a sandbox
// worker of its own, which its time limit or its client's leaving kills at once.
func sandboxed(box *sandbox.Pool) func(context.Context, *scenarios.Scenario, explore.Options) (*explore.Result, error) {
	return func(ctx context.Context, sc *scenarios.Scenario, opt explore.Options) (*explore.Result, error) {
		if sc.Source != "" {
			return box.Explore(ctx, sc, opt)
		}
		return explore.Explore(ctx, sc, opt)
	}
}

func (e *explorations) start(session string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running[session] {
		return false
	}
	e.running[session] = true
	return true
}

func (e *explorations) done(session string) {
	e.mu.Lock()
	delete(e.running, session)
	e.mu.Unlock()
}

// exploreLine is one line of the stream: "start", "progress", "result" or "error".
type exploreLine struct {
	Type string `json:"type"`

	// start
	Algorithm string `json:"algorithm,omitempty"`
	Nodes     int    `json:"nodes,omitempty"`
	Workload  string `json:"workload,omitempty"` // what was added to a scenario without one
	MaxStates int64  `json:"maxStates,omitempty"`
	MaxMemory int64  `json:"maxMemory,omitempty"` // bytes, the server's (all searches together)
	Timeout   int    `json:"timeout,omitempty"`   // seconds

	// queued: the search waits for a slot; 1 is next
	Position int `json:"position,omitempty"`

	// resized: the setup asked for is past the server's limits; the search checks
	// Nodes processes instead of Asked (Why says what the asked size would need)
	Asked int    `json:"asked,omitempty"`
	Why   string `json:"why,omitempty"`

	// progress
	States          int64   `json:"states,omitempty"`
	Depth           int     `json:"depth,omitempty"`
	StatesPerSecond float64 `json:"statesPerSecond,omitempty"`

	Result *explore.Result `json:"result,omitempty"`
	// Challenge: whether the result meets the run's challenge, when it has one.
	Challenge *explore.Verdict `json:"challenge,omitempty"`
	Error     string           `json:"error,omitempty"`
	Line      int              `json:"line,omitempty"` // of the run's source, for an error in it
}

func (s *Server) handleExplore(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	w.Header().Set("Cache-Control", "no-store")
	rec, ok := s.runs.Recipe(w, r)
	if !ok {
		return
	}
	sc, err := scenarios.Parse(rec.Setup.Scenario)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	if n := len(rec.Setup.Config.IDs); n > s.opts.Explore.MaxNodes {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": fmt.Sprintf(
			"nodes: %d processes is too many to explore here (at most %d in the browser; the number of orders grows exponentially; use playground explore on the command line)", n, s.opts.Explore.MaxNodes)})
		return
	}
	// A free setup (nothing of its own scheduled, or the page's default workload) may
	// be searched at fewer processes when the asked size does not fit (fitSize).
	var free *scenarios.Scenario
	if len(sc.Events) == 0 || sc.Title == scenarios.DefaultWorkloadTitle {
		c := *sc
		c.Title, c.About, c.Captions = "", "", nil
		free = &c
	}
	sc, added, err := explore.DefaultWorkload(sc)
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"error": err.Error()})
		return
	}
	lim := s.opts.Explore
	if !s.exploring.start(id) {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusConflict, map[string]string{"error": "an exploration of this run is already going on"})
		return
	}
	defer s.exploring.done(id)

	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var mu sync.Mutex // progress comes from the search's goroutine
	send := func(l exploreLine) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(l) // a client gone away cancels the context; nothing to do here
		if flusher != nil {
			flusher.Flush()
		}
	}
	// The search ends when its client goes away or the server shuts down.
	rctx, end := context.WithCancel(r.Context())
	defer end()
	defer context.AfterFunc(s.exploring.stopping, end)()
	shuttingDown := func() bool {
		if s.exploring.stopping.Err() == nil {
			return false
		}
		send(exploreLine{Type: "error", Error: "the server is shutting down: check again in a moment"})
		return true
	}
	// Wait for a slot in the fair queue, telling the page its place as it changes.
	release, err := s.exploring.queue.Acquire(rctx, clientOf(r), func(pos int) {
		send(exploreLine{Type: "queued", Position: pos})
	})
	if err != nil {
		if errors.Is(err, fairq.ErrTooMany) {
			s.metrics.Refused("explorer")
			send(exploreLine{Type: "error", Error: fmt.Sprintf("your network already has %d explorations waiting; wait for one to finish", lim.Queue)})
		}
		shuttingDown()
		return // or the client went away while waiting
	}
	defer release()

	ctx, cancel := context.WithTimeout(rctx, lim.Timeout)
	defer cancel()
	nodes := len(rec.Setup.Config.IDs)
	var res *explore.Result
	if lim.AsAsked {
		free = nil
	}
	if fit := s.fitSize(ctx, free, nodes); fit.nodes < nodes {
		send(exploreLine{Type: "resized", Nodes: fit.nodes, Asked: nodes, Why: fit.why})
		sc, added, res, nodes = fit.sc, fit.added, fit.res, fit.nodes
	}
	send(exploreLine{Type: "start", Algorithm: sc.Algorithm, Nodes: nodes, Workload: added,
		MaxStates: lim.MaxStates, MaxMemory: lim.MaxMemory, Timeout: int(lim.Timeout / time.Second)})
	if res != nil {
		s.sendResult(send, sc, res)
		return
	}
	if lim.Hold != nil {
		if err := lim.Hold(ctx, sc.Algorithm); err != nil {
			if !shuttingDown() {
				send(exploreLine{Type: "error", Error: err.Error()})
			}
			return
		}
	}
	began := time.Now()
	defer func() { s.cpu.Charge(clientOf(r), time.Since(began)) }() // the search is its client's work (runtime/session/cpu.go)
	lift := holdSearchMemory(lim.MaxMemory)
	defer lift()
	res, err = s.exploring.run(ctx, sc, explore.Options{
		MaxStates: lim.MaxStates, MaxMemory: lim.searchBudget(), ProgressEvery: lim.Progress,
		// One worker: a search then takes one core, so the server's searches take
		// at most lim.AtOnce cores together, whatever the machine, and the rest stay
		// free for the runs of every other visitor (each a goroutine of its own).
		// The answer is the same with any number of workers (runtime/explore,
		// parallel.go); more would only make a bounded search fair to no one else.
		Workers: 1,
		Progress: func(p explore.Progress) {
			send(exploreLine{Type: "progress", States: p.States, Depth: p.Depth, StatesPerSecond: p.StatesPerSecond})
		},
	})
	if err != nil || res.Memory >= collectAfter {
		// The search's memory is garbage now, but the collector's target was set
		// at twice the heap it held: the next search in this slot would grow on
		// top of it, and the process hold twice the bound (548 MB for 256 MiB).
		// Collect before the slot is given to the next search.
		runtime.GC()
	}
	if err != nil {
		var ie *explore.InputError
		msg := err.Error()
		if !errors.As(err, &ie) {
			s.opts.Logger.Warn("explore", "session", logID(id), "err", err)
		}
		s.metrics.ExplorerRun("error")
		send(exploreLine{Type: "error", Error: msg, Line: scenarios.SourceLine(err)})
		return
	}
	if res.Bound == explore.BoundCancelled {
		s.metrics.ExplorerRun("cancelled")
		shuttingDown()
		return // nobody is listening any more, or the server is shutting down
	}
	s.sendResult(send, sc, res)
}

// sendResult sends a search's result, with the challenge's verdict when sc has one.
func (s *Server) sendResult(send func(exploreLine), sc *scenarios.Scenario, res *explore.Result) {
	s.metrics.ExplorerRun(res.Result) // ok, violation or bounded
	line := exploreLine{Type: "result", Result: res}
	if sc.Challenge != nil {
		v := explore.Meets(sc.Challenge, res)
		line.Challenge = &v
	}
	send(line)
}

// fitted is the size fitSize chose: the scenario at that size, what its workload
// added, the search's result there, and why the size asked for does not fit.
type fitted struct {
	nodes int
	sc    *scenarios.Scenario
	added string
	res   *explore.Result
	why   string
}

// fitSize finds, for a free setup (no events of its own; nil: not free), the largest
// number of processes up to asked whose search is predicted to fit in the server's
// limits. It searches 2 and 3 processes (small, and bounded here), and larger ones
// below asked while the growth so far predicts them under the same bound, and
// extrapolates the growth between the last two to the larger sizes, states and memory
// per state alike. A broken property at a small size is the verdict already. It returns asked when that
// size is predicted to fit, or when the prediction cannot be made (the caller then
// searches as asked); otherwise the size, its scenario, and the result when that size
// was one of the small searches.
func (s *Server) fitSize(ctx context.Context, free *scenarios.Scenario, asked int) fitted {
	none := fitted{nodes: asked}
	if free == nil || asked <= 3 {
		return none
	}
	lim := s.opts.Explore
	budget := lim.searchBudget()
	at := func(n int) (fitted, bool) {
		c := *free
		c.Nodes, c.IDs, c.Events = n, nil, nil
		if c.Validate() != nil {
			return fitted{}, false // too few processes for this algorithm or its params
		}
		sc, added, err := explore.DefaultWorkload(&c)
		if err != nil {
			return fitted{}, false
		}
		return fitted{nodes: n, sc: sc, added: added}, true
	}
	var small []fitted
	for n := 2; n < asked; n++ {
		if n > 3 {
			// A larger size is searched too while the growth so far says it stays
			// small: a growth that speeds up (Bully: 36, 837, then 75 672) is then
			// measured, not guessed.
			if len(small) < 2 {
				break
			}
			a, b := small[len(small)-2].res.States, small[len(small)-1].res.States
			if a == 0 || float64(b)*float64(b)/float64(a) > probeStates {
				break
			}
		}
		f, ok := at(n)
		if !ok {
			continue
		}
		res, err := s.exploring.run(ctx, f.sc, explore.Options{MaxStates: min(lim.MaxStates, probeStates), MaxMemory: budget, Workers: 1})
		if err != nil {
			return none
		}
		if res.Bound != "" {
			if n <= 3 {
				return none // even a small size is large: search as asked, and say so then
			}
			break // predicted small but not: the sizes measured so far predict
		}
		f.res = res
		// Two processes only predict the growth: some algorithms' monitors read a
		// stall of two as more than it is, so a verdict comes from three on.
		if res.Result == "violation" && n >= 3 {
			f.why = fmt.Sprintf("a property already breaks with %d processes, and that is the verdict", n)
			return f
		}
		small = append(small, f)
	}
	if len(small) < 2 || small[len(small)-2].res.States == 0 {
		return none
	}
	last := small[len(small)-1]
	growth := float64(last.res.States) / float64(small[len(small)-2].res.States)
	perState := float64(last.res.Memory) / float64(last.res.States)
	states := float64(last.res.States)
	for n := last.nodes + 1; n <= asked; n++ {
		states *= growth
		memory := states * perState
		if states <= float64(lim.MaxStates) && memory <= float64(budget) {
			continue
		}
		fit := last
		if n-1 > last.nodes {
			if f, ok := at(n - 1); ok {
				fit = f
			}
		}
		fit.why = fmt.Sprintf("%d processes would need about %s states and %d MiB, past this server's limits (%s states, %d MiB a search)",
			n, roughly(states), int64(memory)>>20, roughly(float64(lim.MaxStates)), budget>>20)
		return fit
	}
	return none
}

// probeStates bounds the small searches fitSize makes to predict a larger one: room
// for Bakery with three processes (221 935 states, about a second), whose four
// are past any browser budget, so that its page gets the verdict at three.
const probeStates = 300_000

// roughly writes a large count in two significant digits: 680,000.
func roughly(x float64) string {
	if x < 100 {
		return strconv.Itoa(int(x))
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	v := int64(math.Round(x/p) * p)
	str := strconv.FormatInt(v, 10)
	var b strings.Builder
	for i, c := range str {
		if i > 0 && (len(str)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// searchBudget is the memory one search may hold by its own accounting. The bound is
// the server's: the searches at once share it, or two would hold twice what was
// stated. And the process holds more than a search counts (what it keeps: arena,
// table and the table's next growth, interned states): what it has dropped and the
// collector has not taken back yet, up to a quarter more measured
// (TestExplorerMemoryBoundHolds). A search stops at two thirds of its part, so that
// the process's memory grows by the bound at most, as stated.
func (l ExploreLimits) searchBudget() int64 { return l.MaxMemory / int64(l.AtOnce) * 2 / 3 }

// collectAfter is the size of a search after which its memory is collected at once.
const collectAfter = 8 << 20

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
