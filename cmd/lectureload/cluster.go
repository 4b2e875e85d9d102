package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/teach-dist/playground/cmd/internal/natsserver"
	"github.com/teach-dist/playground/cmd/internal/procfs"
)

// Cluster mode (-cluster N): a real nats-server on a loopback port and N server child
// processes joined through it (the NATS broker, as `playground serve --broker nats`), the
// lecture's run on the first, its followers spread evenly over all N. One process cannot
// hold 20,000 client sockets (the fd limit is 20,000 and the servers need theirs), so
// the followers live in load child processes (-loaders, one per server by default); the
// parent is the presenter and adds up what the children measured. The follower that
// stops reading (-slow) is the one-server mode's check; cluster mode leaves it out.
//
// Latency across processes needs one clock: each process's monotonic clock is its own,
// so the parent records the wall clock (CLOCK_REALTIME, time.Now().UnixNano()) as it
// sends each step command, and a load child records the wall clock as a follower reads
// the step's events frame. All processes run on one machine and read the same system
// clock, so the difference is the delivery time; a clock step during the run (an NTP
// jump) would distort it, a slew of a few parts per million does not matter at 250 ms.
// The children keep (step, read time) pairs and turn them into latencies once the
// parent hands them the send times after the run.
//
//	go run ./cmd/lectureload -cluster 4 -followers 20000 -rate 5 -proto 2 -duration 30s

// clusterConfig is cluster mode's flags; role and job are the children's.
type clusterConfig struct {
	servers int
	loaders int
	nats    string // nats-server's binary (parent), or URL (server child)
	role    string // "server" or "load": an internal child
	job     string // a load child's job, JSON
}

// clusterFlags adds cluster mode's flags to fs.
func clusterFlags(fs *flag.FlagSet) *clusterConfig {
	cc := &clusterConfig{}
	fs.IntVar(&cc.servers, "cluster", 0, "servers of a NATS cluster on loopback (0: one server, no NATS); the presenter is on the first, followers spread over all")
	fs.IntVar(&cc.loaders, "loaders", 0, "with -cluster: load child processes holding the followers (0: one per server)")
	fs.StringVar(&cc.nats, "nats", "", "with -cluster: the nats-server binary (default: nats-server on PATH, /usr/sbin, /usr/bin)")
	fs.StringVar(&cc.role, "cluster-role", "", "internal: be a child of cluster mode (server or load)")
	fs.StringVar(&cc.job, "job", "", "internal: a load child's job")
	return cc
}

// active reports whether cluster mode (or one of its children) was asked for.
func (cc *clusterConfig) active() bool { return cc.servers > 0 || cc.role != "" }

func (cc *clusterConfig) run(c config, out io.Writer) error {
	switch cc.role {
	case "server":
		return clusterServe(cc.nats, c.max)
	case "load":
		return loadChild(cc.job, os.Stdin, os.Stdout)
	case "":
	default:
		return fmt.Errorf("-cluster-role: %q is not server or load", cc.role)
	}
	if c.play > 0 || c.asks > 0 {
		return errors.New("-cluster steps at -rate: -play and -asks are for one server")
	}
	if c.max == 0 {
		// The cap is the lecture's, counted on the run's server over the whole cluster;
		// the per-client share is each server's, and every follower here is 127.0.0.1.
		c.max = c.followers + 16
	}
	return clusterLoad(c, cc, out)
}

// proc is a child process and its CPU time (clock ticks) at the first step, the last
// step, and when every follower has read the last step.
type proc struct {
	name             string
	cmd              *exec.Cmd
	cpu0, cpu1, cpu2 int64
	in               io.WriteCloser
	out              *bufio.Reader
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	_ = p.cmd.Wait()
}

// childEnv marks the environment of a child of cluster mode: a test binary (which
// runs the tool in-process) knows from it that it is to be the child.
const childEnv = "LECTURELOAD_CHILD"

// startChild runs this program with args and reads its first line of output.
func startChild(name string, args ...string) (*proc, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	p := &proc{name: name, cmd: cmd, in: in, out: bufio.NewReaderSize(stdout, 1<<16)}
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.stop()
		return nil, "", fmt.Errorf("%s did not start: %w", name, err)
	}
	return p, strings.TrimSpace(line), nil
}

// clusterLoad is the parent: NATS, the servers, the presenter, the load children; it
// steps the run and reports what they all measured.
func clusterLoad(c config, cc *clusterConfig, out io.Writer) error {
	if c.proto != "1" && c.proto != "2" && c.proto != "both" {
		return fmt.Errorf("-proto: %q is not 1, 2 or both", c.proto)
	}
	loaders := cc.loaders
	if loaders <= 0 {
		loaders = cc.servers
	}
	nats, err := natsserver.Start(cc.nats)
	if err != nil {
		return err
	}
	ns, natsURL := &proc{name: "nats-server", cmd: nats.Cmd}, nats.URL
	defer ns.stop() // last: the servers close their brokers first
	servers := make([]*proc, cc.servers)
	bases := make([]string, cc.servers)
	defer func() {
		for _, s := range servers {
			if s != nil {
				s.stop()
			}
		}
	}()
	for i := range servers {
		p, addr, err := startChild(fmt.Sprintf("server %d", i+1), "-cluster-role", "server", "-nats", natsURL, "-max-followers", strconv.Itoa(c.max))
		if err != nil {
			return err
		}
		servers[i], bases[i] = p, "http://"+addr
	}
	pres, err := present(bases[0], c.path)
	if err != nil {
		return err
	}
	defer pres.conn.Close()
	code := pres.code

	// Load children, loader i on server i mod N, the followers shared out evenly.
	loads := make([]*proc, loaders)
	defer func() {
		for _, l := range loads {
			if l != nil {
				l.stop()
			}
		}
	}()
	errc := make(chan error, loaders)
	for i := range loads {
		n := c.followers / loaders
		if i < c.followers%loaders {
			n++
		}
		spec, _ := json.Marshal(job{Base: bases[i%cc.servers], Code: code, Followers: n, Proto: c.proto, Pace: c.pace})
		go func() {
			p, line, err := startChild(fmt.Sprintf("load %d", i+1), "-cluster-role", "load", "-job", string(spec))
			if err == nil && line != "joined" {
				p.stop()
				err = fmt.Errorf("load %d: %s", i+1, line)
			}
			loads[i] = p
			errc <- err
		}()
	}
	// Every start is waited for, so that the deferred stop sees every child.
	var startErr error
	for range loads {
		if err := <-errc; err != nil && startErr == nil {
			startErr = err
		}
	}
	if startErr != nil {
		return startErr
	}
	// The run's server counts every server's followers (each reports every second).
	if err := pres.awaitFollowers(c.followers, time.After(60*time.Second)); err != nil {
		return err
	}
	step0 := pres.step.Load()
	load0 := procfs.LoadAverage()
	fmt.Fprintf(out, "NATS %s; %d servers %v (run on the first); lecture %s; %d followers (protocol %s) over %d load processes; %.0f steps/s for %s; load average %s\n",
		natsURL, cc.servers, bases, code, c.followers, c.proto, loaders, c.rate, c.duration, load0)

	all := append(append([]*proc{ns}, servers...), loads...)
	for _, p := range all {
		if p.cpu0, err = procfs.CPUTicks(p.cmd.Process.Pid); err != nil {
			return err
		}
	}
	own0, _ := procfs.CPUTicks(os.Getpid())
	total := int(c.rate*c.duration.Seconds()) + 1
	sent := make([]int64, total)
	start := time.Now()
	tick := time.NewTicker(time.Duration(float64(time.Second) / c.rate))
	for k := range total {
		<-tick.C
		sent[k] = time.Now().UnixNano() // the wall clock: see the top of this file
		if err := pres.send(`{"type":"step"}`); err != nil {
			return err
		}
	}
	tick.Stop()
	wall := time.Since(start)
	for _, p := range all {
		p.cpu1, _ = procfs.CPUTicks(p.cmd.Process.Pid)
	}
	own1, _ := procfs.CPUTicks(os.Getpid())
	load1 := procfs.LoadAverage()

	// The children take the send times, wait for their last frames and report.
	times, _ := json.Marshal(sendTimes{Step0: step0, Sent: sent})
	results := make([]childResult, loaders)
	for i, l := range loads {
		go func() {
			_, err := l.in.Write(append(times, '\n'))
			if err == nil {
				var line []byte
				if line, err = l.out.ReadBytes('\n'); err == nil {
					err = json.Unmarshal(line, &results[i])
				}
			}
			errc <- err
		}()
	}
	var resErr error
	for range loads {
		if err := <-errc; err != nil && resErr == nil {
			resErr = fmt.Errorf("a load process's result: %w", err)
		}
	}
	if resErr != nil {
		return resErr
	}
	// Work that fell behind the steps (the servers' writes, the followers' reads) is
	// done by now: the CPU until here counts it. A child that has exited is not
	// reaped yet, so its /proc entry still holds its time.
	drained := time.Since(start)
	for _, p := range all {
		p.cpu2, _ = procfs.CPUTicks(p.cmd.Process.Pid)
	}
	own2, _ := procfs.CPUTicks(os.Getpid())
	return clusterReport(out, clusterRun{c: c, servers: servers, ns: ns, loads: loads, own: [3]int64{own0, own1, own2},
		wall: wall, drained: drained, total: total, step0: step0, load: load0 + " -> " + load1, results: results})
}

type clusterRun struct {
	c       config
	ns      *proc
	servers []*proc
	loads   []*proc
	own     [3]int64      // the presenter's (this process's) CPU ticks, as proc's
	wall    time.Duration // the steps
	drained time.Duration // from the first step until every load process reported
	total   int
	step0   int64
	load    string
	results []childResult
}

// clusterSummary is the load children's results added up.
type clusterSummary struct {
	sum              childResult // the counts, added up
	lat              []int64     // every timed follower's latencies (µs), sorted
	lastMin, lastMax [3]int64    // by protocol: the last frame read, lowest and highest
	wire             map[int]*wireStats
	sameEnd          bool // every follower of a protocol read up to the same last frame
}

func summarize(results []childResult) clusterSummary {
	s := clusterSummary{lastMin: [3]int64{-1, -1, -1}, wire: map[int]*wireStats{1: {}, 2: {}}}
	for _, x := range results {
		s.lat = append(s.lat, x.Latencies...)
		s.sum.Followers += x.Followers
		s.sum.Timed += x.Timed
		s.sum.Frames += x.Frames
		s.sum.Gaps += x.Gaps
		s.sum.Repeats += x.Repeats
		s.sum.Missing += x.Missing
		s.sum.Dropped += x.Dropped
		for p := 1; p <= 2; p++ {
			if x.N[p] == 0 {
				continue
			}
			if s.lastMin[p] < 0 || x.LastMin[p] < s.lastMin[p] {
				s.lastMin[p] = x.LastMin[p]
			}
			s.lastMax[p] = max(s.lastMax[p], x.LastMax[p])
			w := s.wire[p]
			w.followers += x.N[p]
			w.socket += x.Socket[p]
			w.eventsBytes += x.EventsBytes[p]
			w.eventsN += x.EventsN[p]
			w.otherBytes += x.OtherByte[p]
			w.otherN += x.OtherN[p]
			w.bad += x.Bad[p]
		}
	}
	slices.Sort(s.lat)
	// A follower that lost the last frames has no gap to show: it read to a lower
	// number than the others of its protocol, in its process or another.
	s.sameEnd = true
	for p := 1; p <= 2; p++ {
		s.sameEnd = s.sameEnd && (s.wire[p].followers == 0 || s.lastMin[p] == s.lastMax[p])
	}
	return s
}

// noLoss: no gap, no repeat, no step a timed follower missed, no follower let go,
// nobody short of the end.
func (s clusterSummary) noLoss() bool {
	return s.sum.Gaps == 0 && s.sum.Repeats == 0 && s.sum.Missing == 0 && s.sum.Dropped == 0 && s.sameEnd
}

// pct is the p-th quantile of the latencies.
func (s clusterSummary) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return time.Duration(s.lat[min(len(s.lat)-1, int(p*float64(len(s.lat))))]) * time.Microsecond
}

func clusterReport(out io.Writer, r clusterRun) error {
	s := summarize(r.results)
	sum, lat, wire, pct := s.sum, s.lat, s.wire, s.pct
	lastMin, lastMax, sameEnd := s.lastMin, s.lastMax, s.sameEnd
	fmt.Fprintf(out, "steps sent: %d (steps %d to %d) in %.2fs\n", r.total, r.step0+1, r.step0+int64(r.total), r.wall.Seconds())
	fmt.Fprintf(out, "frames read: %d by %d followers; gaps %d, repeats %d; every follower read to the same last frame: %v",
		sum.Frames, sum.Followers, sum.Gaps, sum.Repeats, sameEnd)
	for p := 1; p <= 2; p++ {
		if wire[p].followers > 0 {
			fmt.Fprintf(out, " (protocol %d: %d..%d)", p, lastMin[p], lastMax[p])
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "followers their server let go during the run (too slow to take their frames): %d\n", sum.Dropped)
	fmt.Fprintf(out, "timed followers: %d; steps they read: %d of %d (missing %d)\n", sum.Timed, len(lat), sum.Timed*r.total, sum.Missing)
	fmt.Fprintf(out, "delivery latency (step command sent -> follower read, wall clock across processes): p50 %s  p90 %s  p99 %s  max %s\n",
		ms(pct(0.50)), ms(pct(0.90)), ms(pct(0.99)), ms(pct(1)))
	fmt.Fprintf(out, "CPU: cores during the %.2fs of steps; CPU seconds until every follower read the last step (%.2fs after the first); load average %s:\n",
		r.wall.Seconds(), r.drained.Seconds(), r.load)
	line := func(name string, t [3]int64, rss string) {
		fmt.Fprintf(out, "  %-22s %.3f cores; %.2f s", name+":", float64(t[1]-t[0])/procfs.ClockTicks/r.wall.Seconds(), float64(t[2]-t[0])/procfs.ClockTicks)
		if rss != "" {
			fmt.Fprintf(out, "; peak RSS %s", rss)
		}
		fmt.Fprintln(out)
	}
	ticks := func(p *proc) [3]int64 { return [3]int64{p.cpu0, p.cpu1, p.cpu2} }
	add := func(a, b [3]int64) [3]int64 { return [3]int64{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
	line("nats-server", ticks(r.ns), procfs.Status(r.ns.cmd.Process.Pid, "VmHWM"))
	var srv, tools [3]int64
	for _, s := range r.servers {
		srv = add(srv, ticks(s))
		line(s.name, ticks(s), procfs.Status(s.cmd.Process.Pid, "VmHWM"))
	}
	line("servers together", srv, "")
	tools = r.own
	for _, l := range r.loads {
		tools = add(tools, ticks(l))
	}
	line(fmt.Sprintf("load tools (%d + presenter)", len(r.loads)), tools, "")
	reportWire(out, wire, int64(r.total))
	fmt.Fprintf(out, "no loss, no repeat: %s; p99 <= 250ms: %s\n", verdict(s.noLoss()), verdict(pct(0.99) <= 250*time.Millisecond))
	return nil
}
