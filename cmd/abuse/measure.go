package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/teach-dist/playground/cmd/internal/browser"
)

// What the attacks measure of a bystander: a fresh visitor's page, socket and
// snapshot, and the spread of many such times.

// visit is a fresh visitor of base at addr, a loopback address: a playground page, its
// socket and the snapshot, and how long they took.
func visit(base, addr string) (time.Duration, error) {
	c := browser.At(base, addr)
	defer c.HTTP.CloseIdleConnections()
	start := time.Now()
	id, err := c.Run("/play/bully?n=3")
	if err != nil {
		return 0, err
	}
	conn, err := c.Socket("/ws/" + id)
	if err != nil {
		return 0, fmt.Errorf("socket: %w", err)
	}
	took := time.Since(start)
	conn.Close()
	return took, nil
}

// visitSays is a visit as a line of output says it.
func visitSays(base, addr string) string {
	took, err := visit(base, addr)
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("page, socket and snapshot in %v", took.Round(time.Millisecond))
}

// visits is n visits at addr one after another, pause apart (a visitor, not a flood:
// within the page rate); their times, sorted.
func visits(base, addr string, n int, pause time.Duration) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		took, err := visit(base, addr)
		if err != nil {
			return nil, err
		}
		out = append(out, took)
		time.Sleep(pause)
	}
	slices.Sort(out)
	return out, nil
}

// quantile is the q-quantile of sorted durations (0 of none).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// spread says the p50, p99 and max of sorted durations, rounded to r.
func spread(sorted []time.Duration, r time.Duration) string {
	return fmt.Sprintf("p50 %v, p99 %v, max %v", quantile(sorted, 0.5).Round(r), quantile(sorted, 0.99).Round(r), quantile(sorted, 1).Round(r))
}
