package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// What a run measured, and its verdict against the targets (-want-p99, -want-cores).

// result is what one run measured.
type result struct {
	total      int   // steps the presenter sent (stepping)
	step0      int64 // the step before the first one sent
	steps      int64 // steps the presenter saw go by
	wall       time.Duration
	serverCPU  float64 // seconds of the server child's CPU over wall
	ownCPU     float64 // seconds of this tool's CPU over wall
	rss        string  // the server's resident memory with every follower attached
	peakRSS    string
	load       string // the machine's load average as the steps ended
	fl         []*follower
	slowFrames []int  // frames each slow follower read before the server let it go
	slowCut    []bool // its connection is closed
	dropAt     time.Duration
}

// tally is the numbering and timing over every follower.
type tally struct {
	latencies     []time.Duration // of the timed followers, sorted
	timed, frames int
	gaps, repeats int
	behind        int // followers that had not read the last frame of their protocol at the end
}

func (r *result) tally() tally {
	var t tally
	top := map[int]int64{}
	for _, f := range r.fl {
		top[f.proto] = max(top[f.proto], f.last)
	}
	for _, f := range r.fl {
		if f.timed {
			t.timed++
		}
		t.latencies = append(t.latencies, f.latencies...)
		t.frames += f.frames
		t.gaps += f.gaps
		t.repeats += f.repeats
		if f.last < top[f.proto] {
			t.behind++
		}
	}
	slices.Sort(t.latencies)
	return t
}

// pct is the p-th quantile of the sorted latencies.
func (t tally) pct(p float64) time.Duration {
	if len(t.latencies) == 0 {
		return 0
	}
	return t.latencies[min(len(t.latencies)-1, int(p*float64(len(t.latencies))))]
}

func (r *result) print(out io.Writer, c config) {
	t := r.tally()
	secs := r.wall.Seconds()
	cores, own := r.serverCPU/secs, r.ownCPU/secs
	if c.play == 0 {
		fmt.Fprintf(out, "steps sent: %d (steps %d to %d) in %.2fs\n", r.total, r.step0+1, r.step0+int64(r.total), secs)
		fmt.Fprintf(out, "frames delivered: %d of %d expected (%d timed followers x %d), gaps %d, repeats %d, still behind 30 s after the last step %d (every follower)\n",
			len(t.latencies), t.timed*r.total, t.timed, r.total, t.gaps, t.repeats, t.behind)
		fmt.Fprintf(out, "delivery latency (step command sent -> follower read): p50 %s  p90 %s  p99 %s  max %s\n",
			ms(t.pct(0.50)), ms(t.pct(0.90)), ms(t.pct(0.99)), ms(t.pct(1)))
	} else {
		fmt.Fprintf(out, "frames read: %d by %d followers, gaps %d, repeats %d, still behind 30 s after the end %d\n", t.frames, c.followers, t.gaps, t.repeats, t.behind)
	}
	fmt.Fprintf(out, "server CPU: %.3f cores (%.2fs of CPU over %.2fs), RSS %s with the followers attached (peak %s); this tool's own CPU: %.3f cores (its followers' reading); load average %s\n",
		cores, r.serverCPU, secs, r.rss, r.peakRSS, own, r.load)
	// The server's follower count says when it let the slow ones go; what the slow
	// client itself sees depends on its socket (a tiny window may hide the close).
	for i, n := range r.slowFrames {
		fmt.Fprintf(out, "slow follower %d: read %d frames of %d at the end; ", i, n, r.total)
		if r.dropAt > 0 {
			fmt.Fprintf(out, "the server dropped it %.1fs into the run (follower count fell to %d)", r.dropAt.Seconds(), c.followers)
		} else {
			fmt.Fprint(out, "the server still counted it")
		}
		if r.slowCut[i] {
			fmt.Fprint(out, "; its connection is closed")
		}
		fmt.Fprintln(out)
	}
	wire := map[int]*wireStats{1: {}, 2: {}}
	for _, f := range r.fl {
		wire[f.proto].add(f)
	}
	reportWire(out, wire, r.steps)
	intact := t.gaps == 0 && t.repeats == 0 && t.behind == 0
	unit := "cores"
	if c.wantCores == 1 {
		unit = "core"
	}
	cpu := fmt.Sprintf("CPU <= %g %s: %s", c.wantCores, unit, verdict(cores <= c.wantCores))
	if c.play > 0 {
		fmt.Fprintf(out, "played at %gx: %d steps; no loss, no repeat: %s; %s\n", c.play, r.steps, verdict(intact), cpu)
		return
	}
	fmt.Fprintf(out, "p99 <= %s: %s; %s; no loss, no repeat: %s; slow follower dropped: %s\n",
		ms(c.wantP99), verdict(t.pct(0.99) <= c.wantP99), cpu, verdict(intact && len(t.latencies) == t.timed*r.total),
		verdict(c.slow == 0 || r.dropAt > 0))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
