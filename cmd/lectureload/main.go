// Command lectureload measures lecture mode under load, on loopback only: it starts the
// playground server as a child process on 127.0.0.1, opens a run, starts a lecture,
// connects followers over real WebSockets, and has the presenter step the run at a
// fixed rate. It reports the delivery latency of every frame to every follower (from
// the presenter's step command to the follower's read), frames lost or repeated, the
// server's CPU and memory (from /proc of the child) beside the tool's own CPU and the
// machine's load, when the followers that stop reading were dropped, and the bytes per
// follower per step by frame type, for followers of protocol 1 and of the compact
// frames (-proto both: half each, in one run). With -play the presenter plays the run
// at a speed instead of stepping, and -asks keeps its processes asking for the CS.
// -want-p99 and -want-cores set the verdict's targets. docs/benchmarks.md records runs.
// Files: server.go (the child), follower.go (one follower's reading), rawfollower.go
// (the untimed followers, read outside the network poller once per -pace), bytes.go
// (the bytes on the wire), report.go (the figures and the verdict), cluster.go and
// clusterchild.go (-cluster).
//
//	go run ./cmd/lectureload -followers 500 -rate 30 -duration 30s
//	go run ./cmd/lectureload -followers 200 -slow 0 -proto both -run '/play/ricart-agrawala?n=8' -play 4 -asks 2
//	go run ./cmd/lectureload -followers 5000 -slow 0 -proto 2 -rate 10 -want-p99 100ms -want-cores 1.5
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/runtime/protocol"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "lectureload:", err)
		os.Exit(1)
	}
}

type config struct {
	followers int
	slow      int
	rate      float64
	duration  time.Duration
	path      string
	serve     bool
	proto     string        // 1, 2 or both (half the followers each)
	play      float64       // > 0: the presenter plays at this speed instead of stepping
	asks      float64       // requests per second the presenter makes (round robin), to keep the run busy
	max       int           // the server's --max-followers (0: its default)
	pace      time.Duration // an untimed follower's least time between two reads
	wantP99   time.Duration
	wantCores float64
}

func run(args []string, out io.Writer) error {
	var c config
	fs := flag.NewFlagSet("lectureload", flag.ContinueOnError)
	fs.IntVar(&c.followers, "followers", 500, "followers that read every frame")
	fs.IntVar(&c.slow, "slow", 1, "followers that stop reading after they join")
	fs.Float64Var(&c.rate, "rate", 30, "steps (events frames) per second")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "how long the presenter steps")
	fs.StringVar(&c.path, "run", "/play/token-ring?n=8", "the run the lecture shows (token ring never goes quiet)")
	fs.BoolVar(&c.serve, "serve", false, "internal: be the server (the child process)")
	fs.StringVar(&c.proto, "proto", "1", "the followers' frames: 1 (JSON objects), 2 (compact) or both (half each, compared in one run)")
	fs.Float64Var(&c.play, "play", 0, "play the run at this speed (0.25 to 16) for the duration instead of stepping at -rate")
	fs.Float64Var(&c.asks, "asks", 0, "requests for the CS per second of virtual play, made by the presenter round robin (0: none)")
	fs.IntVar(&c.max, "max-followers", 0, "the server's cap on followers of one lecture, and of one address's share (0: the server's default cap)")
	fs.DurationVar(&c.wantP99, "want-p99", 50*time.Millisecond, "the target for the p99 delivery latency (the lecture target: 100ms for 5,000 followers)")
	fs.Float64Var(&c.wantCores, "want-cores", 1, "the target for the server's CPU, in cores (the lecture target: 1.5 for 5,000 followers)")
	fs.DurationVar(&c.pace, "pace", time.Second, "an untimed follower's socket is read once per pace, outside Go's network poller, taking the frames that came meanwhile together (0: at once through gorilla, as a timed one's)")
	cc := clusterFlags(fs) // cluster.go
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cc.active() {
		return cc.run(c, out)
	}
	if c.serve {
		return serve(c.max)
	}
	return load(c, out)
}

func load(c config, out io.Writer) error {
	cmd, addr, err := child(c.max)
	if err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	base := "http://" + addr
	pid := cmd.Process.Pid

	// The presenter: a run, a lecture on it, the presenter's socket.
	pres, err := present(base, c.path)
	if err != nil {
		return err
	}
	defer pres.conn.Close()
	code := pres.code

	// Followers join; sent[k] is when the command that makes step k left.
	total := int(c.rate*c.duration.Seconds()) + 1
	sent := make([]atomic.Int64, total+2)
	fl, err := joinAll(c.followers, func(i int) (*follower, error) {
		f := &follower{proto: 1, timed: true}
		if c.proto == "2" || c.proto == "both" && i%2 == 1 {
			// Expanding every frame for thousands of followers would make the tool,
			// not the server, the bottleneck: a sample of them expands (and is
			// timed), the others check the numbering and count the bytes.
			f.proto, f.timed = 2, i%sampleEvery(c.followers) < 2
			if f.timed {
				f.x = protocol.NewExpander()
			}
		}
		return f, f.join(base, fmt.Sprintf("/ws/lecture/%s?proto=%d", code, f.proto), c.pace)
	})
	if err != nil {
		return fmt.Errorf("a follower could not join: %w", err)
	}
	var wg sync.WaitGroup
	var slow []*websocket.Conn
	for range c.slow {
		// A small receive buffer, and nobody reading: the server's socket fills fast.
		conn, err := browser.At(base, "127.0.0.1").DialStalled("/ws/lecture/"+code, 4096)
		if err != nil {
			return err
		}
		slow = append(slow, conn)
	}
	want := c.followers + c.slow
	if err := pres.awaitFollowers(want, time.After(30*time.Second+time.Duration(want)*5*time.Millisecond)); err != nil { // 55 s for 5,000
		return err
	}
	step0 := pres.step.Load()
	for _, f := range fl {
		f.step0 = step0
		if f.conn == nil {
			continue // read by the sweeper
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.readTimed(sent)
		}()
	}
	sweep := startSweeper(fl, c.pace)

	// The presenter steps at the rate; the server's CPU is read around it.
	pace := fmt.Sprintf("%.0f steps/s", c.rate)
	if c.play > 0 {
		pace = fmt.Sprintf("playing at %gx", c.play)
	}
	if c.asks > 0 {
		pace += fmt.Sprintf(", %g requests per second of play", c.asks)
	}
	fmt.Fprintf(out, "server %s (pid %d), lecture %s, %d followers (protocol %s) + %d that stop reading, %s for %s\n",
		addr, pid, code, c.followers, c.proto, c.slow, pace, c.duration)
	cpu0, err := procfs.CPUTicks(pid)
	if err != nil {
		return err
	}
	own0, _ := procfs.CPUTicks(os.Getpid())
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	var asks <-chan time.Time
	if c.asks > 0 {
		speed := max(c.play, 1)
		at := time.NewTicker(time.Duration(float64(time.Second) / (c.asks * speed)))
		defer at.Stop()
		asks = at.C
	}
	send := pres.send
	if c.play > 0 {
		tick.Stop() // the run plays by itself
		if err := send(fmt.Sprintf(`{"type":"speed","speed":%g}`, c.play)); err != nil {
			return err
		}
		if err := send(`{"type":"play"}`); err != nil {
			return err
		}
	}
	var dropAt time.Duration
	k, asked := 0, 0
	end := time.After(c.duration)
	for k < total {
		select {
		case <-tick.C:
			k++
			sent[k].Store(time.Now().UnixNano())
			if err := send(`{"type":"step"}`); err != nil {
				return err
			}
		case <-asks:
			// Refused while the process already asks: the error goes to the presenter.
			if err := send(fmt.Sprintf(`{"type":"act","do":"request","node":%d}`, asked%nodes(c.path))); err != nil {
				return err
			}
			asked++
		case <-end:
			if c.play > 0 {
				k = total
				if err := send(`{"type":"pause"}`); err != nil {
					return err
				}
			}
		case <-pres.reported:
			if pres.followers.Load() == int64(c.followers) && dropAt == 0 && c.slow > 0 {
				dropAt = time.Since(start)
			}
		}
	}
	tick.Stop()
	wall := time.Since(start)
	cpu1, _ := procfs.CPUTicks(pid)
	own1, _ := procfs.CPUTicks(os.Getpid())
	// The server's memory with every follower attached, and the machine's load (it is
	// shared: the latencies depend on it).
	rss, load := procfs.Status(pid, "VmRSS"), procfs.LoadAverage()
	// Let the last frames arrive, then close the readers.
	time.Sleep(500 * time.Millisecond)
	caughtUp(fl, 30*time.Second)
	if pres.followers.Load() == int64(c.followers) && dropAt == 0 && c.slow > 0 {
		dropAt = time.Since(start)
	}
	sweep.close()
	for _, f := range fl {
		f.close()
	}
	wg.Wait()

	// What the slow followers got before the server let them go.
	slowFrames := make([]int, len(slow))
	slowCut := make([]bool, len(slow))
	for i, conn := range slow {
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				var ne net.Error
				slowCut[i] = !errors.As(err, &ne) || !ne.Timeout()
				break
			}
			if _, ok := protocol.StampOf(b); ok {
				slowFrames[i]++
			}
		}
		_ = conn.Close()
	}

	res := result{total: total, step0: step0, steps: pres.step.Load() - step0, wall: wall,
		serverCPU: float64(cpu1-cpu0) / procfs.ClockTicks, ownCPU: float64(own1-own0) / procfs.ClockTicks,
		rss: rss, peakRSS: procfs.Status(pid, "VmHWM"), load: load, fl: fl,
		slowFrames: slowFrames, slowCut: slowCut, dropAt: dropAt}
	res.print(out, c)
	return nil
}

// joinAll joins n followers, 32 at a time; join builds follower i and joins it. It
// returns the followers that joined (nil for one that did not) and the last error.
func joinAll(n int, join func(i int) (*follower, error)) ([]*follower, error) {
	fl := make([]*follower, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var last error
	sem := make(chan struct{}, 32)
	for i := range fl {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f, err := join(i)
			if err != nil {
				mu.Lock()
				last = err
				mu.Unlock()
				return
			}
			fl[i] = f
		}()
	}
	wg.Wait()
	return fl, last
}

// nodes is the n= of the run's path (the processes the presenter asks round robin).
func nodes(path string) int {
	u, err := url.Parse(path)
	if err == nil {
		if n, err := strconv.Atoi(u.Query().Get("n")); err == nil && n > 0 {
			return n
		}
	}
	return 5
}
