package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

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

// startServer runs bin serve on 127.0.0.1 with the default flags and extra, under a
// limit of ulimitKB KiB of virtual memory (0: none).
func startServer(ctx context.Context, bin string, ulimitKB int, extra ...string) (*server, error) {
	script := `exec "$0" serve --addr 127.0.0.1:0 --log-format json "$@"`
	if ulimitKB > 0 {
		script = "ulimit -v " + strconv.Itoa(ulimitKB) + " && " + script
	}
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, bin}, extra...)...)
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status")
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.Atoi(f[0])
		switch k {
		case "VmRSS":
			rss = kb >> 10
		case "VmHWM":
			peak = kb >> 10
		}
	}
	return rss, peak
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
