package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/runtime/compare"
	"github.com/teach-dist/playground/web"
)

// The attacks on costly work: explorer searches, comparisons and exports.

// explorerAttack: -loops loops of heavy searches from 127.0.0.1 keep the explorer's
// slots busy while 127.0.0.2 explores -tries times: the second address must still get
// its searches.
func explorerAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	loops := fs.Int("loops", 2, "looping attackers at 127.0.0.1")
	tries := fs.Int("tries", 8, "searches of the second address, one after another")
	return func(ctx context.Context, t *local) error {
		before := procfs.Status(os.Getpid(), "VmRSS")
		actx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var mu sync.Mutex
		heavy := map[string]int{}
		for range *loops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := t.client("127.0.0.1")
				for actx.Err() == nil {
					_, _, v, err := exploreOnce(actx, c, "/play/lamport?n=4")
					mu.Lock()
					if err != nil {
						v = "refused or cancelled"
					}
					heavy[v]++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Second) // the loops hold both slots
		victim := t.client("127.0.0.2")
		served := 0
		for i := range *tries {
			pos, wait, v, err := exploreOnce(ctx, victim, "/play/ricart-agrawala?n=3")
			if err != nil {
				fmt.Printf("second address, try %d: %v\n", i+1, err)
				continue
			}
			served++
			fmt.Printf("second address, try %d: highest queue position %d, started after %v, %s\n", i+1, pos, wait.Round(time.Millisecond), v)
		}
		cancel()
		wg.Wait()
		fmt.Printf("second address served %d of %d; attacker's searches: %v; RSS of the process (server and clients) before the searches %s, at its peak %s (the searches' bound: 256 MiB)\n",
			served, *tries, heavy, before, procfs.Status(os.Getpid(), "VmHWM"))
		return nil
	}
}

// exploreOnce runs the Explore action of a new run of path as c and returns the
// highest queue position it was told, how long until its search started, and the
// result's bound or verdict.
func exploreOnce(ctx context.Context, c *browser.Client, path string) (pos int, wait time.Duration, verdict string, err error) {
	id, err := c.Run(path)
	if err != nil {
		return 0, 0, "", err
	}
	t0 := time.Now()
	lines, err := checkStream(ctx, c, id)
	if err != nil {
		return 0, 0, "", err
	}
	for l := range lines {
		switch l.Type {
		case "queued":
			pos = max(pos, l.Position)
		case "start":
			wait = l.at.Sub(t0)
		case "result":
			return pos, wait, l.Result.Result + " " + l.Result.Bound, nil
		case "error":
			return pos, wait, "", fmt.Errorf("explore: %s", l.Error)
		}
	}
	return pos, wait, "", errors.New("the stream ended early")
}

// The two clients of the attack, told apart by X-Forwarded-For through the loopback
// "proxy" (the server runs with --trusted-proxy 127.0.0.0/8).
const (
	compareAttacker = "203.0.113.7"
	compareVictim   = "198.51.100.20"
)

// compareAttack is the compare-flooding abuse at full scale (without the compare queue,
// 16 loops of heavy /compare made a trivial compare take 26-29 s and 11 requests got
// 503): -loops loops from one address ask heavy comparisons, each a new query once the
// server took the last (a cached one costs nothing; a refused one is asked again after
// -pause), while a second address asks -tries trivial ones, one after another,
// reloading as its page says (Refresh) or as a visitor would after a refusal. It prints
// the time each trivial comparison took to its chart, every answer per address and the
// server's memory. The server runs with --trusted-proxy 127.0.0.0/8, so that the two
// clients are told apart by X-Forwarded-For.
func compareAttack(fs *flag.FlagSet, args *serveArgs) func(context.Context, *server) error {
	args.flags = []string{"--trusted-proxy", "127.0.0.0/8"}
	loops := fs.Int("loops", 16, "looping attackers, all from one address")
	tries := fs.Int("tries", 6, "trivial comparisons of the second address, one after another")
	warm := fs.Duration("warm", 3*time.Second, "how long the loops run before the second address starts")
	reload := fs.Duration("reload", 3*time.Second, "how long the second address waits before it reloads a page that is not its chart (the page's Refresh)")
	pause := fs.Duration("pause", 250*time.Millisecond, "how long a loop waits after a refusal (429, 503) before its next request")
	return func(ctx context.Context, srv *server) error {
		heavy, err := heavyComparisons()
		if err != nil {
			return err
		}
		rss, _ := srv.memory()
		fmt.Printf("server %s: %d MiB resident at start; %d loops of heavy comparisons from %s, e.g. /compare?%s\n",
			srv.url, rss, *loops, compareAttacker, heavy[0])

		var tally compareTally
		attacker, victim := browser.Forwarded(srv.url, compareAttacker), browser.Forwarded(srv.url, compareVictim)
		actx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var next sync.Mutex
		k := 0
		for range *loops {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q := ""
				for actx.Err() == nil {
					if q == "" { // a new comparison, once the server took the last
						next.Lock()
						q = heavy[k%len(heavy)]
						k++
						next.Unlock()
					}
					a := askCompare(actx, attacker, q)
					if actx.Err() != nil {
						return // cut short by the end of the attack: not the server's answer
					}
					tally.add(compareAttacker, a)
					if a.status == http.StatusOK || a.status == http.StatusAccepted {
						q = ""
					} else {
						sleepCtx(actx, *pause) // and ask the same again
					}
				}
			}()
		}
		sleepCtx(ctx, *warm)
		var took []time.Duration
		for i := range *tries {
			q := url.Values{"alg": {"central"}, "n": {strconv.Itoa(3 + i)}, "seeds": {"1"}}.Encode()
			start := time.Now()
			for {
				a := askCompare(ctx, victim, q)
				if ctx.Err() != nil {
					stop()
					wg.Wait()
					return ctx.Err()
				}
				tally.add(compareVictim, a)
				if a.status == http.StatusOK && a.chart {
					break
				}
				sleepCtx(ctx, *reload)
			}
			took = append(took, time.Since(start))
			fmt.Printf("second address, trivial comparison %d (/compare?%s): its chart after %s\n", i+1, q, took[i].Round(time.Millisecond))
		}
		stop()
		wg.Wait()
		slices.Sort(took)
		_, peak := srv.memory()
		fmt.Printf("second address: to its chart median %s, worst %s\n", quantile(took, 0.5).Round(time.Millisecond), quantile(took, 1).Round(time.Millisecond))
		for _, addr := range []string{compareAttacker, compareVictim} {
			fmt.Printf("answers to %s: %s\n", addr, tally.of(addr))
		}
		fmt.Printf("server peak resident memory %d MiB; alive: %v\n", peak, srv.alive())
		return nil
	}
}

// heavyComparisons are distinct comparisons each near the compare page's limits (its
// bound on the runs' N²): the Bakery (the costliest to run) and two other mutual
// exclusion algorithms, ten sizes up to 22, ten seeds, under heavy load; 2-3 s each
// on two idle cores.
func heavyComparisons() ([]string, error) {
	var others []string
	for _, s := range algorithms.All() {
		if s.Family == "mutex" && s.Slug != "bakery" {
			others = append(others, s.Slug)
		}
	}
	var out []string
	for lo := 13; lo >= 11; lo-- {
		for i := range others {
			for j := i + 1; j < len(others); j++ {
				v := url.Values{"alg": {"bakery", others[i], others[j]}, "n": {fmt.Sprintf("%d-%d", lo, lo+9)}, "workload": {"heavy"}, "seeds": {"10"}}
				if _, err := compare.ParseQuery(v, compare.DefaultLimits()); err != nil {
					return nil, fmt.Errorf("a heavy comparison the server would refuse: %w", err)
				}
				out = append(out, v.Encode())
			}
		}
	}
	return out, nil
}

// compareAnswer is what one /compare request got.
type compareAnswer struct {
	status int
	chart  bool // a 200 with its chart
	queue  bool // a 429 of the compare queue (not of the page rate)
	err    error
}

// askCompare loads /compare?q as c.
func askCompare(ctx context.Context, c *browser.Client, q string) compareAnswer {
	resp, err := c.Get(ctx, "/compare?"+q)
	if err != nil {
		return compareAnswer{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	body := string(b)
	return compareAnswer{status: resp.StatusCode, err: err,
		chart: strings.Contains(body, `<svg class="chart"`),
		queue: strings.Contains(body, "already has comparisons waiting")}
}

// compareTally counts what each address got.
type compareTally struct {
	mu sync.Mutex
	by map[string]map[string]int
}

func (t *compareTally) add(addr string, a compareAnswer) {
	k := strconv.Itoa(a.status)
	switch {
	case a.err != nil:
		k = "error (" + a.err.Error() + ")"
	case a.status == http.StatusTooManyRequests && a.queue:
		k = "429 (its comparisons waiting)"
	case a.status == http.StatusTooManyRequests:
		k = "429 (page rate)"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[string]map[string]int{}
	}
	if t.by[addr] == nil {
		t.by[addr] = map[string]int{}
	}
	t.by[addr][k]++
}

func (t *compareTally) of(addr string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var parts []string
	for k, n := range t.by[addr] {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// exportsAttack is the costliest export abuse at full scale: the worst export there is
// (the ShiViz log of a 128-process token ring at step 95000, 195 MB whole), six at
// once, then 40 trace exports at once, each from one address and then from as many
// addresses as requests, against a server limited to ulimit -v. It prints what every
// request got and the server's memory, and fails if the server died.
func exportsAttack(fs *flag.FlagSet, args *serveArgs) func(context.Context, *server) error {
	fs.IntVar(&args.ulimitKB, "ulimit-kb", 4_000_000, "the server's virtual memory limit (ulimit -v, KiB); 0: none")
	nodes := fs.Int("nodes", 128, "processes of the token ring")
	step := fs.Int("step", 95000, "the step the exports ask for")
	shivizN := fs.Int("shiviz", 6, "ShiViz exports at once")
	traceN := fs.Int("trace", 40, "trace exports at once")
	stall := fs.Int("stall", 4, "then: exports asked for by clients that never read them (each from its own address)")
	gzip := fs.Bool("gzip", false, "ask for compressed answers, as a browser does (the server then compresses as it writes)")
	return func(ctx context.Context, srv *server) error {
		link, err := runLink(`{"version":2,"algorithm":"token-ring","nodes":`+strconv.Itoa(*nodes)+`,"seed":1}`, nil, 0)
		if err != nil {
			return err
		}
		rss, _ := srv.memory()
		fmt.Printf("server %s under ulimit -v %d: %d MiB resident at start\n", srv.url, args.ulimitKB, rss)
		q := "?step=" + strconv.Itoa(*step)
		for _, ph := range []struct {
			name, path string
			n          int
			spread     bool // one loopback address per request, else all from 127.0.0.1
		}{
			{"shiviz, one address", link + "/shiviz" + q, *shivizN, false},
			{"shiviz, an address each", link + "/shiviz" + q, *shivizN, true},
			{"trace, one address", link + "/trace.jsonl" + q, *traceN, false},
			{"trace, an address each", link + "/trace.jsonl" + q, *traceN, true},
		} {
			// A fresh visitor arrives while the exports run.
			probe := make(chan string, 1)
			go func() {
				time.Sleep(100 * time.Millisecond)
				probe <- visitSays(srv.url, "127.0.4.1")
			}()
			outcomes := fire(ctx, srv.url+ph.path, ph.n, ph.spread, *gzip)
			rss, peak := srv.memory()
			fmt.Printf("%-24s x%-3d %s; server %d MiB now, %d MiB peak; meanwhile a fresh visitor: %s\n", ph.name, ph.n, outcomes, rss, peak, <-probe)
			if !srv.alive() {
				return fmt.Errorf("the server died during %q:\n%s", ph.name, srv.lastLines())
			}
		}
		if err := stalled(ctx, srv, link+"/shiviz"+q, *stall); err != nil {
			return err
		}
		_, peak := srv.memory()
		fmt.Printf("the server is alive; peak resident memory %d MiB\n", peak)
		return nil
	}
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
	fmt.Printf("%-24s x%-3d every export place held; a fresh visitor: %s\n", "never read", n, visitSays(srv.url, "127.0.4.2"))
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
