package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/teach-dist/playground/cmd/internal/procfs"
	"github.com/teach-dist/playground/web/ops"
)

// server is the playground under load.
type server struct {
	base    string // http://127.0.0.1:port
	pid     int
	pprof   string // host:port, or "" when unknown
	cmd     *exec.Cmd
	log     string
	stopped bool
}

var servingRE = regexp.MustCompile(`serving on (http://\S+)/`)

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServer starts --server on loopback, or checks --url is loopback.
func startServer(ctx context.Context, c *config, stderr io.Writer) (*server, error) {
	if c.server == "" {
		if c.url == "" || c.pid == 0 {
			return nil, errors.New("give --server BIN, or --url and --pid of a running server")
		}
		host := strings.TrimPrefix(strings.TrimPrefix(c.url, "http://"), "https://")
		if _, err := ops.CheckLoopback(strings.TrimSuffix(host, "/")); err != nil {
			return nil, fmt.Errorf("--url: %w (the load tool runs on loopback only)", err)
		}
		return &server{base: "http://" + strings.TrimSuffix(host, "/"), pid: c.pid}, nil
	}
	pp, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp("", "sessionload-server-*.log")
	if err != nil {
		return nil, err
	}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--max-sessions", strconv.Itoa(c.sessions + 16),
		"--idle", "30m", "--pprof", pp, "--log-format", "json"}
	if !c.limits {
		args = append(args, "--no-limits")
	}
	args = append(args, strings.Fields(c.serveArgs)...)
	cmd := exec.Command(c.server, args...)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{pid: cmd.Process.Pid, pprof: pp, cmd: cmd, log: logf.Name()}
	logf.Close()
	found := make(chan string, 1)
	go func() {
		b := make([]byte, 4096)
		var seen []byte
		for {
			n, err := out.Read(b)
			seen = append(seen, b[:n]...)
			if m := servingRE.FindSubmatch(seen); m != nil {
				found <- string(m[1])
				_, _ = io.Copy(io.Discard, out)
				return
			}
			if err != nil {
				close(found)
				return
			}
		}
	}()
	select {
	case base, ok := <-found:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("the server did not start; its log: %s", s.log)
		}
		s.base = base
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, errors.New("the server did not start within 30 s")
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, ctx.Err()
	}
	return s, nil
}

// stop sends SIGTERM and reports how long the graceful shutdown took (once).
func (s *server) stop(out io.Writer) {
	if s.cmd == nil || s.stopped {
		return
	}
	s.stopped = true
	start := time.Now()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	err := s.cmd.Wait()
	fmt.Fprintf(out, "server stopped by SIGTERM in %v (exit: %v); its log: %s\n", time.Since(start).Round(time.Millisecond), errOr(err, "0"), s.log)
}

func errOr(err error, ok string) string {
	if err != nil {
		return err.Error()
	}
	return ok
}

// gc asks the server for a garbage collection (pprof's heap profile with gc=1), so
// that resident memory reflects what is live.
func (s *server) gc(hc *http.Client) {
	if s.pprof == "" {
		return
	}
	resp, err := hc.Get("http://" + s.pprof + "/debug/pprof/heap?gc=1")
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// metric reads one sample from the server's /metrics.
func (s *server) metric(hc *http.Client, name string) float64 {
	resp, err := hc.Get(s.base + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

// settle is a few minutes of idleness in a few seconds: four garbage collections (the
// runtime forces one every two minutes), each of which also halves the goroutine
// stacks that use less than a quarter of theirs, with pauses in which the scavenger
// hands freed pages back. It returns the resident size.
func (s *server) settle(hc *http.Client) int64 {
	for range 4 {
		s.gc(hc)
		time.Sleep(2 * time.Second)
	}
	r, _ := procfs.Memory(s.pid, "VmRSS")
	return r
}
