package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/web"
)

// The attacks on pages, runs and the server's connections.

// sessionsAttack: one address loads N pages (each a new run), with a socket on each
// unless -sockets=false, on a server capped at -max sessions; then a second address
// asks for a page, a socket and a snapshot: one address must not fill the session cap.
func sessionsAttack(fs *flag.FlagSet, opts *web.Options) func(context.Context, *local) error {
	loads := fs.Int("loads", 205, "page loads from the attacking address")
	fs.IntVar(&opts.MaxSessions, "max", 200, "the server's --max-sessions")
	sockets := fs.Bool("sockets", true, "open (and keep) a socket on each attacking page")
	return func(ctx context.Context, t *local) error {
		attacker := t.client("127.0.0.1")
		codes := map[int]int{}
		var conns []*websocket.Conn
		defer closeAll(&conns)
		start := time.Now()
		for range *loads {
			attacker.Fresh()
			code, id, err := attacker.Page("/play/ricart-agrawala?n=3")
			if err != nil {
				return err
			}
			codes[code]++
			if *sockets && code == http.StatusOK {
				if c, err := attacker.Socket("/ws/" + id); err == nil {
					conns = append(conns, c)
				}
			}
		}
		fmt.Printf("attacker 127.0.0.1: %d page loads in %v: status %v, %d sockets open\n", *loads, time.Since(start).Round(time.Millisecond), codes, len(conns))
		took, err := visit(t.base, "127.0.0.2")
		if err != nil {
			return fmt.Errorf("second address 127.0.0.2: the server stayed full: %w", err)
		}
		fmt.Printf("second address 127.0.0.2: page 200, socket and snapshot in %v\n", took.Round(time.Millisecond))
		return nil
	}
}

// ipv6Attack: one IPv6 subscriber (one /64) loads N playground pages, each from another
// address of its /64 and with no cookie (each a new run), behind the target's trusted
// proxy; then an address of another /64 loads one (rate limits keyed by the exact
// address would give one /64 2^64 buckets).
func ipv6Attack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	n := fs.Int("n", 400, "page loads, each from its own address of one /64")
	return func(ctx context.Context, t *local) error {
		counts := map[int]int{}
		start := time.Now()
		for k := range *n {
			status, _, err := t.client(fmt.Sprintf("2001:db8:1:2:%x:%x::1", k/65536, k%65536)).Page("/play/bully?n=3")
			if err != nil {
				return err
			}
			counts[status]++
		}
		fmt.Printf("ipv6: %d page loads from %d addresses of 2001:db8:1:2::/64 in %v: %v (sessions of the whole server: %d)\n",
			*n, *n, time.Since(start).Round(time.Millisecond), counts, t.srv.Sessions().Len())
		status, _, err := t.client("2001:db8:1:3::1").Page("/play/bully?n=3")
		if err != nil {
			return err
		}
		fmt.Printf("ipv6: an address of another /64 (2001:db8:1:3::1): %d\n", status)
		return nil
	}
}

// cpuAttack: one address (127.0.0.1) plays -sessions heavy runs (the Go
// Ricart-Agrawala with -n processes at 16x, half of them asking for the CS again
// whenever the run goes quiet) while a fresh visitor of another address (127.0.0.2)
// loads a page, opens its socket and waits for the snapshot, -samples times; a visitor
// of a third address (127.0.0.3) is measured first with no attacker (the baseline,
// same run). -fair=false gives the server a CPU share larger than any machine, as
// before the fair share.
func cpuAttack(fs *flag.FlagSet, opts *web.Options) func(context.Context, *local) error {
	sessions := fs.Int("sessions", 20, "heavy runs of the attacking address")
	nodes := fs.Int("n", 128, "processes of each heavy run")
	samples := fs.Int("samples", 200, "fresh visits measured in each phase")
	warm := fs.Duration("warm", 3*time.Second, "how long the heavy runs play before the visits are measured")
	opts.MaxSessions = 200
	fs.BoolFunc("fair", "the server shares the CPU fairly (the default; -fair=false: a share no machine reaches)", func(v string) error {
		fair, err := strconv.ParseBool(v)
		if !fair {
			opts.CPU = session.CPUOptions{Cores: 1e9}
		}
		return err
	})
	target := fs.Duration("target", 100*time.Millisecond, "the fresh visitor's p99 under attack must be at or under this (0: no verdict)")
	prof := fs.String("cpuprofile", "", "write a CPU profile of the attack (server and clients) here")
	return func(ctx context.Context, t *local) error {
		if *prof != "" {
			f, err := os.Create(*prof)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		// The baseline's visitor has an address of its own: each visit is a new run, and
		// one address may start 300 in a burst (--rate-sessions).
		baseline, err := visits(t.base, "127.0.0.3", *samples, 20*time.Millisecond)
		if err != nil {
			return fmt.Errorf("baseline: %w", err)
		}
		fmt.Printf("baseline (no attacker): fresh visitor 127.0.0.3, %d visits: %s\n", *samples, spread(baseline, 100*time.Microsecond))

		attacker := t.client("127.0.0.1")
		var frames, slowed atomic.Int64
		var wg sync.WaitGroup
		var conns []*websocket.Conn
		defer func() {
			closeAll(&conns)
			wg.Wait()
		}()
		ask := func(c *websocket.Conn, mu *sync.Mutex, from int) {
			mu.Lock()
			defer mu.Unlock()
			// Half the processes, within the connection's burst of commands.
			for k := range *nodes / 2 {
				_ = send(c, fmt.Sprintf(`{"type":"act","do":"request","node":%d}`, (from+k)%*nodes))
			}
		}
		for range *sessions {
			id, err := attacker.Run(fmt.Sprintf("/play/ricart-agrawala?n=%d", *nodes))
			if err != nil {
				return fmt.Errorf("attacker's page: %w", err)
			}
			c, err := attacker.Socket("/ws/" + id)
			if err != nil {
				return fmt.Errorf("attacker's socket: %w", err)
			}
			conns = append(conns, c)
			mu := &sync.Mutex{}
			_ = send(c, `{"type":"speed","speed":16}`)
			ask(c, mu, 0)
			_ = send(c, `{"type":"play"}`)
			wg.Add(1)
			go func() {
				defer wg.Done()
				round := 0
				for {
					_, b, err := c.ReadMessage()
					if err != nil {
						return
					}
					s := string(b)
					if !strings.HasPrefix(s, `{"type":"events"`) && !strings.HasPrefix(s, `{"type":"state"`) {
						continue
					}
					frames.Add(1)
					if strings.Contains(s, `"slowed":`) {
						slowed.Add(1)
					}
					if strings.Contains(s, `"quiet":true`) {
						round++
						ask(c, mu, round**nodes/2)
					}
				}
			}()
		}
		fmt.Printf("attacker 127.0.0.1: %d runs of ricart-agrawala n=%d at 16x playing; warming %v\n", *sessions, *nodes, *warm)
		select {
		case <-time.After(*warm):
		case <-ctx.Done():
			return ctx.Err()
		}
		frames.Store(0)
		slowed.Store(0)
		under, err := visits(t.base, "127.0.0.2", *samples, 20*time.Millisecond)
		if err != nil {
			return fmt.Errorf("under attack: %w", err)
		}
		fmt.Printf("under attack: fresh visitor 127.0.0.2, %d visits: %s\n", *samples, spread(under, 100*time.Microsecond))
		fmt.Printf("attacker's frames meanwhile: %d, %d of them slowed\n", frames.Load(), slowed.Load())
		p99 := quantile(under, 0.99).Round(100 * time.Microsecond)
		if *target > 0 && p99 > *target {
			return fmt.Errorf("the fresh visitor's p99 under attack, %v, is over the target of %v", p99, *target)
		}
		if *target > 0 {
			fmt.Printf("target met: p99 %v at or under %v\n", p99, *target)
		}
		return nil
	}
}

// seeksAttack: S sessions 95 000 steps into a 128-process token ring seek R times a
// second each, while another user steps a small run; it prints that user's step
// latency (command to events frame).
func seeksAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	sessions := fs.Int("sessions", 8, "seeking sessions")
	perSec := fs.Float64("rate", 38, "seeks per second, all sessions together")
	far := fs.Int("step", 95_000, "the step the seeking sessions start at")
	dur := fs.Duration("d", 10*time.Second, "how long to measure")
	return func(ctx context.Context, t *local) error {
		path, err := runLink(`{"version":2,"algorithm":"token-ring","nodes":128,"seed":1}`, nil, *far)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, *dur+time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		var seeks sync.Map
		begin := make(chan struct{})
		for k := range *sessions {
			conn, err := watch(t.client(fmt.Sprintf("198.51.100.%d", 10+k)), path) // one network each, as 8 people would be
			if err != nil {
				return err
			}
			defer conn.Close()
			drain(conn)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-begin
				tick := time.NewTicker(time.Duration(float64(*sessions) / *perSec * float64(time.Second)))
				defer tick.Stop()
				n := 0
				for {
					select {
					case <-ctx.Done():
						seeks.Store(k, n)
						return
					case <-tick.C:
					}
					if send(conn, fmt.Sprintf(`{"type":"seek","step":%d}`, *far-rand.IntN(*far/2))) != nil {
						seeks.Store(k, n)
						return
					}
					n++
				}
			}()
		}
		victim, err := watch(t.client("203.0.113.5"), "/play/ricart-agrawala?n=5")
		if err != nil {
			return err
		}
		defer victim.Close()
		close(begin)
		var lat []time.Duration
		refused := 0
		// reply waits for the answer to one command: an events, state or error frame.
		reply := func() (string, error) {
			for {
				_ = victim.SetReadDeadline(time.Now().Add(30 * time.Second))
				_, b, err := victim.ReadMessage()
				if err != nil {
					return "", err
				}
				fr, err := protocol.Decode(b)
				if err != nil {
					return "", err
				}
				switch typ := fr.Type(); typ {
				case "events", "state", "error":
					return typ, nil
				}
			}
		}
		end := time.Now().Add(*dur)
		for k := 0; time.Now().Before(end) && ctx.Err() == nil; k++ {
			if k%50 == 0 { // keep the small run busy: requests to step through
				_ = send(victim, fmt.Sprintf(`{"type":"act","do":"request","node":%d}`, k/50%5))
				if _, err := reply(); err != nil {
					return err
				}
			}
			sent := time.Now()
			if err := send(victim, `{"type":"step"}`); err != nil {
				return err
			}
			typ, err := reply()
			if err != nil {
				return err
			}
			if typ == "error" {
				refused++
				continue
			}
			lat = append(lat, time.Since(sent))
			time.Sleep(30 * time.Millisecond) // a person clicking fast, within the command rate
		}
		cancel()
		wg.Wait()
		total := 0
		seeks.Range(func(_, v any) bool { total += v.(int); return true })
		slices.Sort(lat)
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		fmt.Printf("seeks: %d sessions at step %d sent %d seeks in %v (%.1f/s)\n", *sessions, *far, total, *dur, float64(total)/dur.Seconds())
		if len(lat) == 0 {
			return fmt.Errorf("no step was answered (%d refused)", refused)
		}
		fmt.Printf("seeks: another user's step, %d steps (%d refused): mean %v, %s\n", len(lat), refused,
			(sum / time.Duration(len(lat))).Round(10*time.Microsecond), spread(lat, 10*time.Microsecond))
		return nil
	}
}

// viewersAttack: N viewers of a 128-process Bakery run never read their socket while
// another viewer of the same run seeks R times a second; it prints the server's heap
// (the server runs in this process) and the slow clients it dropped.
func viewersAttack(fs *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	idle := fs.Int("idle", 2, "viewers that never read")
	perSec := fs.Float64("rate", 12, "seeks per second of the reading viewer")
	dur := fs.Duration("d", 20*time.Second, "how long")
	return func(ctx context.Context, t *local) error {
		var ivs []sim.Intervention // every process asks at once: thousands of messages
		for i := range 128 {
			ivs = append(ivs, sim.Intervention{Action: sim.Action{Do: sim.ActRequest, Node: i, From: -1, To: -1}})
		}
		path, err := runLink(`{"version":2,"algorithm":"bakery","nodes":128,"seed":1,"cs":2}`, ivs, 400)
		if err != nil {
			return err
		}
		reader := t.client("198.51.100.20")
		id, err := reader.Run(path)
		if err != nil {
			return err
		}
		// Non-readers with a small receive buffer, as a phone on a stalled network.
		for k := range *idle {
			c, err := t.client(fmt.Sprintf("198.51.100.%d", 30+k)).DialStalled("/ws/"+id, 4096)
			if err != nil {
				return err
			}
			defer c.Close()
		}
		seeker, err := reader.Dial("/ws/" + id)
		if err != nil {
			return err
		}
		defer seeker.Close()
		drain(seeker)
		heap := func() uint64 {
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			return m.HeapInuse
		}
		start, peak := heap(), uint64(0)
		tick := time.NewTicker(time.Duration(float64(time.Second) / *perSec))
		defer tick.Stop()
		end := time.Now().Add(*dur)
		for k := 0; time.Now().Before(end) && ctx.Err() == nil; k++ {
			<-tick.C
			_ = send(seeker, fmt.Sprintf(`{"type":"seek","step":%d}`, 400-k%2))
			if k%12 == 0 {
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapInuse)
			}
		}
		resp, err := http.Get(t.base + "/metrics")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		dropped := "?"
		for _, line := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(line, "playground_slow_clients_dropped_total "); ok {
				dropped = v
			}
		}
		fmt.Printf("viewers: %d non-reading viewers of a 128-process Bakery, one seeking %.0f/s for %v\n", *idle, *perSec, *dur)
		fmt.Printf("viewers: heap in use %d MB at the start, %d MB at the peak; slow clients dropped: %s\n", start>>20, peak>>20, dropped)
		return nil
	}
}

// bodiesAttack: one address opens -n connections, each a POST whose body never comes
// (headers and a few bytes); how long the server keeps them.
func bodiesAttack(fs *flag.FlagSet, opts *web.Options) func(context.Context, *local) error {
	n := fs.Int("n", 300, "trickled bodies at once")
	wait := fs.Duration("wait", 60*time.Second, "how long the attacker waits for the server to close them")
	fs.DurationVar(&opts.BodyTimeout, "body-timeout", web.DefaultBodyTimeout, "the server's --body-timeout")
	return func(ctx context.Context, t *local) error {
		host := strings.TrimPrefix(t.base, "http://")
		var mu sync.Mutex
		var closedAt []time.Duration
		var wg sync.WaitGroup
		start := time.Now()
		for k := range *n {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				return err
			}
			path := "/lecture"
			if k%2 == 1 {
				path = "/api/sessions/x/explore"
			}
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: 198.51.100.7\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nsession=", path, host)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				_ = conn.SetReadDeadline(start.Add(*wait))
				_, err := io.Copy(io.Discard, conn)
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					return // still open when the attacker gave up
				}
				mu.Lock()
				closedAt = append(closedAt, time.Since(start))
				mu.Unlock()
			}()
		}
		wg.Wait()
		var last time.Duration
		for _, d := range closedAt {
			last = max(last, d)
		}
		fmt.Printf("bodies: %d POSTs whose bodies never came (--body-timeout %v): %d closed by the server, the last after %v; %d still open after %v\n",
			*n, opts.BodyTimeout, len(closedAt), last.Round(10*time.Millisecond), *n-len(closedAt), *wait)
		return ctx.Err()
	}
}

// rebindAttack: a page of another site whose name resolves to the server (DNS
// rebinding) asks for a page and opens a socket with its own Host and Origin.
func rebindAttack(_ *flag.FlagSet, _ *web.Options) func(context.Context, *local) error {
	return func(ctx context.Context, t *local) error {
		own := t.client("198.51.100.7")
		id, err := own.Run("/play/ricart-agrawala?n=3")
		if err != nil {
			return err
		}
		host := strings.TrimPrefix(t.base, "http://")
		_, port, _ := net.SplitHostPort(host)
		evil := "rebind.example:" + port
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/play/ricart-agrawala?n=3", nil)
		req.Host = evil
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		fmt.Printf("rebind: GET /play with Host %s: %d\n", evil, resp.StatusCode)
		d := websocket.Dialer{NetDial: func(string, string) (net.Conn, error) { return net.Dial("tcp", host) }}
		conn, wsResp, err := d.Dial("ws://"+evil+"/ws/"+id, http.Header{"Origin": {"http://" + evil}})
		switch {
		case err == nil:
			conn.Close()
			fmt.Printf("rebind: the socket with Host and Origin %s: opened (101)\n", evil)
		case wsResp != nil:
			fmt.Printf("rebind: the socket with Host and Origin %s: %d\n", evil, wsResp.StatusCode)
		default:
			return err
		}
		sock, err := own.Dial("/ws/" + id)
		if err != nil {
			return fmt.Errorf("the server's own address: %w", err)
		}
		sock.Close()
		fmt.Printf("rebind: the same socket by the server's address %s: opened (101)\n", host)
		return nil
	}
}
