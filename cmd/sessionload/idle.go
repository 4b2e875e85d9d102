package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

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
		followAll(clients, &wg)
	}
	if c.played > 0 && c.socket {
		wctx, cancel := context.WithCancel(ctx)
		workAll(wctx, c, clients, &wg)
		sleep(ctx, c.played)
		cancel()
		for _, cl := range clients {
			_ = cl.send(`{"type":"pause"}`)
		}
		fmt.Fprintf(c.out, "every run played for %v (%d trace events in all), then paused\n", c.played, st.events.Load())
	}
	// Idle means at rest: a still run keeps only its recipe after the server's --hibernate-after
	// (default 10 s; runtime/session/hibernate.go). Wait for every run to get there.
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
