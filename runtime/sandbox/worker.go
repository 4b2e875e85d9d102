package sandbox

import (
	"bufio"
	"container/list"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"syscall"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// A worker is this binary started again with envMode set: the check runs before main
// (and before a test binary's TestMain), so every binary that links this package can
// be its own sandbox, the playground and the tests alike.
const (
	envMode   = "PLAYGROUND_SANDBOX"        // "steps", "explore" or "run"
	envMemory = "PLAYGROUND_SANDBOX_MEMORY" // bytes: the worker's RLIMIT_DATA
	envNice   = "PLAYGROUND_SANDBOX_NICE"   // the worker's CPU priority (0 to 19)
	envCPU    = "PLAYGROUND_SANDBOX_CPU"    // milliseconds of CPU one call may use
	envSteps  = "PLAYGROUND_SANDBOX_STEPS"  // units of work one handler call may do
)

func init() {
	mode := os.Getenv(envMode)
	if mode == "" {
		return
	}
	os.Exit(workerMain(mode, os.Stdin, os.Stdout))
}

// workerMain confines this process, then serves requests until its input closes.
func workerMain(mode string, in io.Reader, out io.Writer) int {
	if err := confine(); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 2
	}
	wd, err := newWatchdog(os.Getenv(envCPU), os.Getenv(envSteps))
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 2
	}
	switch mode {
	case "steps":
		err = serveSteps(in, out, wd)
	case "explore":
		err = serveExplore(in, out)
	case "run":
		err = serveRun(in, out)
		var re *runError
		if errors.As(err, &re) {
			fmt.Fprintln(os.Stderr, re)
			return 1
		}
	default:
		err = fmt.Errorf("unknown mode %q", mode)
	}
	if err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "sandbox:", err)
		return 2
	}
	return 0
}

// confine puts the limits on this process before any source runs: its memory
// (RLIMIT_DATA covers the Go heap's mappings: past it the runtime cannot grow and the
// worker dies, which the server reports as the memory bound), a soft target for the
// collector below it, a lower CPU priority than the server's, and one thread of Go
// code at a time.
func confine() error {
	if s := os.Getenv(envMemory); s != "" {
		limit, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: %v", envMemory, err)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			return fmt.Errorf("setrlimit: %v", err)
		}
		debug.SetMemoryLimit(int64(limit) / 4 * 3)
	}
	if s := os.Getenv(envNice); s != "" {
		nice, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("%s: %v", envNice, err)
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, 0, nice); err != nil {
			return fmt.Errorf("setpriority: %v", err)
		}
	}
	runtime.GOMAXPROCS(1)
	return nil
}

// maxPrograms is how many loaded sources a step worker keeps; the server loads one
// again when the worker answers that it does not hold it.
const maxPrograms = 64

// programs is a step worker's loaded sources, least recently used first out.
type programs struct {
	byKey  map[string]*list.Element
	order  *list.List // of *loaded
	memory int64      // the worker's memory limit (0: none)
}

type loaded struct {
	key    string
	prog   *starlarkalg.Program
	setups []*wireSetup // the last few runs' setups, decoded
}

type wireSetup struct {
	wire  setupWire
	setup *sim.Setup
}

func (ps *programs) get(key string) *loaded {
	e, ok := ps.byKey[key]
	if !ok {
		return nil
	}
	ps.order.MoveToFront(e)
	return e.Value.(*loaded)
}

func (ps *programs) put(l *loaded) {
	if e, ok := ps.byKey[l.key]; ok {
		ps.order.Remove(e)
	}
	ps.byKey[l.key] = ps.order.PushFront(l)
	if ps.order.Len() > maxPrograms {
		ps.evict()
	}
	// Sources keep what their top level built (frozen globals): past half the
	// worker's memory the least recently used go, so that one client's sources
	// cannot leave no room for another's. The server loads an evicted one again.
	if ps.memory > 0 && heapBytes() > ps.memory/2 {
		for ps.order.Len() > 1 && heapBytes() > ps.memory/2 {
			ps.evict()
			runtime.GC()
		}
	}
}

// evict forgets the least recently used program.
func (ps *programs) evict() {
	last := ps.order.Remove(ps.order.Back()).(*loaded)
	delete(ps.byKey, last.key)
}

// heapBytes is the memory the heap's live and not yet collected objects take.
func heapBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// setup decodes a run's setup, reusing the decoding of a run seen lately.
func (l *loaded) setup(w setupWire) (*sim.Setup, error) {
	for _, s := range l.setups {
		if s.wire.MaxDelay == w.MaxDelay && slices.Equal(s.wire.IDs, w.IDs) && slices.Equal(s.wire.Params, w.Params) {
			return s.setup, nil
		}
	}
	setup := &sim.Setup{IDs: w.IDs, MaxDelay: w.MaxDelay}
	if parse := l.prog.Spec().ParseParams; parse != nil {
		p, err := parse(w.Params, w.IDs)
		if err != nil {
			return nil, err
		}
		setup.Params = p
	}
	if len(l.setups) == 4 {
		l.setups = l.setups[1:]
	}
	l.setups = append(l.setups, &wireSetup{wire: w, setup: setup})
	return setup, nil
}

// serveSteps answers requests one at a time until its input ends.
func serveSteps(in io.Reader, out io.Writer, wd *watchdog) error {
	inbox := frameReader{r: bufio.NewReader(in)}
	outbox := frameWriter{w: bufio.NewWriter(out)}
	ps := &programs{byKey: map[string]*list.Element{}, order: list.New(), memory: memoryLimit()}
	ctx := &sim.Context{}
	for {
		b, err := inbox.next()
		if err != nil {
			return err
		}
		req, err := decodeRequest(b)
		if err != nil {
			return err
		}
		wd.begin()
		resp := answer(ps, ctx, req, wd.limits())
		wd.end()
		if outbox.buf, err = encodeResponse(outbox.buf, resp); err != nil {
			return err
		}
		if err := outbox.send(outbox.buf); err != nil {
			return err
		}
	}
}

func answer(ps *programs, ctx *sim.Context, req *request, lim starlarkalg.Limits) *response {
	if req.Op == opLoad {
		prog, err := starlarkalg.LoadProgram(req.Slug, req.Source, lim)
		if err != nil {
			se, ok := err.(*starlarkalg.Error)
			if !ok {
				se = &starlarkalg.Error{Algorithm: req.Slug, Msg: err.Error()}
			}
			return &response{LoadErr: se}
		}
		ps.put(&loaded{key: req.Key, prog: prog})
		return &response{Spec: wireSpec(prog)}
	}
	l := ps.get(req.Key)
	if l == nil {
		return &response{Unknown: true}
	}
	setup, err := l.setup(req.Setup)
	if err != nil || req.Self < 0 || req.Self >= len(req.Setup.IDs) {
		msg := "the run's setup does not fit the source"
		if err != nil {
			msg = err.Error()
		}
		return &response{Result: starlarkalg.Result{Err: &starlarkalg.Error{Algorithm: l.prog.Spec().Slug, Msg: msg}}}
	}
	switch req.Op {
	case opInit:
		return &response{Result: l.prog.Init(req.Self, setup)}
	case opStep:
		*ctx = *sim.NewContext(req.Self, setup.IDs)
		if len(req.Up) == len(setup.IDs) {
			ctx.SetUp(req.Up)
		}
		return &response{Result: l.prog.Step(ctx, req.Self, setup, req.State, &req.Input)}
	}
	return &response{Result: starlarkalg.Result{Err: &starlarkalg.Error{Msg: fmt.Sprintf("unknown request %d", req.Op)}}}
}

// memoryLimit is the worker's memory limit as the server set it (0: none).
func memoryLimit() int64 {
	n, _ := strconv.ParseInt(os.Getenv(envMemory), 10, 64)
	return n
}
