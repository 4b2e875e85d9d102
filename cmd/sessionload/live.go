package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/procfs"
)

// live: every client plays; measure the server over the window.
func live(ctx context.Context, c *config, srv *server) error {
	st := &stats{}
	tr := newTransport()
	hc := &http.Client{Transport: tr}
	rss0, _ := procfs.Memory(srv.pid, "VmRSS")
	start := time.Now()
	clients, err := openAll(ctx, c, srv, st, tr, true)
	if err != nil {
		return err
	}
	ramp := time.Since(start)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	followAll(clients, &wg)
	workAll(wctx, c, clients, &wg)
	fmt.Fprintf(c.out, "ramp-up: %d sessions opened and connected in %v\n", len(clients), ramp.Round(time.Millisecond))
	sleep(ctx, c.warmup)

	cpu0, _ := procfs.CPU(srv.pid)
	self0, _ := procfs.CPU(os.Getpid())
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
		if r, err := procfs.Memory(srv.pid, "VmRSS"); err == nil {
			peak = max(peak, r)
		}
	}
	window := time.Since(w0)
	cpu1, _ := procfs.CPU(srv.pid)
	self1, _ := procfs.CPU(os.Getpid())
	ev1, fr1 := st.events.Load(), st.frames.Load()
	srvEv1 := srv.metric(hc, "playground_trace_events_total")
	rss1, _ := procfs.Memory(srv.pid, "VmRSS")
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
