package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/runs"
)

func init() { attacks["exports"] = exportsAttack }

// exportsAttack is the costliest export abuse at full scale: the worst export there is
// (the ShiViz log of a 128-process token ring at step 95000, 195 MB whole), six at
// once, then 40 trace exports at once, each from one address and then from as many
// addresses as requests, against a server limited to ulimit -v. It prints what every
// request got and the server's memory, and fails if the server died.
func exportsAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("exports", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	ulimit := fs.Int("ulimit-kb", 4_000_000, "the server's virtual memory limit (ulimit -v, KiB); 0: none")
	nodes := fs.Int("nodes", 128, "processes of the token ring")
	step := fs.Int("step", 95000, "the step the exports ask for")
	shivizN := fs.Int("shiviz", 6, "ShiViz exports at once")
	traceN := fs.Int("trace", 40, "trace exports at once")
	stall := fs.Int("stall", 4, "then: exports asked for by clients that never read them (each from its own address)")
	gzip := fs.Bool("gzip", false, "ask for compressed answers, as a browser does (the server then compresses as it writes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	code, err := tokenRingLink(*nodes)
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, *ulimit)
	if err != nil {
		return err
	}
	defer srv.stop()
	rss, _ := srv.memory()
	fmt.Printf("server %s under ulimit -v %d: %d MiB resident at start\n", srv.url, *ulimit, rss)
	q := "?step=" + strconv.Itoa(*step)
	for _, ph := range []struct {
		name, path string
		n          int
		spread     bool // one loopback address per request, else all from 127.0.0.1
	}{
		{"shiviz, one address", "/r/" + code + "/shiviz" + q, *shivizN, false},
		{"shiviz, an address each", "/r/" + code + "/shiviz" + q, *shivizN, true},
		{"trace, one address", "/r/" + code + "/trace.jsonl" + q, *traceN, false},
		{"trace, an address each", "/r/" + code + "/trace.jsonl" + q, *traceN, true},
	} {
		// A fresh visitor arrives while the exports run.
		probe := make(chan string, 1)
		go func() {
			time.Sleep(100 * time.Millisecond)
			probe <- visit(srv.url, "127.0.4.1")
		}()
		outcomes := fire(ctx, srv.url+ph.path, ph.n, ph.spread, *gzip)
		rss, peak := srv.memory()
		fmt.Printf("%-24s x%-3d %s; server %d MiB now, %d MiB peak; meanwhile a fresh visitor: %s\n", ph.name, ph.n, outcomes, rss, peak, <-probe)
		if !srv.alive() {
			return fmt.Errorf("the server died during %q:\n%s", ph.name, srv.lastLines())
		}
	}
	if err := stalled(ctx, srv, "/r/"+code+"/shiviz"+q, *stall); err != nil {
		return err
	}
	_, peak := srv.memory()
	fmt.Printf("the server is alive; peak resident memory %d MiB\n", peak)
	return nil
}

// stalled asks for n exports from clients that never read them, then has a fresh
// client ask for one until it gets it: the stalled ones hold their places until the
// export time limit (and its write deadline) frees them.
func stalled(ctx context.Context, srv *server, path string, n int) error {
	if n == 0 {
		return nil
	}
	start := time.Now()
	for i := range n {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(1+i))}}
		conn, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(srv.url, "http://"))
		if err != nil {
			return err
		}
		defer conn.Close()
		// The server's own address as Host: a name it does not answer to gets 421.
		if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+strings.TrimPrefix(srv.url, "http://")+"\r\n\r\n"); err != nil {
			return err
		}
	}
	time.Sleep(time.Second) // for the server to take them in (loopback: plenty)
	fmt.Printf("%-24s x%-3d every export place held; a fresh visitor: %s\n", "never read", n, visit(srv.url, "127.0.4.2"))
	fresh := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, 1)}}).DialContext, DisableCompression: true}}
	refused := 0
	for {
		o := get(ctx, fresh, srv.url+path)
		if o.err != nil {
			return o.err
		}
		if o.status == http.StatusOK {
			rss, peak := srv.memory()
			fmt.Printf("%-24s x%-3d a fresh client was refused %d times (503), then got its export (%d MiB) after %s; server %d MiB now, %d MiB peak\n",
				"never read", n, refused, o.bytes>>20, time.Since(start).Round(time.Second), rss, peak)
			return nil
		}
		refused++
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// tokenRingLink is the code of a share link of a token ring of n processes.
func tokenRingLink(n int) (string, error) {
	sc, err := scenarios.Parse([]byte(`{"version":2,"algorithm":"token-ring","nodes":` + strconv.Itoa(n) + `,"seed":1}`))
	if err != nil {
		return "", err
	}
	setup, err := runs.SetupOf(sc, "")
	if err != nil {
		return "", err
	}
	l, err := scenarios.LinkFromRun(setup.Scenario, setup.Config, nil, 0)
	if err != nil {
		return "", err
	}
	p, err := l.Path()
	return strings.TrimPrefix(p, "/r/"), err
}

// outcome is what one request got.
type outcome struct {
	status int
	bytes  int64
	cut    bool // the export ended with its note
	err    error
	took   time.Duration
}

type outcomes []outcome

// String sums the outcomes up: how many of each status, bytes, cut exports, the
// slowest.
func (all outcomes) String() string {
	by := map[string]int{}
	var total int64
	var slowest time.Duration
	cut := 0
	for _, o := range all {
		k := strconv.Itoa(o.status)
		if o.err != nil {
			k = "error (" + o.err.Error() + ")"
		}
		by[k]++
		total += o.bytes
		slowest = max(slowest, o.took)
		if o.cut {
			cut++
		}
	}
	var parts []string
	for k, n := range by {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s; %d MiB read, %d cut with a note, slowest %s", strings.Join(parts, ", "), total>>20, cut, slowest.Round(time.Millisecond))
}

// fire sends n GETs of url at once and reads every answer to its end, as fast as it
// comes (decompressed when gzip asks for compression). spread sends each from its own
// loopback address (127.0.1.k).
func fire(ctx context.Context, url string, n int, spread, gzip bool) outcomes {
	out := make(outcomes, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := &net.Dialer{}
			if spread {
				d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i))}
			}
			c := &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: !gzip}}
			start := time.Now()
			out[i] = get(ctx, c, url)
			out[i].took = time.Since(start)
		}()
	}
	wg.Wait()
	return out
}

func get(ctx context.Context, c *http.Client, url string) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return outcome{err: err}
	}
	resp, err := c.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	t := &tail{}
	n, err := io.Copy(t, resp.Body)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return outcome{status: resp.StatusCode, bytes: n, cut: strings.Contains(string(t.b), "this export stops at step"), err: err}
}

// tail keeps the last 4 KiB written to it (where an export's note is).
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0], t.b[len(t.b)-4<<10:]...)
	}
	return len(p), nil
}
