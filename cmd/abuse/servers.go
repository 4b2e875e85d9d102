package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/cmd/internal/browser"
	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/web"
	"github.com/teach-dist/playground/web/ratelimit"
)

// The attacks' targets: a playground this process serves (its memory and CPU are then
// the attackers' too), or a `playground serve` child, measured from /proc. An attack's
// flags may set how its target starts; the target starts once they are parsed and
// stops after the attack.

// localAttack is an attack on a local playground: it declares its flags on fs, some of
// which may set the server's opts, and returns the attack.
type localAttack func(fs *flag.FlagSet, opts *web.Options) func(ctx context.Context, t *local) error

// onLocal is a localAttack whose clients are each a loopback address of its own.
func onLocal(a localAttack) func(*flag.FlagSet) func(context.Context) error { return served(a, false) }

// behindProxy is a localAttack whose clients are told apart by X-Forwarded-For.
func behindProxy(a localAttack) func(*flag.FlagSet) func(context.Context) error {
	return served(a, true)
}

func served(a localAttack, proxied bool) func(*flag.FlagSet) func(context.Context) error {
	return func(fs *flag.FlagSet) func(context.Context) error {
		var opts web.Options
		attack := a(fs, &opts)
		return func(ctx context.Context) error {
			t, err := serveLocal(ctx, opts, proxied)
			if err != nil {
				return err
			}
			defer t.stop()
			return attack(ctx, t)
		}
	}
}

// local is a playground served by this process on 127.0.0.1 with `serve`'s default
// rate limits.
type local struct {
	srv     *web.Server
	base    string // http://127.0.0.1:port
	proxied bool
	end     func()            // shuts the server down and waits
	kept    []*websocket.Conn // presenters' sockets, closed with the server
}

// serveLocal starts a local playground with opts. Its clients are each a loopback
// address of its own (browser.At) or, proxied, behind a trusted proxy at 127.0.0.0/8:
// X-Forwarded-For says which client a request is (browser.Forwarded), so that one
// machine plays several networks.
func serveLocal(ctx context.Context, opts web.Options, proxied bool) (*local, error) {
	opts.Limits = ratelimit.DefaultLimits()
	if proxied {
		clientIP, err := ratelimit.ClientIP("127.0.0.0/8")
		if err != nil {
			return nil, err
		}
		opts.ClientIP = clientIP
	}
	srv := web.New(opts)
	ctx, cancel := context.WithCancel(ctx)
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(a string) { addrc <- a }) }()
	select {
	case a := <-addrc:
		return &local{srv: srv, base: "http://" + a, proxied: proxied, end: func() { cancel(); <-errc }}, nil
	case err := <-errc:
		cancel()
		return nil, err
	}
}

// stop closes the presenters' sockets and shuts the server down.
func (t *local) stop() {
	closeAll(&t.kept)
	t.end()
}

// client is a browser at addr.
func (t *local) client(addr string) *browser.Client {
	if t.proxied {
		return browser.Forwarded(t.base, addr)
	}
	return browser.At(t.base, addr)
}

// presenter starts a lecture of a new run of path as addr: the presenter's socket,
// which lives as long as the server, and the join code.
func (t *local) presenter(addr, path string) (*websocket.Conn, string, error) {
	conn, code, err := t.client(addr).Lecture(path)
	if err == nil {
		t.kept = append(t.kept, conn)
	}
	return conn, code, err
}

// lecture is a lecture of a new run of path whose presenter (192.0.2.10) keeps up,
// reading all it is sent: its join code.
func (t *local) lecture(path string) (string, error) {
	conn, code, err := t.presenter("192.0.2.10", path)
	if err == nil {
		drain(conn)
	}
	return code, err
}

// serveArgs are how a `playground serve` child starts: its binary, its virtual-memory
// limit (ulimit -v, KiB; 0: none), more flags.
type serveArgs struct {
	bin      string
	ulimitKB int
	flags    []string
}

// childAttack is an attack on a `playground serve` child: it declares its flags on fs,
// some of which may set how the child starts, and returns the attack.
type childAttack func(fs *flag.FlagSet, args *serveArgs) func(ctx context.Context, srv *server) error

// onChild is a childAttack with its -server flag, the binary it starts.
func onChild(a childAttack) func(*flag.FlagSet) func(context.Context) error {
	return func(fs *flag.FlagSet) func(context.Context) error {
		var args serveArgs
		fs.StringVar(&args.bin, "server", "playground", "the playground binary to attack (started on 127.0.0.1 with the default flags)")
		attack := a(fs, &args)
		return func(ctx context.Context) error {
			srv, err := startServer(ctx, args)
			if err != nil {
				return err
			}
			defer srv.stop()
			return attack(ctx, srv)
		}
	}
}

// server is a `playground serve` child on loopback, under a virtual-memory limit
// (ulimit -v), whose memory is read from /proc and whose last log lines are kept (a
// Go runtime that runs out of memory says so on stderr before it dies).
type server struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the child exited

	mu   sync.Mutex
	tail []string
}

// startServer runs the child as args say, on 127.0.0.1 with the default flags and
// args.flags.
func startServer(ctx context.Context, args serveArgs) (*server, error) {
	script := `exec "$0" serve --addr 127.0.0.1:0 --log-format json "$@"`
	if args.ulimitKB > 0 {
		script = "ulimit -v " + strconv.Itoa(args.ulimitKB) + " && " + script
	}
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, args.bin}, args.flags...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, done: make(chan struct{})}
	bound := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var rec struct{ Msg, Addr string }
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				bound <- rec.Addr
			}
			s.mu.Lock()
			s.tail = append(s.tail, line)
			if len(s.tail) > 20 {
				s.tail = s.tail[1:]
			}
			s.mu.Unlock()
		}
		_ = cmd.Wait()
		close(s.done)
	}()
	select {
	case addr := <-bound:
		s.url = "http://" + addr
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("the server exited before it listened: %s", s.lastLines())
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, errors.New("the server did not listen within 30 s")
	}
}

// client is a browser at addr, a loopback address.
func (s *server) client(addr string) *browser.Client { return browser.At(s.url, addr) }

// alive reports whether the child still runs and answers /healthz.
func (s *server) alive() bool {
	select {
	case <-s.done:
		return false
	default:
	}
	resp, err := http.Get(s.url + "/healthz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// memory is the child's resident memory now and at its peak, in MiB (/proc VmRSS and
// VmHWM).
func (s *server) memory() (rss, peak int) {
	now, err1 := procfs.Memory(s.cmd.Process.Pid, "VmRSS")
	top, err2 := procfs.Memory(s.cmd.Process.Pid, "VmHWM")
	if err1 != nil || err2 != nil {
		return -1, -1
	}
	return int(now >> 20), int(top >> 20)
}

func (s *server) lastLines() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// stop ends the child (it is ours: started by startServer) and waits for it.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}
