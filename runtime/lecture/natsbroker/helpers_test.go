package natsbroker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

// natsServer is a real nats-server (Debian's package) on a free loopback port.
type natsServer struct {
	t    *testing.T
	bin  string
	port int
	cmd  *exec.Cmd
	out  *lockedBuffer
}

// natsBinary finds nats-server. Debian installs it in /usr/sbin, which a user's PATH
// may lack.
func natsBinary(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"nats-server", "/usr/sbin/nats-server", "/usr/bin/nats-server"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	const msg = "nats-server is not installed (Debian: apt-get install nats-server); .ci/run must install it"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func startNATS(t *testing.T) *natsServer {
	t.Helper()
	s := &natsServer{t: t, bin: natsBinary(t), port: freePort(t)}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *natsServer) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", s.port) }

// start runs the server and waits until it takes connections.
func (s *natsServer) start() {
	s.t.Helper()
	s.out = &lockedBuffer{}
	s.cmd = exec.Command(s.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(s.port))
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	started := false
	defer func() { // t.Fatal runs deferred calls
		if !started {
			s.kill()
			s.t.Logf("nats-server said: %s", s.out.String())
		}
	}()
	testwait.For(s.t, fmt.Sprintf("nats-server taking connections on port %d", s.port), func() bool {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.port), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	started = true
}

// kill stops the server at once, as a crash would.
func (s *natsServer) kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// connect is a broker on s, closed at the end of the test.
func connect(t *testing.T, s *natsServer) *Broker {
	t.Helper()
	return connectBeat(t, s, 50*time.Millisecond)
}

func connectBeat(t *testing.T, s *natsServer, beat time.Duration) *Broker {
	t.Helper()
	b, err := Connect(Options{URL: s.url(), Heartbeat: beat, ReconnectWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// sink is a follower with a bounded queue, as a WebSocket client has.
type sink struct {
	mu     sync.Mutex
	frames [][]byte
	cap    int
	closed lecture.Reason
}

func (s *sink) Send(f []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed != 0 || len(s.frames) >= s.cap {
		return false
	}
	s.frames = append(s.frames, f)
	return true
}

func (s *sink) Close(why lecture.Reason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed == 0 {
		s.closed = why
	}
}

func (s *sink) reason() lecture.Reason {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// take empties the queue, as a writer goroutine does.
func (s *sink) take() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.frames
	s.frames = nil
	return out
}

// until reads frames until the one numbered seq has come (or the sink closed), and
// returns them all.
func (s *sink) until(t *testing.T, seq uint64) [][]byte {
	t.Helper()
	var out [][]byte
	testwait.For(t, fmt.Sprintf("frame %d", seq), func() bool {
		out = append(out, s.take()...)
		if len(out) > 0 {
			if n, _ := protocol.StampOf(out[len(out)-1]); n >= seq {
				return true
			}
		}
		return s.reason() != 0
	})
	return out
}

type stamped struct {
	Seq  uint64 `json:"lseq"`
	Type string `json:"type"`
	N    int    `json:"n"`
}

func decode(t *testing.T, f []byte) stamped {
	t.Helper()
	var s stamped
	if err := json.Unmarshal(f, &s); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	return s
}

func frame(n int) []byte { return fmt.Appendf(nil, `{"type":"events","n":%d}`, n) }

// seqs lists the numbers of frames.
func seqs(t *testing.T, fs [][]byte) []uint64 {
	t.Helper()
	out := make([]uint64, len(fs))
	for i, f := range fs {
		out[i] = decode(t, f).Seq
	}
	return out
}
