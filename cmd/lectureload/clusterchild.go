package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/lecture/natsbroker"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web"
)

// The children of cluster mode (cluster.go): a server of the cluster, and a load
// process holding a share of the followers.

// clusterServe is a server child: the playground server with the NATS broker.
func clusterServe(natsURL string, maxFollowers int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	nb, err := natsbroker.Connect(natsbroker.Options{URL: natsURL})
	if err != nil {
		return err
	}
	defer nb.Close() // after the server has ended its lectures
	srv := web.New(web.Options{Broker: nb, Lecture: lecture.Options{MaxFollowers: maxFollowers, FollowersPerClient: maxFollowers}})
	return srv.ListenAndServe(ctx, "127.0.0.1:0", func(addr string) { fmt.Println(addr) })
}

// job is what a load child does: followers on one server of the lecture.
type job struct {
	Base      string        `json:"base"`
	Code      string        `json:"code"`
	Followers int           `json:"followers"`
	Proto     string        `json:"proto"`
	Pace      time.Duration `json:"pace"`
}

// sendTimes is what the parent hands the load children after the run: the wall-clock
// time each step command left (UnixNano), steps Step0+1 .. Step0+len(Sent).
type sendTimes struct {
	Step0 int64   `json:"step0"`
	Sent  []int64 `json:"sent"`
}

// childResult is what a load child measured.
type childResult struct {
	Followers, Timed       int
	Frames, Gaps, Repeats  int
	LastMin, LastMax       [3]int64 // by protocol (1, 2): the last number read
	Latencies              []int64  // µs, every timed follower's every step
	Missing                int      // steps a timed follower never read
	Dropped                int      // followers whose server closed their connection during the run
	Socket                 [3]int64 // bytes read, by protocol
	EventsBytes, OtherByte [3]int64
	EventsN, OtherN, Bad   [3]int
	N                      [3]int // followers by protocol
}

// loadChild joins its followers, says "joined", and reads until the parent's send
// times come (one JSON line) and every timed follower has read the last step; then it
// writes its result (one JSON line).
func loadChild(spec string, in io.Reader, out io.Writer) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return fmt.Errorf("-job: %w", err)
	}
	steps := make([]atomic.Int64, j.Followers) // the latest step a timed follower read
	recv := make([][]stepAt, j.Followers)
	var readers sync.WaitGroup
	every := sampleEvery(j.Followers)
	// Each follower reads from the moment it joined, as a device does: one that waited
	// for the last of thousands to join would miss the server's pings meanwhile.
	sweep := newSweeper(j.Pace)
	fl, joinErr := joinAll(j.Followers, func(i int) (*follower, error) {
		// Only a sample is timed (and, with protocol 2, expanded): the tool's work for
		// thousands of followers would otherwise be the bottleneck.
		f := &follower{proto: 1, timed: i%every < 2}
		if j.Proto == "2" || j.Proto == "both" && i%2 == 1 {
			f.proto = 2
			if f.timed {
				f.x = protocol.NewExpander()
			}
		}
		if err := f.join(j.Base, fmt.Sprintf("/ws/lecture/%s?proto=%d", j.Code, f.proto), j.Pace); err != nil {
			return f, err
		}
		if f.conn == nil {
			sweep.add(f)
			return f, nil
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			recv[i] = f.readStamped(&steps[i])
		}()
		return f, nil
	})
	if joinErr != nil {
		sweep.close()
		for _, f := range fl {
			if f != nil {
				f.close()
			}
		}
		return fmt.Errorf("a follower could not join %s: %w", j.Base, joinErr)
	}
	fmt.Fprintln(out, "joined")

	stopWatch := watchEnds(fl, j.Base, os.Stderr)
	line, err := bufio.NewReaderSize(in, 1<<20).ReadBytes('\n')
	stopWatch()
	if err != nil {
		return fmt.Errorf("the send times: %w", err)
	}
	var st sendTimes
	if err := json.Unmarshal(line, &st); err != nil {
		return fmt.Errorf("the send times: %w", err)
	}
	// Every timed follower reads the last step, then all read what any follower here
	// read. On a busy machine the followers may be far behind: they are waited for as
	// long as they move on (a late frame is late, not lost), and given up after 10 s
	// without progress.
	last := st.Step0 + int64(len(st.Sent))
	var moved int64
	stalled := time.Now()
	for {
		done, sum := true, int64(0)
		for i, f := range fl {
			sum += f.seen.Load()
			done = done && (!f.timed || steps[i].Load() >= last)
		}
		if sum != moved {
			moved, stalled = sum, time.Now()
		}
		if done || time.Since(stalled) > 10*time.Second {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	caughtUp(fl, 10*time.Second)
	dropped := 0
	for _, f := range fl {
		if f.ended.Load() {
			dropped++ // let go by its server (too slow: a write waited past its deadline)
		}
	}
	sweep.close()
	for _, f := range fl {
		f.close()
	}
	readers.Wait()

	r := childResult{Followers: len(fl), Dropped: dropped}
	for p := range 3 {
		r.LastMin[p] = -1
	}
	for i, f := range fl {
		p := f.proto
		r.N[p]++
		r.Frames += f.frames
		r.Gaps += f.gaps
		r.Repeats += f.repeats
		if r.LastMin[p] < 0 || f.last < r.LastMin[p] {
			r.LastMin[p] = f.last
		}
		r.LastMax[p] = max(r.LastMax[p], f.last)
		r.Socket[p] += f.wire.Load()
		r.EventsBytes[p] += f.eventsBytes
		r.EventsN[p] += f.eventsN
		r.OtherByte[p] += f.otherBytes
		r.OtherN[p] += f.otherN
		r.Bad[p] += f.bad
		if !f.timed {
			continue
		}
		r.Timed++
		lat, missing := timedLatencies(recv[i], st)
		r.Latencies = append(r.Latencies, lat...)
		r.Missing += missing
	}
	return json.NewEncoder(out).Encode(r)
}

// watchEnds says on w, once a second until the returned func is called, how many
// followers have ended since they joined and why the first did: a follower the server
// let go before the steps is not counted there, so the parent waits for a count the
// run's server never reaches, and this says why.
func watchEnds(fl []*follower, base string, w io.Writer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		said := 0
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			n, first := 0, error(nil)
			for _, f := range fl {
				if f.ended.Load() { // f.err was set before
					n++
					if first == nil {
						first = f.err
					}
				}
			}
			if n > said {
				fmt.Fprintf(w, "lectureload: %d of the %d followers on %s ended before the steps began (the first: %v)\n", n, len(fl), base, first)
				said = n
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// stepAt is when (wall clock, UnixNano) a follower read the events frame of a step.
type stepAt struct{ step, at int64 }

// timedLatencies turns one follower's reads into latencies (µs) against the send
// times, one per step sent (a step read twice counts once: the numbering counts the
// repeat), and counts the steps sent that it never read.
func timedLatencies(recv []stepAt, st sendTimes) (lat []int64, missing int) {
	got := make([]bool, len(st.Sent))
	for _, s := range recv {
		k := s.step - st.Step0 - 1
		if k < 0 || k >= int64(len(st.Sent)) || got[k] {
			continue
		}
		got[k] = true
		lat = append(lat, (s.at-st.Sent[k])/1000)
	}
	for _, g := range got {
		if !g {
			missing++
		}
	}
	return lat, missing
}

// readStamped reads every frame until the connection closes (follower.read), noting
// the step and the wall-clock read time of a timed follower's events frames.
func (f *follower) readStamped(step *atomic.Int64) []stepAt {
	var out []stepAt
	f.read(func(s, now int64) {
		out = append(out, stepAt{s, now})
		step.Store(s)
	})
	return out
}
