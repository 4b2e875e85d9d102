package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/compare"
)

func init() { attacks["compare"] = compareAttack }

// The two clients of the attack, told apart by X-Forwarded-For through the loopback
// "proxy" (the server runs with --trusted-proxy 127.0.0.0/8).
const (
	compareAttacker = "203.0.113.7"
	compareVictim   = "198.51.100.20"
)

// compareAttack is the compare-flooding abuse at full scale (without the compare
// queue, 16 loops of heavy /compare made a trivial compare take 26-29 s and 11
// requests got 503): -loops loops from one address ask
// heavy comparisons, each a new query once the server took the last (a cached one
// costs nothing; a refused one is asked again after -pause), while a second
// address asks -tries trivial ones, one after another, reloading as its page says
// (Refresh) or as a visitor would after a refusal. It prints the time each trivial
// comparison took to its chart, every answer per address and the server's memory.
func compareAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags and --trusted-proxy 127.0.0.0/8)")
	loops := fs.Int("loops", 16, "looping attackers, all from one address")
	tries := fs.Int("tries", 6, "trivial comparisons of the second address, one after another")
	warm := fs.Duration("warm", 3*time.Second, "how long the loops run before the second address starts")
	reload := fs.Duration("reload", 3*time.Second, "how long the second address waits before it reloads a page that is not its chart (the page's Refresh)")
	pause := fs.Duration("pause", 250*time.Millisecond, "how long a loop waits after a refusal (429, 503) before its next request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	heavy, err := heavyComparisons()
	if err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0, "--trusted-proxy", "127.0.0.0/8")
	if err != nil {
		return err
	}
	defer srv.stop()
	rss, _ := srv.memory()
	fmt.Printf("server %s: %d MiB resident at start; %d loops of heavy comparisons from %s, e.g. /compare?%s\n",
		srv.url, rss, *loops, compareAttacker, heavy[0])

	var tally answers
	c := &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *loops}}
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
				a := askCompare(actx, c, srv.url, compareAttacker, q)
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
			a := askCompare(ctx, c, srv.url, compareVictim, q)
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
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	_, peak := srv.memory()
	fmt.Printf("second address: to its chart median %s, worst %s\n", took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	for _, addr := range []string{compareAttacker, compareVictim} {
		fmt.Printf("answers to %s: %s\n", addr, tally.of(addr))
	}
	fmt.Printf("server peak resident memory %d MiB; alive: %v\n", peak, srv.alive())
	return nil
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

// askCompare loads /compare?q as client addr.
func askCompare(ctx context.Context, c *http.Client, base, addr, q string) compareAnswer {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/compare?"+q, nil)
	if err != nil {
		return compareAnswer{err: err}
	}
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := c.Do(req)
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

// answers counts what each address got.
type answers struct {
	mu sync.Mutex
	by map[string]map[string]int
}

func (t *answers) add(addr string, a compareAnswer) {
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

func (t *answers) of(addr string) string {
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
