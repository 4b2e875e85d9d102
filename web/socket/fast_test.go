package socket

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
)

// fastRig is a started client of the hub's kind whose kernel buffers are tiny (a few
// KiB each way), and a reader that reads only when told: the fan-out's fast path
// meets a full socket buffer within a few frames.
type fastRig struct {
	c      *Client
	reader *websocket.Conn
	mu     sync.Mutex
	pings  int
}

func newFastRig(t *testing.T, queue int, wait time.Duration) *fastRig {
	t.Helper()
	return newFastRigGap(t, queue, wait, 0)
}

// newFastRigGap is newFastRig whose client counts frames within gap of a fast write
// as a burst (batchWriter.fastGap; 0: never).
func newFastRigGap(t *testing.T, queue int, wait, gap time.Duration) *fastRig {
	t.Helper()
	ts, clients := serveClients(t, func(conn *websocket.Conn) *Client {
		_ = conn.UnderlyingConn().(*batchConn).SetWriteBuffer(4096)
		c := newClient(conn, queue, 0, time.Hour, wait)
		c.out.(*batchWriter).fastGap = gap
		c.Start()
		return c
	})
	d := *websocket.DefaultDialer
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			_ = conn.(*net.TCPConn).SetReadBuffer(4096)
		}
		return conn, err
	}
	reader, _, err := d.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rig := &fastRig{c: testwait.Recv(t, "the server's client", clients), reader: reader}
	if b := batchOf(rig.c); b == nil || b.raw == nil {
		t.Fatal("a loopback TCP client has no fast path")
	}
	reader.SetPingHandler(func(string) error {
		rig.mu.Lock()
		rig.pings++
		rig.mu.Unlock()
		return nil
	})
	t.Cleanup(func() {
		rig.c.CloseWith(websocket.CloseNormalClosure, "", false)
		reader.Close()
		<-rig.c.gone
		ts.Close()
	})
	return rig
}

// ping makes a ping due now, as the client's ping timer does.
func (r *fastRig) ping() {
	r.c.mu.Lock()
	r.c.pingDue = true
	r.c.startWriter()
	r.c.mu.Unlock()
}

// readFrames reads n messages within a generous bound (a busy machine).
func (r *fastRig) readFrames(t *testing.T, n int) []string {
	t.Helper()
	_ = r.reader.SetReadDeadline(time.Now().Add(30 * time.Second))
	got := make([]string, 0, n)
	for range n {
		_, b, err := r.reader.ReadMessage()
		if err != nil {
			t.Fatalf("after %d of %d frames: %v", len(got), n, err)
		}
		got = append(got, string(b))
	}
	return got
}

// The wire bytes the fast path writes are a WebSocket frame a reader takes: its
// payload comes back whole for each length encoding (7, 16 and 64 bits), also when
// the socket takes only part of it at once and the writer finishes it.
func TestServerTextFrameIsReadBack(t *testing.T) {
	for _, size := range []int{0, 125, 126, 65535, 65536, 70000} {
		rig := newFastRig(t, 16, 10*time.Second)
		payload := bytes.Repeat([]byte("y"), size)
		rig.c.mu.Lock()
		ok, rest := batchOf(rig.c).tryWrite(serverTextFrame(payload))
		if rest {
			rig.c.startWriter()
		}
		rig.c.mu.Unlock()
		if !ok {
			t.Fatalf("size %d: the fast path did not try an idle connection", size)
		}
		if size > 64<<10 && !rest {
			t.Fatalf("size %d: a 4 KiB socket buffer took the whole frame at once", size)
		}
		if got := rig.readFrames(t, 1)[0]; got != string(payload) {
			t.Fatalf("size %d: read %d bytes, want the %d written", size, len(got), size)
		}
	}
}

// A follower that keeps up gets its shared frames from the sender's own goroutine: no
// writer runs and nothing is queued after each frame.
func TestSharedFrameToAnIdleClientIsWrittenAtOnce(t *testing.T) {
	rig := newFastRig(t, 16, 10*time.Second)
	for k := 1; k <= 20; k++ {
		f := stamped(k, 200)
		if !rig.c.SendShared(f) {
			t.Fatalf("frame %d refused", k)
		}
		rig.c.mu.Lock()
		w, queued := rig.c.writer == writerRunning, len(rig.c.queue.frames)
		rig.c.mu.Unlock()
		if w || queued != 0 {
			t.Fatalf("frame %d to an idle client: writer running %v, %d queued; want it written at once", k, w, queued)
		}
		if got := rig.readFrames(t, 1)[0]; got != string(f) {
			t.Fatalf("read %.80s, want frame %d", got, k)
		}
	}
}

// Frames sent while the reader does not read fill the tiny socket buffers: the fast
// path meets a full buffer (and partial writes), the writer finishes the frame it
// began and the frames queued behind it, pings go out between them, and the reader,
// once it reads, gets every frame once, in order, and the pings.
func TestFastPathAndWriterKeepOrder(t *testing.T) {
	tests := []struct {
		name         string
		frames, size int
		shared       func(k int) bool // which frames are sent shared (the rest with Send)
	}{
		{"shared frames", 60, 1500, func(int) bool { return true }},
		{"small shared frames", 600, 120, func(int) bool { return true }},
		{"shared and private frames mixed", 100, 900, func(k int) bool { return k%3 != 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newFastRig(t, tt.frames+1, time.Minute)
			var want []string
			for k := 1; k <= tt.frames; k++ {
				f := stamped(k, tt.size)
				want = append(want, string(f))
				send := rig.c.Send
				if tt.shared(k) {
					send = rig.c.SendShared
				}
				if !send(f) {
					t.Fatalf("frame %d refused", k)
				}
				if k%10 == 0 {
					rig.ping()
				}
			}
			// Far more than the buffers hold: the writer is left with the rest.
			if !writing(rig.c) {
				t.Fatalf("%d frames of %d bytes all fit 4 KiB socket buffers", tt.frames, tt.size)
			}
			got := rig.readFrames(t, tt.frames)
			for k := range got {
				if got[k] != want[k] {
					t.Fatalf("frame %d read as %.80s, want %.80s", k+1, got[k], want[k])
				}
			}
			testwait.For(t, "the writer done", func() bool { return !writing(rig.c) })
			// The writer is done: the next shared frame takes the fast path again.
			next := stamped(tt.frames+1, 100)
			if !rig.c.SendShared(next) || writing(rig.c) {
				t.Fatal("the frame after the backlog did not take the fast path")
			}
			rig.ping() // behind it: the reader sees the pings before reading on
			if got := rig.readFrames(t, 1)[0]; got != string(next) {
				t.Fatalf("after the backlog read %.80s, want %.80s", got, next)
			}
			testwait.For(t, "a ping read", func() bool {
				_ = rig.reader.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				_, _, _ = rig.reader.NextReader() // pings are handled while reading
				rig.mu.Lock()
				defer rig.mu.Unlock()
				return rig.pings > 0
			})
		})
	}
}

// A follower that stops reading is still dropped: the fast path fills its socket
// buffer, the writer blocks on the rest, frames queue behind it up to the queue's
// bound, and the next frame is refused and the client closed as too slow.
func TestFastPathStillDropsAStalledClient(t *testing.T) {
	rig := newFastRig(t, 8, time.Minute)
	refused := 0
	for k := 1; k <= 100000 && refused == 0; k++ {
		if !rig.c.SendShared(stamped(k, 1000)) {
			refused = k
		}
	}
	if refused == 0 {
		t.Fatal("100 MB sent to a client that does not read, none refused")
	}
	testwait.Recv(t, "the stalled client closed", rig.c.gone)
	rig.c.mu.Lock()
	code, text := rig.c.closeReq.code, rig.c.closeReq.text
	rig.c.mu.Unlock()
	if code != websocket.CloseTryAgainLater || text != protocol.CloseSlow {
		t.Fatalf("closed with %d %q, want %d %q", code, text, websocket.CloseTryAgainLater, protocol.CloseSlow)
	}
}

// Frames that come in a burst are not written one by one: after a fast write, the
// frames that follow within the gap are queued and the writer takes them together.
func TestBurstAfterAFastWriteIsQueued(t *testing.T) {
	rig := newFastRigGap(t, 64, 10*time.Second, time.Hour) // every frame after the first is within the gap
	lastFast := func() time.Time {
		rig.c.mu.Lock()
		defer rig.c.mu.Unlock()
		return rig.c.out.(*batchWriter).lastFast
	}
	var want []string
	var first time.Time
	for k := 1; k <= 10; k++ {
		f := stamped(k, 100)
		want = append(want, string(f))
		if !rig.c.SendShared(f) {
			t.Fatalf("frame %d refused", k)
		}
		if k == 1 {
			if first = lastFast(); first.IsZero() || writing(rig.c) {
				t.Fatal("the first frame to an idle client was not written at once")
			}
		}
	}
	if !lastFast().Equal(first) {
		t.Fatal("a frame within the gap of a fast write was written fast too")
	}
	if got := rig.readFrames(t, len(want)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("read %q, want %q", got, want)
	}
}
