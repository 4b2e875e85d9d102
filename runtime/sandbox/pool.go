package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/fairq"
)

// Options size a Pool. Zero values take the defaults.
type Options struct {
	// Workers is how many step workers run at once (default 2): each runs one call at
	// a time on one core, at a lower priority than the server.
	Workers int
	// Share is how many workers one client holds while another waits (default half of
	// Workers, at least 1).
	Share int
	// Memory is one worker's memory limit in bytes (default 512 MiB), for step workers
	// and searches alike; a search's own budget (explore.Options.MaxMemory) is below it.
	Memory int64
	// CallTimeout is how long one call (a handler, a load) may take, wall clock, before
	// its worker is killed (default 10 s): the backstop for a worker that hangs. The
	// interpreter's work bound and CallCPU stop a source's call far sooner, whatever
	// the machine's load, which a wall-clock bound would count against the source.
	CallTimeout time.Duration
	// Steps is the units of work one handler call may do (default
	// starlarkalg.DefaultLimits.Steps): the interpreter's own bound, which ends a
	// runaway call long before CallCPU in the normal case.
	Steps uint64
	// CallCPU is the CPU time one call may use before the worker interrupts it, an
	// error at the line it reached (default 1 s); CallTimeout is the backstop.
	CallCPU time.Duration
	// Nice is the step workers' CPU priority, 1 to 19 (default 10): under load the
	// server's own work goes first. Negative: the server's own priority (benchmarks).
	// A search's or a whole run's worker keeps the server's priority: it holds one of
	// the few slots the server hands out, under its time limit.
	Nice int
	// Command starts a worker in mode ("steps" or "explore"); default: this executable
	// again (the package's init serves the mode instead of main).
	Command func(mode string) *exec.Cmd
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.Workers, 2)
	defaults.Positive(&o.Share, max(o.Workers/2, 1))
	defaults.Positive(&o.Memory, 512<<20)
	defaults.Positive(&o.CallTimeout, 10*time.Second)
	if o.Steps == 0 {
		o.Steps = starlarkalg.DefaultLimits.Steps
	}
	defaults.Positive(&o.CallCPU, time.Second)
	if o.Nice == 0 {
		o.Nice = 10
	}
	if o.Nice > 19 {
		o.Nice = 19
	}
	if o.Command == nil {
		o.Command = selfCommand
	}
	return o
}

func selfCommand(string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return exec.Command(exe)
}

// Pool is the server's step workers. Safe for concurrent use.
type Pool struct {
	opts  Options
	queue *fairq.Queue

	mu     sync.Mutex
	idle   []*worker
	all    map[*worker]bool
	closed bool
}

// New returns a pool; workers start when first needed.
func New(opts Options) *Pool {
	opts = opts.withDefaults()
	return &Pool{opts: opts, all: map[*worker]bool{},
		queue: fairq.New(fairq.Options{Slots: opts.Workers, Share: opts.Share, PerClient: 1 << 20})}
}

var (
	defaultOnce sync.Once
	defaultPool *Pool
)

// Default is the process's pool with the default options, started on first use.
func Default() *Pool {
	defaultOnce.Do(func() { defaultPool = New(Options{}) })
	return defaultPool
}

// Options returns the pool's options, defaults applied.
func (p *Pool) Options() Options { return p.opts }

// Close kills every worker and waits for them to end; calls after it fail.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	ws := make([]*worker, 0, len(p.all))
	for w := range p.all {
		ws = append(ws, w)
	}
	p.idle = nil
	p.mu.Unlock()
	for _, w := range ws {
		w.kill("")
	}
	for _, w := range ws {
		<-w.exited
	}
}

// Workers reports how many worker processes are alive and how many calls run now.
func (p *Pool) Workers() (alive, busy int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.all), len(p.all) - len(p.idle)
}

// Error is a call the sandbox stopped: its worker died or was killed. Bound names
// the bound it hit ("memory", "time"), or is "" when the worker failed otherwise.
type Error struct {
	Bound string
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// ErrClosed is a call on a closed pool.
var ErrClosed = errors.New("sandbox: the server is shutting down")

// call sends req to a worker, for client, and returns its answer.
func (p *Pool) call(client string, req *request, load *request) (*response, error) {
	release, err := p.queue.Acquire(context.Background(), client, nil)
	if err != nil {
		return nil, err
	}
	defer release()
	w, err := p.take()
	if err != nil {
		return nil, err
	}
	resp, err := w.roundTrip(req, p.opts.CallTimeout)
	if err == nil && resp.Unknown && load != nil {
		if resp, err = w.roundTrip(load, p.opts.CallTimeout); err == nil && resp.LoadErr == nil {
			resp, err = w.roundTrip(req, p.opts.CallTimeout)
		}
	}
	p.give(w, err == nil)
	if err != nil {
		return nil, w.failure(err, p.opts)
	}
	return resp, nil
}

// take returns an idle worker, or starts one.
func (p *Pool) take() (*worker, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return w, nil
	}
	p.mu.Unlock()
	w, err := p.start("steps")
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		w.kill("")
		return nil, ErrClosed
	}
	p.all[w] = true
	return w, nil
}

// give puts a worker back, or forgets a dead one.
func (p *Pool) give(w *worker, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ok && !p.closed {
		p.idle = append(p.idle, w)
		return
	}
	delete(p.all, w)
	go w.kill("")
}

// worker is one worker process and its pipes.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.Reader
	// closeOut closes our end of the worker's stdout: a search's or a run's reader
	// calls it when it is done (a step worker's goes when the worker does).
	closeOut func() error
	in       *bufio.Writer
	out      frameWriter
	inbox    frameReader
	stderr   *tail
	exited   chan struct{} // closed once the process has been waited for

	mu     sync.Mutex
	killed string // why the server killed it ("time"), "" if it did not
}

func (p *Pool) start(mode string) (*worker, error) {
	cmd := p.opts.Command(mode)
	cmd.Env = append(os.Environ(), envMode+"="+mode, envMemory+"="+strconv.FormatInt(p.opts.Memory, 10),
		envCPU+"="+strconv.FormatInt(p.opts.CallCPU.Milliseconds(), 10), envSteps+"="+strconv.FormatUint(p.opts.Steps, 10))
	if p.opts.Nice > 0 && mode == "steps" {
		// Only the step workers: a search or a whole run is one of a few slots the
		// server hands out and bounds in time, as it was in the server's own process;
		// at nice 10 on a busy machine it got so little of a core that a search of a
		// few hundred states ran out its 20 s.
		cmd.Env = append(cmd.Env, envNice+"="+strconv.Itoa(p.opts.Nice))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlives the server
	w := &worker{cmd: cmd, stderr: &tail{}, exited: make(chan struct{})}
	cmd.Stderr = w.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// The worker's stdout is a pipe of our own, not cmd.StdoutPipe: Wait would close
	// that one as soon as the process exits, before what it wrote last is read.
	stdout, childOut, err := os.Pipe()
	if err != nil {
		_ = stdin.Close()
		return nil, err
	}
	cmd.Stdout = childOut
	err = cmd.Start()
	_ = childOut.Close() // the worker holds it now
	if err != nil {
		_ = stdin.Close()
		_ = stdout.Close()
		return nil, fmt.Errorf("sandbox: cannot start a worker: %w", err)
	}
	go func() {
		_ = cmd.Wait()
		if mode == "steps" {
			// Its calls read synchronously: nothing is left to read once it is gone.
			_ = stdout.Close()
		}
		close(w.exited)
	}()
	w.closeOut = stdout.Close
	w.stdin, w.stdout = stdin, stdout
	w.in = bufio.NewWriter(stdin)
	w.out = frameWriter{w: w.in}
	w.inbox = frameReader{r: bufio.NewReader(stdout)}
	return w, nil
}

// roundTrip sends one request and reads its answer; past timeout the worker is killed,
// which ends the read.
func (w *worker) roundTrip(req *request, timeout time.Duration) (*response, error) {
	timer := time.AfterFunc(timeout, func() { w.kill("time") })
	defer timer.Stop()
	w.out.buf = encodeRequest(w.out.buf, req)
	if err := w.out.send(w.out.buf); err != nil {
		return nil, err
	}
	b, err := w.inbox.next()
	if err != nil {
		return nil, err
	}
	return decodeResponse(b)
}

// kill ends the worker's process, noting why (the first reason stays).
func (w *worker) kill(why string) {
	w.mu.Lock()
	if w.killed == "" {
		w.killed = why
	}
	w.mu.Unlock()
	_ = w.stdin.Close()
	if w.cmd.Process != nil {
		_ = w.cmd.Process.Kill()
	}
}

// failure words why a call on w failed: the bound its worker hit.
func (w *worker) failure(err error, opts Options) error {
	w.kill("")
	<-w.exited
	w.mu.Lock()
	killed := w.killed
	w.mu.Unlock()
	if killed == "time" {
		return &Error{Bound: "time", Msg: fmt.Sprintf("the sandbox stopped it after %v (the time one call may take)", opts.CallTimeout)}
	}
	text := w.stderr.String()
	if strings.Contains(text, "out of memory") || strings.Contains(text, "cannot allocate memory") {
		return &Error{Bound: "memory", Msg: fmt.Sprintf("it used more than the %d MiB of memory the sandbox allows", opts.Memory>>20)}
	}
	last := strings.TrimSpace(text)
	if k := strings.IndexByte(last, '\n'); k >= 0 {
		last = last[:k]
	}
	if last == "" {
		last = err.Error()
	}
	return &Error{Msg: "the sandbox worker running it stopped: " + last}
}

// tail keeps the first bytes a worker writes on stderr (a fatal error's first line
// says what happened).
type tail struct {
	mu sync.Mutex
	b  []byte
}

const tailBytes = 4096

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := tailBytes - len(t.b); room > 0 {
		t.b = append(t.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
