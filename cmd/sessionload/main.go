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
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/teach-dist/playground/cmd/internal/cli"
	"github.com/teach-dist/playground/cmd/internal/procfs"
)

func main() {
	cli.Main("sessionload", func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		return run(ctx, args, stdout, stderr)
	})
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
		srv.base, srv.pid, c.sessions, c.path, procfs.LoadAverage(), gomaxprocs())
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

// followAll reads every client's stream until its connection ends; wg counts the readers.
func followAll(clients []*client, wg *sync.WaitGroup) {
	for _, cl := range clients {
		wg.Add(1)
		go func() { defer wg.Done(); _ = cl.follow() }()
	}
}

// workAll runs every client's workload until ctx ends, the clients' requests spread
// evenly over --every; wg counts them.
func workAll(ctx context.Context, c *config, clients []*client, wg *sync.WaitGroup) {
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.workload(ctx, c.every, c.nodes, time.Duration(i)*c.every/time.Duration(len(clients)))
		}()
	}
}

func report(out io.Writer, st *stats) {
	fmt.Fprintf(out, "continuity: %d events lost, %d duplicated, %d step jumps; %d refused workload commands, %d other errors\n",
		st.lost.Load(), st.dup.Load(), st.badStep.Load(), st.refused.Load(), st.errors.Load())
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}
