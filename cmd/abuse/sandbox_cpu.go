package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/cmd/internal/procfs"
)

func init() {
	attacks["sandbox-cpu"] = sandboxCPUAttack
	attacks["sandbox-sigterm"] = sandboxSigtermAttack
}

// cpuSource's request handler takes minutes of CPU (max() over a million elements,
// again and again) unless something stops it.
func cpuSource(tag string) string {
	return abuseSource("\ndef on_request(ctx, s):\n    big = list(range(65536)) * 15\n    for i in range(50000):\n        max(big)\n# " + tag + "\n")
}

// slowTemplate is the Ricart-Agrawala template whose request handler first takes
// minutes of CPU: a search of it holds its explorer slot until something stops it.
func slowTemplate(tag string) (string, error) {
	src, _ := starlarkalg.Template("ricart-agrawala")
	slow := strings.Replace(src, "def on_request(ctx, s):\n", "def on_request(ctx, s):\n    burn()\n", 1)
	if slow == src {
		return "", errors.New("the template has no on_request to slow down")
	}
	return slow + "\ndef burn():\n    big = list(range(65536)) * 15\n    for i in range(50000):\n        max(big)\n# " + tag + "\n", nil
}

// cpuTicks is the CPU time (user and system, in clock ticks) each of pids has used.
func cpuTicks(pids []int) map[int]int64 {
	ticks := map[int]int64{}
	for _, pid := range pids {
		if t, err := procfs.CPUTicks(pid); err == nil {
			ticks[pid] = t
		}
	}
	return ticks
}

// usedSince is the CPU time (clock ticks) the processes of now used since before: a
// process that has ended counts for nothing, a new one for all its time.
func usedSince(before, now map[int]int64) int64 {
	var used int64
	for pid, t := range now {
		used += t - before[pid]
	}
	return used
}

// quantile is the q-quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// cpuAttacker keeps n runs of cpuSource going from c: each time a run stops (the
// sandbox killed its step), it runs the source again (cached: no load) and plays.
// It returns how many steps were stopped, counted as they come, why the first one
// stopped, and a func that ends the attack and closes every socket.
func cpuAttacker(c *fairClient, base string, n int) (*atomic.Int64, *atomic.Pointer[string], func(), error) {
	source := cpuSource(fmt.Sprintf("cpu attacker %d", time.Now().UnixNano()))
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	stopped := &atomic.Int64{}
	reason := &atomic.Pointer[string]{}
	stop := func() {
		for _, conn := range conns {
			conn.Close()
		}
		wg.Wait()
	}
	for range n {
		_, conn, err := playSource(c, base, source)
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"play"}`)) != nil {
					return
				}
				for {
					f, err := readFrame(conn, time.Hour, "state")
					if err != nil {
						return
					}
					if f.Stopped != "" {
						reason.CompareAndSwap(nil, &f.Stopped)
						stopped.Add(1)
						break
					}
				}
				if restart(conn, source) != nil {
					return
				}
			}
		}()
	}
	return stopped, reason, stop, nil
}

// visitTimes is n fresh visitors at addr, one after another: each one's page, socket
// and snapshot, sorted.
func visitTimes(base, addr string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		c := newFairClient(addr)
		t0 := time.Now()
		code, id, err := c.page(base + "/play/bully?n=3")
		if err != nil || code != http.StatusOK {
			return nil, fmt.Errorf("page %d %v", code, err)
		}
		conn, err := c.socket(base, id)
		if err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
		conn.Close()
		time.Sleep(100 * time.Millisecond) // a visitor every tenth of a second, not a flood
	}
	slices.Sort(out)
	return out, nil
}

// sandboxCPUAttack: one address keeps -sockets runs of a source whose request handler
// takes minutes of CPU (the issue: 8 from one address made a fresh visitor's page,
// socket and snapshot p50 292-851 ms, p99 1.66 s; the server stayed busy for minutes
// after the attacker left). A fresh visitor at another address measures page, socket
// and snapshot before (the baseline, in the same run) and during the attack; then the
// attacker leaves and the tool measures how long until the server and its workers
// use no CPU.
func sandboxCPUAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox-cpu", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	sockets := fs.Int("sockets", 8, "the attacker's runs, each with its socket")
	visits := fs.Int("visits", 40, "fresh visits measured before and during the attack")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	base, err := visitTimes(srv.url, "127.0.0.2", *visits)
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	fmt.Printf("baseline, %d fresh visitors at 127.0.0.2: page, socket and snapshot p50 %v, p99 %v, max %v\n", len(base),
		quantile(base, 0.5).Round(100*time.Microsecond), quantile(base, 0.99).Round(100*time.Microsecond), base[len(base)-1].Round(100*time.Microsecond))
	t0 := time.Now()
	stopped, reason, leave, err := cpuAttacker(newFairClient("127.0.0.1"), srv.url, *sockets)
	if err != nil {
		return err
	}
	during, err := visitTimes(srv.url, "127.0.0.2", *visits)
	if err != nil {
		leave()
		return fmt.Errorf("during the attack: %w", err)
	}
	why := "none"
	if r := reason.Load(); r != nil {
		why = *r
	}
	fmt.Printf("during the attack (%d runs of the source at 127.0.0.1: %d steps stopped in %v, the first with %q), %d fresh visitors at 127.0.0.2: p50 %v, p99 %v, max %v\n",
		*sockets, stopped.Load(), time.Since(t0).Round(time.Second), why, len(during), quantile(during, 0.5).Round(100*time.Microsecond),
		quantile(during, 0.99).Round(100*time.Microsecond), during[len(during)-1].Round(100*time.Microsecond))
	pid := srv.cmd.Process.Pid
	busy := cpuTicks(append(procfs.Children(pid), pid))
	leave()
	left := time.Now()
	// Idle: the server and its workers together use under a tenth of a core for a
	// second. The time reported is from the attacker's leaving to the start of that
	// second.
	lastBusy, last := left, busy
	for time.Since(lastBusy) < time.Second && time.Since(left) < 10*time.Minute {
		time.Sleep(100 * time.Millisecond)
		now := cpuTicks(append(procfs.Children(pid), pid))
		if usedSince(last, now) > 1 { // more than 10 ms of CPU in 100 ms
			lastBusy = time.Now()
		}
		last = now
	}
	fmt.Printf("the attacker left: the server and its sandbox workers idle %v later; server %s alive %v\n",
		lastBusy.Sub(left).Round(100*time.Millisecond), srv.url, srv.alive())
	return nil
}

// sandboxSigtermAttack: SIGTERM to `playground serve` while students' sources keep its
// sandbox busy (-sockets runs of the CPU source from one address, two Checks of a slow
// source, three links whose loading takes minutes). It prints how long the server
// took to exit and whether its sandbox workers ended with it (the issue: SIGTERM did
// not stop the server while the sources ran).
func sandboxSigtermAttack(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sandbox-sigterm", flag.ContinueOnError)
	bin := fs.String("server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
	sockets := fs.Int("sockets", 8, "the attacker's runs of the CPU source")
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := startServer(ctx, *bin, 0)
	if err != nil {
		return err
	}
	defer srv.stop()
	attacker := newFairClient("127.0.0.1")
	_, _, leave, err := cpuAttacker(attacker, srv.url, *sockets)
	if err != nil {
		return err
	}
	defer leave()
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	for k := range 2 {
		slow, err := slowTemplate(fmt.Sprintf("sigterm check %d %d", k, time.Now().UnixNano()))
		if err != nil {
			return err
		}
		id, conn, err := playSource(attacker, srv.url, slow)
		if err != nil {
			return err
		}
		defer conn.Close()
		go func() { _, _ = checkUntil(actx, attacker, srv.url, id, "result") }()
	}
	for k := range 3 {
		bomb := abuseSource(sandboxBombs[2].code + fmt.Sprintf("# sigterm link %d %d\n", k, time.Now().UnixNano()))
		go func() {
			req, _ := http.NewRequestWithContext(actx, http.MethodGet, srv.url+sourceLink(bomb), nil)
			if resp, err := newFairClient("127.0.0.4").http.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(3 * time.Second) // the attack under way: every worker busy
	pid := srv.cmd.Process.Pid
	workers := procfs.Children(pid)
	fmt.Printf("server %s under attack: %d sandbox worker processes; SIGTERM\n", srv.url, len(workers))
	sent := time.Now()
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-srv.done:
	case <-time.After(5 * time.Minute):
		return errors.New("the server did not exit within 5 minutes of SIGTERM")
	}
	exited := time.Since(sent)
	for _, w := range workers {
		for !procfs.Ended(w) && time.Since(sent) < time.Minute {
			time.Sleep(10 * time.Millisecond)
		}
	}
	left := 0
	for _, w := range workers {
		if !procfs.Ended(w) {
			left++
		}
	}
	fmt.Printf("the server exited %v after SIGTERM (%v); its %d workers ended %v after it, %d still running\n",
		exited.Round(time.Millisecond), srv.cmd.ProcessState, len(workers), (time.Since(sent) - exited).Round(time.Millisecond), left)
	return nil
}
