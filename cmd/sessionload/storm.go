package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

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
	followAll(clients, &wg)
	workAll(wctx, c, clients, &wg)
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
	followAll(clients, &wg)
	workAll(wctx, c, clients, &wg)
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
