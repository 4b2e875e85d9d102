// Command lectureload measures lecture mode under load, on loopback only: it starts the
// playground server as a child process on 127.0.0.1, opens a run, starts a lecture,
// connects followers over real WebSockets, and has the presenter step the run at a
// fixed rate. It reports the delivery latency of every frame to every follower (from
// the presenter's step command to the follower's read), frames lost or repeated, the
// server's CPU (from /proc of the child), when the followers that stop reading were
// dropped, and the bytes per follower per step by frame type, for followers of
// protocol 1 and of the compact frames (-proto both: half each, in one run). With -play
// the presenter plays the run at a speed instead of stepping, and -asks keeps its
// processes asking for the CS. docs/benchmarks.md records runs.
//
//	go run ./cmd/lectureload -followers 500 -rate 30 -duration 30s
//	go run ./cmd/lectureload -followers 200 -slow 0 -proto both -run '/play/ricart-agrawala?n=8' -play 4 -asks 2
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web"
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
	proto     string  // 1, 2 or both (half the followers each)
	play      float64 // > 0: the presenter plays at this speed instead of stepping
	asks      float64 // requests per second the presenter makes (round robin), to keep the run busy
	max       int     // the server's --max-followers (0: its default)
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
	fs.IntVar(&c.max, "max-followers", 0, "the server's cap on followers of one lecture, and of one address's share (0: the defaults, 1000 and 40 %)")
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

// serve is the child: the real playground server on a loopback port, printed on stdout.
func serve(maxFollowers int) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// Every follower of the tool comes from 127.0.0.1: one client, whose share is then
	// the whole cap.
	srv := web.New(web.Options{Lecture: lecture.Options{MaxFollowers: maxFollowers, FollowersPerClient: maxFollowers}})
	return srv.ListenAndServe(ctx, "127.0.0.1:0", func(addr string) { fmt.Println(addr) })
}

// child starts the server process and returns its address.
func child(maxFollowers int) (*exec.Cmd, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(exe, "-serve", "-max-followers", strconv.Itoa(maxFollowers))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, "", fmt.Errorf("the server did not start: %w", err)
	}
	return cmd, strings.TrimSpace(line), nil
}

// cpuTicks is the child's user+system CPU time, in clock ticks, from /proc.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces: the fields start after its closing parenthesis.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("cannot read /proc stat")
	}
	return utime + stime, nil
}

// clockTicks is USER_HZ: 100 on every Linux this runs on.
const clockTicks = 100

func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "?"
}

var sessionRE = regexp.MustCompile(`data-session="([^"]+)"`)

// head is what a follower reads of each frame (docs/protocol.md): its type and, for an
// events frame, the step it leads to. Decoding only these fields keeps the tool's own
// work small beside the server's; the stamp (lseq) is read by protocol.StampOf.
type head struct {
	Type string `json:"type"`
	Step int64  `json:"step"`
}

type follower struct {
	proto       int
	x           *protocol.Expander // of a compact follower
	wire        atomic.Int64
	seen        atomic.Int64 // f.last, for the end of the run
	timed       bool         // reads every frame whole: its latencies count
	eventsBytes int64
	eventsN     int
	otherBytes  int64
	otherN      int
	bad         int
	conn        *websocket.Conn
	latencies   []time.Duration
	frames      int
	gaps        int
	repeats     int
	last        int64
	first       int64 // the number of the catch-up frames, which all carry it
	step0       int64
	err         error
}

func dial(base, path string, readBuffer int, count *atomic.Int64) (*websocket.Conn, error) {
	d := *websocket.DefaultDialer
	d.HandshakeTimeout = 30 * time.Second
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil && readBuffer > 0 {
			_ = c.(*net.TCPConn).SetReadBuffer(readBuffer)
		}
		if err == nil && count != nil {
			return countingConn{Conn: c, n: count}, nil
		}
		return c, err
	}
	conn, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+path, http.Header{"Origin": {base}})
	return conn, err
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
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(base + c.path)
	if err != nil {
		return err
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := sessionRE.FindSubmatch(page)
	if m == nil {
		return fmt.Errorf("GET %s: no session in the page (%s)", c.path, resp.Status)
	}
	resp, err = hc.PostForm(base+"/lecture", url.Values{"session": {string(m[1])}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	token := strings.TrimPrefix(resp.Header.Get("Location"), "/lecture/present/")
	pres, err := dial(base, "/ws/present/"+token, 0, nil)
	if err != nil {
		return err
	}
	defer pres.Close()
	var code string
	var steps atomic.Int64 // the presenter's latest step
	followersNow := make(chan int, 1024)
	codeC := make(chan string, 1)
	go func() {
		for {
			_, b, err := pres.ReadMessage()
			if err != nil {
				return
			}
			fr, err := protocol.Decode(b)
			if err != nil {
				continue // a frame of a newer protocol: not this tool's concern
			}
			switch f := fr.(type) {
			case *protocol.PresenterLecture:
				select {
				case codeC <- f.Code:
				default:
				}
				followersNow <- f.Followers
			case *protocol.Events:
				steps.Store(int64(f.Step))
			}
		}
	}()
	select {
	case code = <-codeC:
	case <-time.After(10 * time.Second):
		return errors.New("the presenter got no lecture frame")
	}

	// Followers join; sent[k] is when the command that makes step k left.
	total := int(c.rate*c.duration.Seconds()) + 1
	sent := make([]atomic.Int64, total+2)
	fl := make([]*follower, c.followers)
	var wg sync.WaitGroup
	var joinErr atomic.Value
	sem := make(chan struct{}, 32)
	for i := range fl {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
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
			conn, err := dial(base, fmt.Sprintf("/ws/lecture/%s?proto=%d", code, f.proto), 0, &f.wire)
			if err != nil {
				joinErr.Store(err)
				return
			}
			f.conn = conn
			fl[i] = f
		}()
	}
	wg.Wait()
	if err, ok := joinErr.Load().(error); ok {
		return fmt.Errorf("a follower could not join: %w", err)
	}
	var slow []*websocket.Conn
	for range c.slow {
		// A small receive buffer, and nobody reading: the server's socket fills fast.
		conn, err := dial(base, "/ws/lecture/"+code, 4096, nil)
		if err != nil {
			return err
		}
		slow = append(slow, conn)
	}
	want := c.followers + c.slow
	deadline := time.After(30 * time.Second)
	for n := 0; n != want; {
		select {
		case n = <-followersNow:
		case <-deadline:
			return fmt.Errorf("only %d of %d followers joined", n, want)
		}
	}
	step0 := steps.Load()
	for _, f := range fl {
		f.step0 = step0
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.read(sent)
		}()
	}

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
	cpu0, err := cpuTicks(pid)
	if err != nil {
		return err
	}
	own0, _ := cpuTicks(os.Getpid())
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	var asks <-chan time.Time
	if c.asks > 0 {
		speed := max(c.play, 1)
		at := time.NewTicker(time.Duration(float64(time.Second) / (c.asks * speed)))
		defer at.Stop()
		asks = at.C
	}
	send := func(frame string) error {
		_ = pres.SetWriteDeadline(time.Now().Add(5 * time.Second))
		return pres.WriteMessage(websocket.TextMessage, []byte(frame))
	}
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
		case n := <-followersNow:
			if n == c.followers && dropAt == 0 && c.slow > 0 {
				dropAt = time.Since(start)
			}
		}
	}
	tick.Stop()
	wall := time.Since(start)
	cpu1, _ := cpuTicks(pid)
	own1, _ := cpuTicks(os.Getpid())
	// Let the last frames arrive, then close the readers.
	time.Sleep(500 * time.Millisecond)
	caughtUp(fl, 30*time.Second)
	for len(followersNow) > 0 {
		if x := <-followersNow; x == c.followers && dropAt == 0 && c.slow > 0 {
			dropAt = time.Since(start)
		}
	}
	for _, f := range fl {
		_ = f.conn.Close()
	}
	wg.Wait()
	rss := peakRSS(pid)

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

	var all []time.Duration
	frames, gaps, repeats, timed := 0, 0, 0, 0
	for _, f := range fl {
		if f.timed {
			timed++
		}
		all = append(all, f.latencies...)
		frames += f.frames
		gaps += f.gaps
		repeats += f.repeats
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	cores := float64(cpu1-cpu0) / clockTicks / wall.Seconds()
	if c.play == 0 {
		fmt.Fprintf(out, "steps sent: %d (steps %d to %d) in %.2fs\n", total, step0+1, step0+int64(total), wall.Seconds())
		fmt.Fprintf(out, "frames delivered: %d of %d expected (%d timed followers x %d), gaps %d, repeats %d (every follower)\n",
			len(all), timed*total, timed, total, gaps, repeats)
		fmt.Fprintf(out, "delivery latency (step command sent -> follower read): p50 %s  p90 %s  p99 %s  max %s\n",
			ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(pct(1)))
	} else {
		frames := 0
		for _, f := range fl {
			frames += f.frames
		}
		fmt.Fprintf(out, "frames read: %d by %d followers, gaps %d, repeats %d\n", frames, c.followers, gaps, repeats)
	}
	fmt.Fprintf(out, "server CPU: %.3f cores (%.2fs of CPU over %.2fs), peak RSS %s; this tool's own CPU: %.3f cores (its followers' reading)\n",
		cores, float64(cpu1-cpu0)/clockTicks, wall.Seconds(), rss, float64(own1-own0)/clockTicks/wall.Seconds())
	// The server's follower count says when it let the slow ones go; what the slow
	// client itself sees depends on its socket (a tiny window may hide the close).
	for i, n := range slowFrames {
		fmt.Fprintf(out, "slow follower %d: read %d frames of %d at the end; ", i, n, total)
		if dropAt > 0 {
			fmt.Fprintf(out, "the server dropped it %.1fs into the run (follower count fell to %d)", dropAt.Seconds(), c.followers)
		} else {
			fmt.Fprint(out, "the server still counted it")
		}
		if slowCut[i] {
			fmt.Fprint(out, "; its connection is closed")
		}
		fmt.Fprintln(out)
	}
	wire := map[int]*wireStats{1: {}, 2: {}}
	for _, f := range fl {
		wire[f.proto].add(f)
	}
	reportWire(out, wire, steps.Load()-step0)
	if c.play > 0 {
		fmt.Fprintf(out, "played at %gx: %d steps; no loss, no repeat: %s; CPU <= 1 core: %s\n", c.play, steps.Load()-step0,
			verdict(gaps == 0 && repeats == 0), verdict(cores <= 1))
		return nil
	}
	fmt.Fprintf(out, "p99 <= 50ms: %s; CPU <= 1 core: %s; no loss, no repeat: %s; slow follower dropped: %s\n",
		verdict(pct(0.99) <= 50*time.Millisecond), verdict(cores <= 1), verdict(gaps == 0 && repeats == 0 && len(all) == timed*total),
		verdict(c.slow == 0 || dropAt > 0))
	return nil
}

// wsHeader is the size of a server frame's WebSocket header for a payload of n bytes.
func wsHeader(n int) int {
	switch {
	case n < 126:
		return 2
	case n < 1<<16:
		return 4
	}
	return 10
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

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }

// read takes every frame until the connection closes, checking the numbering and
// timing the events frames against the command that made their step.
func (f *follower) read(sent []atomic.Int64) {
	var buf bytes.Buffer // reused: the tool's own garbage would show up as latency
	for {
		_, r, err := f.conn.NextReader()
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		now := time.Now().UnixNano()
		if err != nil {
			f.err = err
			return
		}
		raw := buf.Bytes()
		b, ok := f.protocol1(raw)
		if !ok {
			continue
		}
		stamp, ok := protocol.StampOf(b)
		if !ok {
			continue
		}
		seq := int64(stamp)
		if f.last == 0 || seq == f.first && f.last == f.first {
			// The catch-up on joining is not a step's: leave it out of the bytes.
			f.wire.Add(-int64(len(raw) + wsHeader(len(raw))))
		} else {
			f.tally(raw, b)
		}
		f.frames++
		switch {
		case f.last == 0:
			f.first = seq
		case seq == f.last+1, seq == f.first && f.last == f.first:
			// the next frame, or one more of the catch-up
		case seq <= f.last:
			f.repeats++
		default:
			f.gaps++
		}
		f.last = max(f.last, seq)
		f.seen.Store(f.last)
		var h head
		if json.Unmarshal(b, &h) != nil || h.Type != "events" {
			continue
		}
		if step := h.Step; step-f.step0 > 0 && step-f.step0 < int64(len(sent)) {
			if t := sent[step-f.step0].Load(); t > 0 {
				f.latencies = append(f.latencies, time.Duration(now-t))
			}
		}
	}
}
