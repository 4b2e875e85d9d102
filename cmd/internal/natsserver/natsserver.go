// Package natsserver runs a real nats-server on a free loopback port, for the tools that
// put several playground servers behind one broker (cmd/lectureload -cluster, cmd/abuse
// cluster-places).
package natsserver

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Server is a running nats-server, a child of the tool.
type Server struct {
	Cmd *exec.Cmd
	URL string // nats://127.0.0.1:port
}

// Start runs bin (empty: nats-server on PATH, in /usr/sbin or /usr/bin) on 127.0.0.1 at
// a free port and waits until it takes connections.
func Start(bin string) (*Server, error) {
	if bin == "" {
		for _, p := range []string{"nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"} {
			if path, err := exec.LookPath(p); err == nil {
				bin = path
				break
			}
		}
		if bin == "" {
			return nil, errors.New("nats-server is not installed (Debian: apt-get install nats-server); or give -nats")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	// Its log stays out of the tools' reports; a failure to start shows as no connection.
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Cmd: cmd, URL: fmt.Sprintf("nats://127.0.0.1:%d", port)}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return s, nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("nats-server did not take connections on %s", addr)
		}
	}
}

// Stop ends the server (it is the tool's own child) and waits for it.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(syscall.SIGTERM)
	_ = s.Cmd.Wait()
}
