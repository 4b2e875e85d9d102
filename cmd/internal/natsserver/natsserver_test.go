package natsserver

import (
	"net"
	"os/exec"
	"strings"
	"testing"
)

func TestStartTakesConnectionsUntilStopped(t *testing.T) {
	if _, err := exec.LookPath("nats-server"); err != nil {
		if _, err := exec.LookPath("/usr/sbin/nats-server"); err != nil {
			t.Skip("nats-server is not installed")
		}
	}
	s, err := Start("")
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := strings.CutPrefix(s.URL, "nats://127.0.0.1:")
	if !ok {
		s.Stop()
		t.Fatalf("URL %q is not a loopback nats URL", s.URL)
	}
	c, err := net.Dial("tcp", "127.0.0.1:"+addr)
	if err != nil {
		s.Stop()
		t.Fatalf("the server does not take connections: %v", err)
	}
	c.Close()
	s.Stop()
	if s.Cmd.ProcessState == nil {
		t.Fatal("Stop returned before the process ended")
	}
}

func TestStartSaysWhatFailed(t *testing.T) {
	if _, err := Start("/nonexistent/nats-server"); err == nil {
		t.Fatal("a binary that does not exist started")
	}
}
