// Command sessionload is the playground's load proof (docs/benchmarks.md): many
// students, each with a live run of their own, against one server on loopback. It
// starts the server itself (--server BIN) or uses one already running (--url with
// --pid), and measures the server process through /proc.
//
//	sessionload --server bin/playground live  --sessions 1000 --duration 60s
//	sessionload --server bin/playground idle  --sessions 1000
//	sessionload --server bin/playground storm --sessions 500
//
// live: every client opens /play/ricart-agrawala, connects its socket, plays at 1x
// and asks a process into the CS every --every (a student clicking along); reports the
// server's CPU and resident memory, events per second, the pace of the runs, and the
// continuity of every stream. idle: the resident memory of N idle sessions (page
// loaded, socket connected, run paused) against none, per session. storm: N clients
// playing are cut off at once and reconnect at once; every one must resume with no
// lost and no duplicated event.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/web/ops"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sessionload:", err)
		os.Exit(1)
	}
}

type config struct {
	mode      string
	server    string // binary to start
	url       string // or a running server
	pid       int
	sessions  int
	path      string
	every     time.Duration
	nodes     int
	warmup    time.Duration
	duration  time.Duration
	after     time.Duration
	socket    bool
	limits    bool
	played    time.Duration
	serveArgs string
	atRest    bool
	hold      time.Duration
	conc      int
	out       io.Writer
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sessionload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.server, "server", "", "start this playground binary on loopback (with --no-limits and room for the sessions)")
	fs.BoolVar(&c.atRest, "at-rest", true, "idle: measure once the server has put every run to rest (its --hibernate-after, default 10 s); false: 2 s after the runs paused, as in a tab's first minute")
	fs.StringVar(&c.serveArgs, "serve-args", "", "with --server: more flags for `playground serve`, space separated (e.g. \"--hibernate-after 2s\" to try a setting)")
	fs.StringVar(&c.url, "url", "", "a playground already running on loopback (with --pid)")
	fs.IntVar(&c.pid, "pid", 0, "its process id, for /proc")
	fs.IntVar(&c.sessions, "sessions", 1000, "clients, each with a session of its own")
	fs.StringVar(&c.path, "path", "/play/ricart-agrawala?n=5", "the page every client opens")
	fs.DurationVar(&c.every, "every", 2*time.Second, "live, storm: each client asks a process into the CS this often (0: only plays)")
	fs.IntVar(&c.nodes, "nodes", 5, "the processes the workload cycles through")
	fs.DurationVar(&c.warmup, "warmup", 10*time.Second, "time after every client plays before measuring")
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "live: the measuring window")
	fs.DurationVar(&c.after, "after", 10*time.Second, "storm: how long to follow the streams after the reconnection")
	fs.BoolVar(&c.socket, "socket", true, "idle: connect each session's socket (a tab left open); false: only load the page")
	fs.DurationVar(&c.played, "played", 0, "idle: each run first plays this long with the workload, then pauses (a tab left after use); needs --socket")
	fs.DurationVar(&c.hold, "hold", 0, "idle: keep the sessions this long after measuring (to profile the server: its pprof address is printed)")
	fs.BoolVar(&c.limits, "limits", false, "start the server with its default per-client rate limits (every client is one address here, as a lecture hall behind one NAT is); default off")
	fs.IntVar(&c.conc, "concurrency", 64, "clients opening at once while ramping up")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: sessionload (--server BIN | --url URL --pid PID) [flags] live|idle|storm")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("name one mode: live, idle or storm")
	}
	c.mode, c.out = fs.Arg(0), stdout
	if c.sessions < 1 || c.conc < 1 {
		return errors.New("--sessions and --concurrency must be at least 1")
	}
	srv, err := startServer(ctx, &c, stderr)
	if err != nil {
		return err
	}
	defer srv.stop(c.out)
	fmt.Fprintf(c.out, "server %s pid %d; %d clients on %s; load average %s; GOMAXPROCS of both: %s\n",
		srv.base, srv.pid, c.sessions, c.path, loadAverage(), gomaxprocs())
	switch c.mode {
	case "live":
		return live(ctx, &c, srv)
	case "idle":
		return idle(ctx, &c, srv)
	case "storm":
		return storm(ctx, &c, srv)
	}
	return fmt.Errorf("unknown mode %q (live, idle, storm)", c.mode)
}

func cpus() int { return runtime.NumCPU() }

func gomaxprocs() string {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	return "default (" + strconv.Itoa(cpus()) + " CPUs)"
}

// server is the playground under load.
type server struct {
	base    string // http://127.0.0.1:port
	pid     int
	pprof   string // host:port, or "" when unknown
	cmd     *exec.Cmd
	log     string
	stopped bool
}

var servingRE = regexp.MustCompile(`serving on (http://\S+)/`)

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServer starts --server on loopback, or checks --url is loopback.
func startServer(ctx context.Context, c *config, stderr io.Writer) (*server, error) {
	if c.server == "" {
		if c.url == "" || c.pid == 0 {
			return nil, errors.New("give --server BIN, or --url and --pid of a running server")
		}
		host := strings.TrimPrefix(strings.TrimPrefix(c.url, "http://"), "https://")
		if _, err := ops.CheckLoopback(strings.TrimSuffix(host, "/")); err != nil {
			return nil, fmt.Errorf("--url: %w (the load tool runs on loopback only)", err)
		}
		return &server{base: "http://" + strings.TrimSuffix(host, "/"), pid: c.pid}, nil
	}
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp("", "sessionload-server-*.log")
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--max-sessions", strconv.Itoa(c.sessions + 16),
		"--idle", "30m", "--pprof", pp, "--log-format", "json"}
	if !c.limits {
		args = append(args, "--no-limits")
	}
	args = append(args, strings.Fields(c.serveArgs)...)
	cmd := exec.Command(c.server, args...)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{pid: cmd.Process.Pid, pprof: pp, cmd: cmd, log: logf.Name()}
	logf.Close()
	found := make(chan string, 1)
	go func() {
		b := make([]byte, 4096)
		var seen []byte
		for {
			n, err := out.Read(b)
			seen = append(seen, b[:n]...)
			if m := servingRE.FindSubmatch(seen); m != nil {
				found <- string(m[1])
				_, _ = io.Copy(io.Discard, out)
				return
			}
			if err != nil {
				close(found)
				return
			}
		}
	}()
	select {
	case base, ok := <-found:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("the server did not start; its log: %s", s.log)
		}
		s.base = base
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, errors.New("the server did not start within 30 s")
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, ctx.Err()
	}
	return s, nil
}

// stop sends SIGTERM and reports how long the graceful shutdown took (once).
func (s *server) stop(out io.Writer) {
	if s.cmd == nil || s.stopped {
		return
	}
	s.stopped = true
	start := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	err := s.cmd.Wait()
	fmt.Fprintf(out, "server stopped by SIGTERM in %v (exit: %v); its log: %s\n", time.Since(start).Round(time.Millisecond), errOr(err, "0"), s.log)
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// gc asks the server for a garbage collection (pprof's heap profile with gc=1), so
// that resident memory reflects what is live.
func (s *server) gc(hc *http.Client) {
	if s.pprof == "" {
		return
	}
	resp, err := hc.Get("http://" + s.pprof + "/debug/pprof/heap?gc=1")
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// metric reads one sample from the server's /metrics.
func (s *server) metric(hc *http.Client, name string) float64 {
	resp, err := hc.Get(s.base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// settle is a few minutes of idleness in a few seconds: four garbage collections (the
// runtime forces one every two minutes), each of which also halves the goroutine
// stacks that use less than a quarter of theirs, with pauses in which the scavenger
// hands freed pages back. It returns the resident size.
func (s *server) settle(hc *http.Client) int64 {
	for range 4 {
		s.gc(hc)
		time.Sleep(2 * time.Second)
	}
	r, _ := rss(s.pid)
	return r
}

// openAll opens n clients (page, and socket when connect), conc at a time.
func openAll(ctx context.Context, c *config, srv *server, st *stats, tr http.RoundTripper, connect bool) ([]*client, error) {
	clients := make([]*client, c.sessions)
	sem := make(chan struct{}, c.conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range clients {
		clients[i] = newClient(srv.base, c.path, st, tr)
		wg.Add(1)
		sem <- struct{}{}
		go func(cl *client) {
			defer func() { <-sem; wg.Done() }()
			err := cl.open(ctx)
			if err == nil && connect {
				err = cl.connect(ctx)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(clients[i])
	}
	wg.Wait()
	if len(errs) > 0 {
		return clients, fmt.Errorf("%d of %d clients could not open: %v", len(errs), len(clients), errs[0])
	}
	return clients, nil
}

func newTransport() *http.Transport {
	return &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b float64) string { return fmt.Sprintf("%.1f KiB", b/1024) }

// live: every client plays; measure the server over the window.
func live(ctx context.Context, c *config, srv *server) error {
	st := &stats{}
	tr := newTransport()
	hc := &http.Client{Transport: tr}
	rss0, _ := rss(srv.pid)
	start := time.Now()
	clients, err := openAll(ctx, c, srv, st, tr, true)
	if err != nil {
		return err
	}
	ramp := time.Since(start)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(2)
		go func() { defer wg.Done(); _ = cl.follow() }()
		go func() {
			defer wg.Done()
			cl.workload(wctx, c.every, c.nodes, time.Duration(i)*c.every/time.Duration(len(clients)))
		}()
	}
	fmt.Fprintf(c.out, "ramp-up: %d sessions opened and connected in %v\n", len(clients), ramp.Round(time.Millisecond))
	sleep(ctx, c.warmup)

	cpu0, _ := cpuTime(srv.pid)
	self0, _ := cpuTime(os.Getpid())
	ev0, fr0 := st.events.Load(), st.frames.Load()
	srvEv0 := srv.metric(hc, "playground_trace_events_total")
	type at struct {
		t    int
		seen time.Time
	}
	t0 := make([]at, len(clients))
	for i, cl := range clients {
		t0[i].t, t0[i].seen = cl.clock.get()
	}
	w0 := time.Now()
	var peak int64
	for time.Since(w0) < c.duration && ctx.Err() == nil {
		sleep(ctx, min(5*time.Second, c.duration-time.Since(w0)))
		if r, err := rss(srv.pid); err == nil {
			peak = max(peak, r)
		}
	}
	window := time.Since(w0)
	cpu1, _ := cpuTime(srv.pid)
	self1, _ := cpuTime(os.Getpid())
	ev1, fr1 := st.events.Load(), st.frames.Load()
	srvEv1 := srv.metric(hc, "playground_trace_events_total")
	rss1, _ := rss(srv.pid)
	var paces []float64
	for i, cl := range clients {
		t, seen := cl.clock.get()
		if d := seen.Sub(t0[i].seen).Seconds(); d > 0 {
			paces = append(paces, float64(t-t0[i].t)/d/2) // 2 time units per second at 1x
		}
	}
	if len(paces) == 0 {
		paces = []float64{0}
	}
	slices.Sort(paces)
	secs := window.Seconds()
	doing := "only playing"
	if c.every > 0 {
		doing = fmt.Sprintf("asking for the CS every %v", c.every)
	}
	fmt.Fprintf(c.out, "window %v with %d live sessions, each playing at 1x and %s\n", window.Round(time.Millisecond), len(clients), doing)
	fmt.Fprintf(c.out, "server CPU: %.0f%% of one core (%.2f of 2 cores); load tool CPU: %.0f%% of one core\n",
		100*(cpu1-cpu0).Seconds()/secs, (cpu1-cpu0).Seconds()/secs/float64(cpus()), 100*(self1-self0).Seconds()/secs)
	fmt.Fprintf(c.out, "server RSS: %s before, %s at the end, %s peak; %s per live session\n",
		mib(rss0), mib(rss1), mib(peak), kib(float64(rss1-rss0)/float64(len(clients))))
	fmt.Fprintf(c.out, "trace events streamed: %.0f/s (server counter), %.0f/s received by the clients; frames: %.0f/s\n",
		(srvEv1-srvEv0)/secs, float64(ev1-ev0)/secs, float64(fr1-fr0)/secs)
	fmt.Fprintf(c.out, "pace of the runs (virtual time / 1x): min %.2f, median %.2f, max %.2f\n",
		paces[0], paces[len(paces)/2], paces[len(paces)-1])
	report(c.out, st)
	limited := 0.0
	for _, l := range []string{"pages", "sessions", "api", "sockets", "commands"} {
		limited += srv.metric(hc, `playground_rate_limited_total{limit="`+l+`"}`)
	}
	fmt.Fprintf(c.out, "rate limits: %s; requests and frames refused by them: %.0f\n", map[bool]string{true: "on (defaults)", false: "off"}[c.limits], limited)
	cancel()
	if srv.cmd != nil {
		// Shut the server down under load: every socket must be told why.
		srv.stop(c.out)
		wg.Wait()
		told := 0
		for _, cl := range clients {
			var ce *websocket.CloseError
			if errors.As(cl.ended, &ce) && ce.Code == websocket.CloseGoingAway && ce.Text == "server shutting down" {
				told++
			}
		}
		fmt.Fprintf(c.out, "%d of %d sockets were closed with 1001 \"server shutting down\"\n", told, len(clients))
	}
	for _, cl := range clients {
		cl.drop()
	}
	wg.Wait()
	if n := st.lost.Load() + st.dup.Load() + st.badStep.Load(); n > 0 {
		return fmt.Errorf("the streams were not continuous (%d problems)", n)
	}
	return nil
}

func report(out io.Writer, st *stats) {
	fmt.Fprintf(out, "continuity: %d events lost, %d duplicated, %d step jumps; %d refused workload commands, %d other errors\n",
		st.lost.Load(), st.dup.Load(), st.badStep.Load(), st.refused.Load(), st.errors.Load())
}

// idle: resident memory of N idle sessions against none.
func idle(ctx context.Context, c *config, srv *server) error {
	tr := newTransport()
	hc := &http.Client{Transport: tr}
	// Warm up: one session the whole way, so templates, pools and the first GC cycles
	// are behind us.
	warm := newClient(srv.base, c.path, &stats{}, tr)
	if err := warm.open(ctx); err != nil {
		return err
	}
	if err := warm.connect(ctx); err != nil {
		return err
	}
	warm.drop()
	for srv.metric(hc, `playground_websockets{socket="session"}`) > 0 {
		sleep(ctx, 100*time.Millisecond)
	}
	base := srv.settle(hc)
	heap0, stack0 := srv.metric(hc, "go_memstats_heap_inuse_bytes"), srv.metric(hc, "go_memstats_stack_inuse_bytes")
	sess0 := srv.metric(hc, "playground_sessions")
	st := &stats{}
	clients, err := openAll(ctx, c, srv, st, tr, c.socket)
	if err != nil {
		return err
	}
	tr.CloseIdleConnections()
	var wg sync.WaitGroup
	if c.socket {
		// A tab reads its socket, which is also what answers the server's pings: a
		// client that never read would be dropped after the pong wait (60 s).
		for _, cl := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); _ = cl.follow() }()
		}
	}
	if c.played > 0 && c.socket {
		wctx, cancel := context.WithCancel(ctx)
		for i, cl := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl.workload(wctx, c.every, c.nodes, time.Duration(i)*c.every/time.Duration(len(clients)))
			}()
		}
		sleep(ctx, c.played)
		cancel()
		for _, cl := range clients {
			_ = cl.send(`{"type":"pause"}`)
		}
		fmt.Fprintf(c.out, "every run played for %v (%d trace events in all), then paused\n", c.played, st.events.Load())
	}
	// Idle means at rest: a still run keeps only its recipe after the server's --hibernate-after
	// (default 10 s; runtime/session/rest.go). Wait for every run to get there.
	waited := time.Now()
	sleep(ctx, 2*time.Second)
	for c.atRest && srv.metric(hc, "playground_sessions_resting") < srv.metric(hc, "playground_sessions") {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Since(waited) > 5*time.Minute {
			return errors.New("after 5 minutes some runs are still not at rest")
		}
		sleep(ctx, time.Second)
	}
	if c.atRest {
		fmt.Fprintf(c.out, "every run at rest after %v\n", time.Since(waited).Round(time.Second))
	}
	full := srv.settle(hc)
	heap1, stack1 := srv.metric(hc, "go_memstats_heap_inuse_bytes"), srv.metric(hc, "go_memstats_stack_inuse_bytes")
	sess1 := srv.metric(hc, "playground_sessions")
	if c.socket {
		if open := srv.metric(hc, `playground_websockets{socket="session"}`); open != float64(len(clients)) {
			return fmt.Errorf("only %.0f of %d sockets were still open when measured", open, len(clients))
		}
	}
	n := float64(len(clients))
	what := "page loaded, socket connected, run paused"
	if c.played > 0 {
		what = fmt.Sprintf("page loaded, socket connected, run played %v then paused", c.played)
	}
	if !c.socket {
		what = "page loaded, no socket"
	}
	fmt.Fprintf(c.out, "idle sessions (%s): %.0f -> %.0f sessions\n", what, sess0, sess1)
	fmt.Fprintf(c.out, "server RSS: %s -> %s: %s per idle session (goal: at most 64 KiB)\n", mib(base), mib(full), kib(float64(full-base)/n))
	fmt.Fprintf(c.out, "Go heap in use: %s per session; goroutine stacks: %s per session\n", kib((heap1-heap0)/n), kib((stack1-stack0)/n))
	if c.hold > 0 {
		fmt.Fprintf(c.out, "holding for %v; pprof: http://%s/debug/pprof/\n", c.hold, srv.pprof)
		sleep(ctx, c.hold)
	}
	for _, cl := range clients {
		cl.drop()
	}
	wg.Wait()
	return nil
}

// storm: N clients play; all are cut off at once and reconnect at once.
func storm(ctx context.Context, c *config, srv *server) error {
	st := &stats{}
	tr := newTransport()
	clients, err := openAll(ctx, c, srv, st, tr, true)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	begin := func() {
		for i, cl := range clients {
			wg.Add(2)
			go func() { defer wg.Done(); _ = cl.follow() }()
			go func() {
				defer wg.Done()
				cl.workload(wctx, c.every, c.nodes, time.Duration(i)*c.every/time.Duration(len(clients)))
			}()
		}
	}
	begin()
	sleep(ctx, c.warmup)
	before := st.events.Load()
	cancel()
	for _, cl := range clients { // every connection cut at once, without a close frame
		cl.drop()
	}
	wg.Wait()
	fmt.Fprintf(c.out, "%d clients played for %v (%d events), then all were cut off at once\n", len(clients), c.warmup, before)

	// All reconnect at once: each goroutine waits for the same signal.
	gate := make(chan struct{})
	times := make([]time.Duration, len(clients))
	var rw sync.WaitGroup
	for i, cl := range clients {
		rw.Add(1)
		go func() {
			defer rw.Done()
			<-gate
			t := time.Now()
			if err := cl.connect(ctx); err != nil {
				st.failed.Add(1)
				fmt.Fprintf(c.out, "client %d: %v\n", i, err)
				return
			}
			times[i] = time.Since(t)
			st.resumed.Add(1)
		}()
	}
	t := time.Now()
	close(gate)
	rw.Wait()
	all := time.Since(t)
	slices.Sort(times)
	fmt.Fprintf(c.out, "reconnection: %d of %d resumed, %d failed, in %v (per client: median %v, max %v)\n",
		st.resumed.Load(), len(clients), st.failed.Load(), all.Round(time.Millisecond),
		times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
	fmt.Fprintf(c.out, "%d clients had missed events when cut off (at most %d); each found them in its snapshot's recent events\n",
		st.caughtUp.Load(), st.caughtUpMax.Load())
	wctx, cancel = context.WithCancel(ctx)
	defer cancel()
	resumedAt := st.events.Load()
	begin()
	sleep(ctx, c.after)
	cancel()
	for _, cl := range clients {
		cl.drop()
	}
	wg.Wait()
	fmt.Fprintf(c.out, "after resuming: %d events in %v\n", st.events.Load()-resumedAt, c.after)
	report(c.out, st)
	if st.failed.Load() > 0 || st.lost.Load()+st.dup.Load()+st.badStep.Load() > 0 {
		return errors.New("the storm lost, duplicated or refused something")
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
