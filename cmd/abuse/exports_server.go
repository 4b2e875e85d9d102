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

	"github.com/teach-dist/playground/cmd/internal/procfs"
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
