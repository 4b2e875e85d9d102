package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/web"
)

func init() { attacks["cpu"] = cpuAttack }

// cpuAttack: one address (127.0.0.1) plays -sessions heavy runs (the Go
// Ricart-Agrawala with -n processes at 16x, half of them asking for the CS again
// whenever the run goes quiet) while a fresh visitor of another address (127.0.0.2)
// loads a page, opens its socket and waits for the snapshot, -samples times; a visitor
// of a third address (127.0.0.3) is measured first with no attacker (the baseline,
// same run). -fair=false
// gives the server a CPU share larger than any machine, as before the fair share.
func cpuAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cpu", flag.ContinueOnError)
	sessions := fs.Int("sessions", 20, "heavy runs of the attacking address")
	nodes := fs.Int("n", 128, "processes of each heavy run")
	samples := fs.Int("samples", 200, "fresh visits measured in each phase")
	warm := fs.Duration("warm", 3*time.Second, "how long the heavy runs play before the visits are measured")
	fair := fs.Bool("fair", true, "the server shares the CPU fairly (false: a share no machine reaches)")
	target := fs.Duration("target", 100*time.Millisecond, "the fresh visitor's p99 under attack must be at or under this (0: no verdict)")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the whole attack (server and clients) here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	opts := web.Options{MaxSessions: 200}
	if !*fair {
		opts.CPU = session.CPUOptions{Cores: 1e9}
	}
	base, stop, err := fairServer(ctx, opts)
	if err != nil {
		return err
	}
	defer stop()

	// The baseline's visitor has an address of its own: each visit is a new run, and
	// one address may start 300 in a burst (--rate-sessions).
	baseline, _, err := visits(base, "127.0.0.3", *samples)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	fmt.Printf("baseline (no attacker): fresh visitor 127.0.0.3, %d visits: %s\n", *samples, baseline)

	attacker := newFairClient("127.0.0.1")
	var frames, slowed atomic.Int64
	var wg sync.WaitGroup
	var conns []*websocket.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()
	ask := func(c *websocket.Conn, mu *sync.Mutex, from int) {
		mu.Lock()
		defer mu.Unlock()
		// Half the processes, within the connection's burst of commands.
		for k := range *nodes / 2 {
			_ = c.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"type":"act","do":"request","node":%d}`, (from+k)%*nodes))
		}
	}
	for range *sessions {
		attacker.fresh()
		code, id, err := attacker.page(fmt.Sprintf("%s/play/ricart-agrawala?n=%d", base, *nodes))
		if err != nil || code != http.StatusOK {
			return fmt.Errorf("attacker's page: %d %v", code, err)
		}
		c, err := attacker.socket(base, id)
		if err != nil {
			return fmt.Errorf("attacker's socket: %w", err)
		}
		conns = append(conns, c)
		mu := &sync.Mutex{}
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"speed","speed":16}`))
		ask(c, mu, 0)
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"type":"play"}`))
		wg.Add(1)
		go func() {
			defer wg.Done()
			round := 0
			for {
				_, b, err := c.ReadMessage()
				if err != nil {
					return
				}
				s := string(b)
				if !strings.HasPrefix(s, `{"type":"events"`) && !strings.HasPrefix(s, `{"type":"state"`) {
					continue
				}
				frames.Add(1)
				if strings.Contains(s, `"slowed":`) {
					slowed.Add(1)
				}
				if strings.Contains(s, `"quiet":true`) {
					round++
					ask(c, mu, round**nodes/2)
				}
			}
		}()
	}
	fmt.Printf("attacker 127.0.0.1: %d runs of ricart-agrawala n=%d at 16x playing; warming %v\n", *sessions, *nodes, *warm)
	select {
	case <-time.After(*warm):
	case <-ctx.Done():
		return ctx.Err()
	}
	frames.Store(0)
	slowed.Store(0)
	under, p99, err := visits(base, "127.0.0.2", *samples)
	if err != nil {
		return fmt.Errorf("under attack: %w", err)
	}
	fmt.Printf("under attack: fresh visitor 127.0.0.2, %d visits: %s\n", *samples, under)
	fmt.Printf("attacker's frames meanwhile: %d, %d of them slowed\n", frames.Load(), slowed.Load())
	if *target > 0 && p99 > *target {
		return fmt.Errorf("the fresh visitor's p99 under attack, %v, is over the target of %v", p99, *target)
	}
	if *target > 0 {
		fmt.Printf("target met: p99 %v at or under %v\n", p99, *target)
	}
	return nil
}

// visits measures n fresh visits of addr: page, socket and snapshot, one after another;
// it says their p50, p99 and max, and returns the p99.
func visits(base, addr string, n int) (string, time.Duration, error) {
	var ds []time.Duration
	for range n {
		c := newFairClient(addr)
		start := time.Now()
		code, id, err := c.page(base + "/play/bully?n=3")
		if err != nil || code != http.StatusOK {
			return "", 0, fmt.Errorf("page %d %v", code, err)
		}
		conn, err := c.socket(base, id)
		if err != nil {
			return "", 0, fmt.Errorf("socket: %w", err)
		}
		ds = append(ds, time.Since(start))
		conn.Close()
		c.http.CloseIdleConnections()
		time.Sleep(20 * time.Millisecond) // a visitor, not a flood: keeps within the page rate
	}
	slices.Sort(ds)
	q := func(p float64) time.Duration {
		return ds[min(len(ds)-1, int(p*float64(len(ds))))].Round(100 * time.Microsecond)
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v", q(0.50), q(0.99), ds[len(ds)-1].Round(100*time.Microsecond)), q(0.99), nil
}
