package socket

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/runs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newHub serves /ws/{id} of a fresh session manager on loopback, with one session of
// Ricart-Agrawala on three processes; everything ends with the test.
func newHub(t *testing.T) (*Hub, *httptest.Server, string) {
	t.Helper()
	mgr := session.NewManager(4, session.Options{})
	h := NewHub(mgr, Options{PongWait: time.Minute, WriteWait: 10 * time.Second, SendQueue: 256, ReadLimit: 64 << 10,
		Logger: slog.New(slog.DiscardHandler), Ready: func() bool { return true }})
	r := chi.NewRouter()
	r.Get("/ws/{id}", h.ServeSession)
	ts := httptest.NewServer(r)
	t.Cleanup(func() {
		mgr.Close() // sessions and socket handlers first: httptest does not track hijacked connections
		h.Wait()
		ts.Close()
	})
	sc, err := scenarios.Parse([]byte(`{"version":1,"algorithm":"ricart-agrawala","nodes":3}`))
	if err != nil {
		t.Fatal(err)
	}
	setup, err := runs.SetupOf(sc, "")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := mgr.Start(setup)
	if err != nil {
		t.Fatal(err)
	}
	return h, ts, sess.ID()
}

// dial opens the session socket of id as a page of the server would.
func dial(t *testing.T, ts *httptest.Server, id string) *websocket.Conn {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws/"+id, http.Header{"Origin": {ts.URL}})
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// next reads frames until one contains want.
func next(t *testing.T, conn *websocket.Conn, want string) string {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("waiting for %s: %v", want, err)
		}
		if strings.Contains(string(b), want) {
			return string(b)
		}
	}
}

// openClients are the hub's WebSocket clients.
func openClients(h *Hub) []*Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*Client
	for c := range h.open {
		out = append(out, c)
	}
	return out
}

func writing(c *Client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writer == writerRunning
}

// batchOf is the connection a client batches its writes through (nil: it writes
// plainly).
func batchOf(c *Client) *batchConn {
	if w, ok := c.out.(*batchWriter); ok {
		return w.conn
	}
	return nil
}

// A tab left open holds no writing goroutine: one runs while frames wait, and a
// command's answer starts it again.
func TestIdleSocketHasNoWriter(t *testing.T) {
	h, ts, id := newHub(t)
	conn := dial(t, ts, id)
	next(t, conn, `"type":"snapshot"`)
	clients := openClients(h)
	if len(clients) != 1 {
		t.Fatalf("%d clients open", len(clients))
	}
	testwait.For(t, "the writer of an idle socket ended", func() bool { return !writing(clients[0]) })
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"act","do":"request","node":0}`)); err != nil {
		t.Fatal(err)
	}
	if f := next(t, conn, `"type":"events"`); !strings.Contains(f, `"rule":"RA1"`) {
		t.Fatalf("after the writer ended, a request answered %s", f)
	}
	testwait.For(t, "the writer ended again", func() bool { return !writing(clients[0]) })
}

// A frame handler runs on a goroutine of its own: its answer comes back, and its
// panic is raised again on the reader, where the socket's containment catches it.
func TestOnOwnStackReturnsAndRaises(t *testing.T) {
	if !onOwnStack(func(b []byte) bool { return string(b) == "go on" }, []byte("go on")) {
		t.Fatal("true was lost")
	}
	if onOwnStack(func([]byte) bool { return false }, nil) {
		t.Fatal("false was lost")
	}
	defer func() {
		v := recover()
		msg, _ := v.(string)
		if !strings.Contains(msg, "boom") || !strings.Contains(msg, "in a frame handler") || !strings.Contains(msg, "socket_test.go") {
			t.Fatalf("raised %v", v)
		}
	}()
	onOwnStack(func([]byte) bool { panic("boom") }, nil)
	t.Fatal("the panic was swallowed")
}

// A client whose queue fills is counted as dropped.
func TestSlowClientIsCounted(t *testing.T) {
	m := ops.NewMetrics(ops.Gauges{Sessions: session.NewManager(1, session.Options{}), Lectures: func() int { return 0 }})
	c := newClient(nil, 1, 0, time.Minute, time.Second) // never started: nothing is written
	c.obs = m
	if !c.Send([]byte(`{}`)) || c.Send([]byte(`{}`)) {
		t.Fatal("a queue of one took two frames")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "\nplayground_slow_clients_dropped_total 1\n") {
		t.Fatalf("not counted:\n%s", rec.Body)
	}
}

// slowCount reads playground_slow_clients_dropped_total.
func slowCount(t *testing.T, m *ops.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "playground_slow_clients_dropped_total "); ok {
			return v
		}
	}
	t.Fatal("no playground_slow_clients_dropped_total")
	return ""
}

// The queue is bounded in bytes: a viewer that does not read is dropped once what
// waits for it passes the bound, however few frames that is, and counted; one frame
// larger than the bound still goes to an empty queue.
func TestQueueIsBoundedInBytes(t *testing.T) {
	big := []byte(`{"type":"error","error":"` + strings.Repeat("x", 600) + `"}`)
	tests := []struct {
		name     string
		maxBytes int
		frames   int // sent
		taken    int // accepted before the drop (frames: none dropped)
	}{
		{"under the bound", 10_000, 5, 5},
		{"over the bound", 2_000, 5, 3},
		{"one frame larger than the bound", 100, 1, 1},
		{"no byte bound", 0, 50, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ops.NewMetrics(ops.Gauges{Sessions: session.NewManager(1, session.Options{}), Lectures: func() int { return 0 }})
			c := newClient(nil, 256, tt.maxBytes, time.Minute, time.Second) // never started: nothing is read
			c.obs = m
			taken := 0
			for range tt.frames {
				if c.Send(big) {
					taken++
				}
			}
			want := "0"
			if taken < tt.frames {
				want = "1"
			}
			if taken != tt.taken || slowCount(t, m) != want {
				t.Fatalf("took %d of %d frames (want %d); dropped counted %s, want %s", taken, tt.frames, tt.taken, slowCount(t, m), want)
			}
		})
	}
}

// A snapshot replaces an older one nobody has read, with the events and state frames
// between them (the new snapshot is their outcome); other frames keep their order. What
// counts is the type the session delivered each frame with, never its bytes: a frame
// sent as bytes (an error, a lecture's stamped frame) is never superseded.
func TestSnapshotIsNotQueuedTwice(t *testing.T) {
	type in struct {
		frame protocol.Frame
		bytes []byte // sent as bytes (Send) rather than delivered by the session
	}
	snap := func(step int) in { return in{frame: &protocol.Snapshot{Clock: protocol.Clock{Step: step}}} }
	events := func(step int) in { return in{frame: &protocol.Events{Clock: protocol.Clock{Step: step}}} }
	state := in{frame: &protocol.State{Clock: protocol.Clock{Step: 9}}}
	errf := in{frame: &protocol.Error{Code: protocol.CodeRefused, Error: "no"}}
	hello := in{frame: &protocol.Hello{Session: "s"}}
	stamped := in{bytes: protocol.Stamp(7, protocol.Encode(&protocol.Snapshot{}).JSON)} // a follower's: not the session's own
	tests := []struct {
		name     string
		in, want []in
	}{
		{"two snapshots", []in{snap(1), snap(2)}, []in{snap(2)}},
		{"events before the first stay", []in{events(1), snap(5), events(6), snap(9)}, []in{events(1), snap(9)}},
		{"other frames stay in order", []in{snap(1), errf, events(2), state, hello, snap(3)}, []in{errf, hello, snap(3)}},
		{"seeking twelve times", []in{snap(1), snap(2), snap(3), snap(4), snap(5), snap(6), snap(7), snap(8), snap(9), snap(10), snap(11), snap(12)}, []in{snap(12)}},
		{"a snapshot sent as bytes is not the session's", []in{stamped, snap(1), snap(2)}, []in{stamped, snap(2)}},
	}
	wire := func(f in) []byte {
		if f.frame == nil {
			return f.bytes
		}
		return protocol.Encode(f.frame).JSON
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(nil, 256, 1<<20, time.Minute, time.Second) // never started: nothing is read
			for _, f := range tt.in {
				ok := false
				if f.frame == nil {
					ok = c.Send(f.bytes)
				} else {
					ok = c.Deliver(protocol.Encode(f.frame))
				}
				if !ok {
					t.Fatalf("refused %s", wire(f))
				}
			}
			var want, got [][]byte
			wantBytes := 0
			for _, f := range tt.want {
				want = append(want, wire(f))
				wantBytes += len(wire(f))
			}
			for _, q := range c.queue.frames {
				got = append(got, q.frame)
			}
			if g, w := bytes.Join(got, []byte("\n")), bytes.Join(want, []byte("\n")); !bytes.Equal(g, w) || c.queue.bytes != wantBytes {
				t.Fatalf("queue (%d bytes):\n%s\nwant (%d bytes):\n%s", c.queue.bytes, g, wantBytes, w)
			}
		})
	}
}

// A viewer that stops reading is dropped when a write reaches its deadline, and
// counted like one whose queue filled (the count stayed 0 for these before).
func TestWriteDeadlineDropIsCounted(t *testing.T) {
	m := ops.NewMetrics(ops.Gauges{Sessions: session.NewManager(1, session.Options{}), Lectures: func() int { return 0 }})
	clients := make(chan *Client, 1)
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		// No bound on the queue: only the write deadline can drop this client.
		c := newClient(conn, 1<<20, 0, time.Minute, 200*time.Millisecond)
		c.obs = m
		c.Start()
		clients <- c
		<-c.gone
	}))
	defer ts.Close()
	small := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		conn, err := net.Dial(network, addr)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4096)
		}
		return conn, err
	}}
	conn, _, err := small.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // never read
	c := <-clients
	frame := []byte(`{"type":"error","error":"` + strings.Repeat("x", 64<<10) + `"}`)
	for range 400 { // 26 MB: more than any loopback socket buffers
		if !c.Send(frame) {
			break
		}
	}
	testwait.For(t, "the stalled viewer dropped and counted", func() bool { return slowCount(t, m) == "1" })
	<-c.gone
}
