package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/procfs"
)

// The attacks with students' sources (docs/security.md, "Students' sources"), against a
// `playground serve` child and its sandbox workers; the sources are in
// sandbox_sources.go.

// sandboxBombsAttack: each bomb of the issue (zip, lists, max) by each route a source
// reaches the server (a link's GET, the page's reset frame, a lecture follower's reset
// frame), against a `playground serve` with the default flags. It prints how long the
// attacker waited for its error and what it said, the server's resident memory before
// and after (its sandbox workers apart), and whether a fresh visitor still gets a page,
// a socket and a snapshot.
func sandboxBombsAttack(_ *flag.FlagSet, _ *serveArgs) func(context.Context, *server) error {
	return func(ctx context.Context, srv *server) error {
		attacker := srv.client("127.0.0.1")
		_, page, err := playSource(attacker, abuseSource("# a harmless start\n"))
		if err != nil {
			return err
		}
		defer page.Close()
		presenter, code, err := srv.client("127.0.0.3").Lecture("/play/ricart-agrawala?n=3")
		if err != nil {
			return err
		}
		defer presenter.Close()
		drain(presenter)
		follower, err := attacker.Socket("/ws/lecture/" + code)
		if err != nil {
			return err
		}
		defer follower.Close()
		before, _ := srv.memory()
		fmt.Printf("server %s: %d MiB resident before the bombs\n", srv.url, before)

		byFrame := func(conn *websocket.Conn, source string) (string, error) {
			if err := send(conn, resetFrame(source)); err != nil {
				return "", err
			}
			f, err := readFrame(conn, 5*time.Minute, "hello", "error")
			if err != nil {
				return "", err
			}
			return f.Type + " " + f.Code + ": " + f.Error, nil
		}
		routes := []struct {
			name   string
			attack func(source string) (string, error)
		}{
			{"link GET", func(source string) (string, error) {
				status, reason, err := openLink(ctx, attacker, source)
				return fmt.Sprintf("%d: %s", status, reason), err
			}},
			{"page's reset", func(source string) (string, error) { return byFrame(page, source) }},
			{"follower's reset", func(source string) (string, error) { return byFrame(follower, source) }},
		}
		for _, bomb := range sandboxBombs {
			for _, route := range routes {
				source := abuseSource(bomb.code + fmt.Sprintf("# %s by %s, %d\n", bomb.name, route.name, time.Now().UnixNano()))
				t0 := time.Now()
				told, err := route.attack(source)
				took := time.Since(t0)
				if err != nil {
					told = "failed: " + err.Error()
				}
				rss, peak := srv.memory()
				fmt.Printf("%-5s by %-17s %-8v %s; server %d MiB (peak %d MiB)\n", bomb.name, route.name, took.Round(time.Millisecond), short(told), rss, peak)
				if !srv.alive() {
					return fmt.Errorf("the server died: %s", srv.lastLines())
				}
			}
		}
		after, peak := srv.memory()
		fmt.Printf("server alive: %d MiB resident before, %d MiB after, peak %d MiB; a fresh visitor (127.0.0.2): %s\n", before, after, peak, visitSays(srv.url, "127.0.0.2"))
		return nil
	}
}

// sandboxKeepAttack: five distinct links whose sources keep 100 MiB of lists each in a
// global (the issue's: 20 MiB to 521 MiB in the server). It prints what each link
// answered, the server's resident memory and its sandbox workers'.
func sandboxKeepAttack(fs *flag.FlagSet, _ *serveArgs) func(context.Context, *server) error {
	links := fs.Int("links", 5, "distinct links")
	lists := fs.Int("lists", 100, "lists of 65,536 elements (1 MiB each) each source keeps")
	return func(ctx context.Context, srv *server) error {
		before, _ := srv.memory()
		fmt.Printf("server %s: %d MiB resident before the links\n", srv.url, before)
		c := srv.client("127.0.0.1")
		for k := range *links {
			source := abuseSource(fmt.Sprintf("keep = [list(range(65536)) for i in range(%d)]\n# link %d, %d\n", *lists, k, time.Now().UnixNano()))
			t0 := time.Now()
			status, said, err := openLink(ctx, c, source)
			if err != nil {
				return err
			}
			if status == http.StatusOK {
				said = "the run's page"
			}
			rss, _ := srv.memory()
			fmt.Printf("link %d: %d in %v, %s; server %d MiB, its sandbox workers %d MiB\n", k+1, status,
				time.Since(t0).Round(time.Millisecond), short(said), rss, rssOf(procfs.Children(srv.cmd.Process.Pid)))
		}
		after, peak := srv.memory()
		fmt.Printf("server alive %v: %d MiB resident before, %d MiB after, peak %d MiB; a fresh visitor (127.0.0.2): %s\n",
			srv.alive(), before, after, peak, visitSays(srv.url, "127.0.0.2"))
		return nil
	}
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

// cpuAttacker keeps n runs of cpuSource going from c: each time a run stops (the
// sandbox killed its step), it runs the source again (cached: no load) and plays.
// It returns how many steps were stopped, counted as they come, why the first one
// stopped, and a func that ends the attack and closes every socket.
func cpuAttacker(c *browser.Client, n int) (*atomic.Int64, *atomic.Pointer[string], func(), error) {
	source := cpuSource(fmt.Sprintf("cpu attacker %d", time.Now().UnixNano()))
	var conns []*websocket.Conn
	var wg sync.WaitGroup
	stopped := &atomic.Int64{}
	reason := &atomic.Pointer[string]{}
	stop := func() {
		closeAll(&conns)
		wg.Wait()
	}
	for range n {
		_, conn, err := playSource(c, source)
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		conns = append(conns, conn)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if send(conn, `{"type":"play"}`) != nil {
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

// sandboxCPUAttack: one address keeps -sockets runs of a source whose request handler
// takes minutes of CPU (the issue: 8 from one address made a fresh visitor's page,
// socket and snapshot p50 292-851 ms, p99 1.66 s; the server stayed busy for minutes
// after the attacker left). A fresh visitor at another address measures page, socket
// and snapshot before (the baseline, in the same run) and during the attack; then the
// attacker leaves and the tool measures how long until the server and its workers use
// no CPU.
func sandboxCPUAttack(fs *flag.FlagSet, _ *serveArgs) func(context.Context, *server) error {
	sockets := fs.Int("sockets", 8, "the attacker's runs, each with its socket")
	samples := fs.Int("visits", 40, "fresh visits measured before and during the attack")
	return func(ctx context.Context, srv *server) error {
		// A visitor every tenth of a second, not a flood.
		base, err := visits(srv.url, "127.0.0.2", *samples, 100*time.Millisecond)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		fmt.Printf("baseline, %d fresh visitors at 127.0.0.2: page, socket and snapshot %s\n", len(base), spread(base, 100*time.Microsecond))
		t0 := time.Now()
		stopped, reason, leave, err := cpuAttacker(srv.client("127.0.0.1"), *sockets)
		if err != nil {
			return err
		}
		during, err := visits(srv.url, "127.0.0.2", *samples, 100*time.Millisecond)
		if err != nil {
			leave()
			return fmt.Errorf("during the attack: %w", err)
		}
		why := "none"
		if r := reason.Load(); r != nil {
			why = *r
		}
		fmt.Printf("during the attack (%d runs of the source at 127.0.0.1: %d steps stopped in %v, the first with %q), %d fresh visitors at 127.0.0.2: %s\n",
			*sockets, stopped.Load(), time.Since(t0).Round(time.Second), why, len(during), spread(during, 100*time.Microsecond))
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
}

// sandboxSigtermAttack: SIGTERM to `playground serve` while students' sources keep its
// sandbox busy (-sockets runs of the CPU source from one address, two Checks of a slow
// source, three links whose loading takes minutes). It prints how long the server took
// to exit and whether its sandbox workers ended with it (the issue: SIGTERM did not stop
// the server while the sources ran).
func sandboxSigtermAttack(fs *flag.FlagSet, _ *serveArgs) func(context.Context, *server) error {
	sockets := fs.Int("sockets", 8, "the attacker's runs of the CPU source")
	return func(ctx context.Context, srv *server) error {
		attacker := srv.client("127.0.0.1")
		_, _, leave, err := cpuAttacker(attacker, *sockets)
		if err != nil {
			return err
		}
		defer leave()
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		for k := range 2 {
			id, conn, err := playSlow(attacker, fmt.Sprintf("sigterm check %d", k))
			if err != nil {
				return err
			}
			defer conn.Close()
			go func() { _, _ = checkUntil(actx, attacker, id, "result") }()
		}
		for k := range 3 {
			bomb := abuseSource(sandboxBombs[2].code + fmt.Sprintf("# sigterm link %d %d\n", k, time.Now().UnixNano()))
			go func() { _, _, _ = openLink(actx, srv.client("127.0.0.4"), bomb) }()
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
}

// sandboxChecksAttack: one address starts two Checks of a source whose request
// handler takes minutes, holding both explorer slots, and cancels them after -hold
// (the issue: cancelled after 10 s, they ran for 7 minutes and held both slots). A
// second address's Check of a Go algorithm waits meanwhile; the tool prints how long
// after the cancel it started and ended, and how long the cancelled searches' worker
// processes lived on.
func sandboxChecksAttack(fs *flag.FlagSet, _ *serveArgs) func(context.Context, *server) error {
	hold := fs.Duration("hold", 10*time.Second, "how long the attacker's Checks run before it cancels them")
	return func(ctx context.Context, srv *server) error {
		pid := srv.cmd.Process.Pid
		attacker := srv.client("127.0.0.1")
		var ids []string
		for k := range 2 {
			id, conn, err := playSlow(attacker, fmt.Sprintf("checks attacker %d", k))
			if err != nil {
				return err
			}
			defer conn.Close()
			ids = append(ids, id)
		}
		stepWorkers := procfs.Children(pid)
		actx, cancel := context.WithCancel(ctx)
		defer cancel()
		for _, id := range ids {
			lines, err := checkStream(actx, attacker, id)
			if err != nil {
				return err
			}
			if _, err := waitLine(lines, "start"); err != nil {
				return err
			}
			go func() {
				for range lines {
				}
			}()
		}
		var searches []int
		for _, w := range procfs.Children(pid) {
			if !slices.Contains(stepWorkers, w) {
				searches = append(searches, w)
			}
		}
		fmt.Printf("server %s: the attacker's two Checks hold both explorer slots (%d search processes)\n", srv.url, len(searches))
		victim := srv.client("127.0.0.2")
		id, err := victim.Run("/play/ricart-agrawala?n=3")
		if err != nil {
			return fmt.Errorf("second address's page: %w", err)
		}
		lines, err := checkStream(ctx, victim, id)
		if err != nil {
			return err
		}
		first, err := waitLine(lines, "queued")
		if err != nil {
			return err
		}
		fmt.Printf("second address 127.0.0.2: its Check of the Go Ricart-Agrawala waits at position %d\n", first.Position)
		time.Sleep(*hold)
		cancel()
		cancelled := time.Now()
		start, err := waitLine(lines, "start")
		if err != nil {
			return err
		}
		result, err := waitLine(lines, "result")
		if err != nil {
			return err
		}
		gone := time.Duration(0)
		for _, w := range searches {
			for !procfs.Ended(w) && time.Since(cancelled) < 10*time.Minute {
				time.Sleep(time.Millisecond)
			}
			gone = max(gone, time.Since(cancelled))
		}
		if start.at.Before(cancelled) {
			// The interpreter's bound ended the attacker's searches before the cancel.
			fmt.Printf("the attacker's searches ended by themselves: the second address's Check started %v after it asked, before the attacker cancelled (%v); it ended %s %s\n",
				start.at.Sub(first.at).Round(time.Millisecond), *hold, result.Result.Result, result.Result.Bound)
			return nil
		}
		fmt.Printf("the attacker cancelled after %v: the search processes ended within %v; the second address's Check started %v and ended %v after the cancel (%s %s)\n",
			*hold, gone.Round(time.Millisecond), start.at.Sub(cancelled).Round(time.Millisecond), result.at.Sub(cancelled).Round(time.Millisecond),
			result.Result.Result, result.Result.Bound)
		return nil
	}
}
