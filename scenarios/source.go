package scenarios

import (
	"container/list"
	"errors"
	"strconv"
	"sync"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// A scenario's "source" is an algorithm written in Starlark (docs/authoring.md) that
// runs instead of the Go algorithm its "algorithm" names: the rules a student edited
// from that algorithm's template. "algorithm" still names the page it belongs to and
// stays the slug of links and of the spec (so traces, exports and counterexamples read
// as the algorithm's). Everything that runs a scenario reaches the algorithm through
// Scenario.Spec, so the kernel, sessions, the explorer and exports run the source.

// MaxSources is how many loaded sources are kept: loading is the costly part (the
// explorer and a session's restarts take the same scenario again and again), and one
// student edits one source at a time.
const MaxSources = 256

// SourceLoader turns a source into the Spec its runs use. A server's runs a source in
// its sandbox's workers (runtime/sandbox), so that the server process never runs a
// student's code; the default, InProcess, runs it here: for the sandbox's workers
// themselves and for tests of the algorithms.
type SourceLoader interface {
	Load(slug, source string) (*sim.Spec, error)
}

// InProcess loads sources in this process (starlarkalg.Load).
var InProcess SourceLoader = inProcess{}

type inProcess struct{}

func (inProcess) Load(slug, source string) (*sim.Spec, error) { return starlarkalg.Load(slug, source) }

// UseSourceLoader makes l load every source from now on; loads kept from another
// loader are forgotten. Setting the loader already in use changes nothing.
func UseSourceLoader(l SourceLoader) {
	sources.Lock()
	defer sources.Unlock()
	if sources.loader == l {
		return
	}
	sources.loader = l
	sources.gen++
	clear(sources.byKey)
	sources.order.Init()
}

// sources caches loads by (algorithm, source), errors included, least recently used
// first out. A loaded Spec is shared: its program holds frozen values only, and each
// run makes its own nodes and interpreter threads.
var sources = struct {
	sync.Mutex
	loader SourceLoader
	gen    int // counts loader changes: a load by an earlier loader is not kept
	byKey  map[[2]string]*list.Element
	order  *list.List // of *loaded, most recent first
}{loader: InProcess, byKey: map[[2]string]*list.Element{}, order: list.New()}

type loaded struct {
	key  [2]string
	spec *sim.Spec
	err  error
}

// LoadCharge is asked before a source that is not cached is loaded: a server charges
// it to the client that sent the source (web/ratelimit Limits.Loads) and returns an
// error, which the parse returns as it is, when that client is past its bound. nil
// charges nothing.
type LoadCharge func() error

// SourceCached reports whether (algorithm, source) is already loaded: taking it again
// costs a map lookup, not a load.
func SourceCached(algorithm, source string) bool {
	sources.Lock()
	defer sources.Unlock()
	_, ok := sources.byKey[[2]string{algorithm, source}]
	return ok
}

// charge asks charge for s's source when loading it would cost a load.
func (s *Scenario) charge(charge LoadCharge) error {
	if charge == nil || s == nil || s.Source == "" || SourceCached(s.Algorithm, s.Source) {
		return nil
	}
	return charge()
}

// loadSource compiles a scenario's source (cached).
func loadSource(slug, source string) (*sim.Spec, error) {
	key := [2]string{slug, source}
	sources.Lock()
	if e, ok := sources.byKey[key]; ok {
		sources.order.MoveToFront(e)
		l := e.Value.(*loaded)
		sources.Unlock()
		return l.spec, l.err
	}
	loader, gen := sources.loader, sources.gen
	sources.Unlock()
	spec, err := loader.Load(slug, source) // outside the lock: it may take 200 000 steps
	var temp interface{ Temporary() bool }
	if errors.As(err, &temp) && temp.Temporary() {
		return spec, err // a sandbox that failed to load it, not the source's fault: not kept
	}
	sources.Lock()
	defer sources.Unlock()
	if _, ok := sources.byKey[key]; !ok && gen == sources.gen {
		sources.byKey[key] = sources.order.PushFront(&loaded{key: key, spec: spec, err: err})
		if sources.order.Len() > MaxSources {
			last := sources.order.Remove(sources.order.Back()).(*loaded)
			delete(sources.byKey, last.key)
		}
	}
	return spec, err
}

// SourceLine is the line of a scenario's source that err is about (a load error, a
// link's, or a handler's error during a run), or 0: the editor shows the error there.
func SourceLine(err error) int {
	var se *starlarkalg.Error
	var e *Error
	var le *LinkError
	switch {
	case errors.As(err, &se):
		return se.Line
	case errors.As(err, &e):
		return e.Line
	case errors.As(err, &le):
		return le.Line
	}
	return 0
}

// sourceErr words a source that does not load as an *Error on the field "source",
// with the line and column in the source when the error has one.
func sourceErr(err error) *Error {
	e := &Error{Field: "source", Reason: err.Error()}
	var se *starlarkalg.Error
	if errors.As(err, &se) {
		e.Line, e.Col, e.Reason = se.Line, se.Col, se.Msg
		if se.Line > 0 {
			e.Reason = "line " + strconv.Itoa(se.Line) + ": " + se.Msg
		}
	}
	return e
}
