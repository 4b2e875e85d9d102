package socket

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
)

// writeCounter counts the writes that reach the network connection under a batchConn.
type writeCounter struct {
	net.Conn
	writes atomic.Int64
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	return w.Conn.Write(p)
}

// batchRig is a client of the hub's kind (its connection made by Hub.Upgrade), not yet
// started, and the socket that reads it; the writes to the network are counted.
type batchRig struct {
	c       *Client
	writes  *writeCounter
	reader  *websocket.Conn
	mu      sync.Mutex
	pings   []int // how many messages the reader had read at each ping
	msgRead int
}

// serveClients is a test server whose handler upgrades each request through a Hub,
// makes its Client with makeClient (nil: the connection is refused and closed), hands
// it over on the channel and holds the request until the client is gone.
func serveClients(t *testing.T, makeClient func(conn *websocket.Conn) *Client) (*httptest.Server, chan *Client) {
	t.Helper()
	h := NewHub(nil, Options{Logger: slog.New(slog.DiscardHandler)})
	h.upgrader.CheckOrigin = func(*http.Request) bool { return true }
	clients := make(chan *Client, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, ok := h.Upgrade(w, r)
		if !ok {
			return
		}
		c := makeClient(conn)
		if c == nil {
			conn.Close()
			return
		}
		clients <- c
		<-c.gone
	}))
	return ts, clients
}

func newBatchRig(t *testing.T) *batchRig {
	t.Helper()
	ts, clients := serveClients(t, func(conn *websocket.Conn) *Client {
		bc, ok := conn.UnderlyingConn().(*batchConn)
		if !ok {
			t.Errorf("Hub.Upgrade made a connection of type %T, not a batchConn", conn.UnderlyingConn())
			return nil
		}
		wc := &writeCounter{Conn: bc.Conn}
		bc.Conn = wc // before the first write
		c := newClient(conn, 256, 0, time.Hour, 10*time.Second)
		if batchOf(c) != bc {
			t.Error("the client does not batch through its batchConn")
		}
		return c
	})
	reader, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rig := &batchRig{c: testwait.Recv(t, "the server's client", clients), reader: reader}
	rig.writes = batchOf(rig.c).Conn.(*writeCounter)
	reader.SetPingHandler(func(string) error {
		rig.mu.Lock()
		rig.pings = append(rig.pings, rig.msgRead)
		rig.mu.Unlock()
		return nil
	})
	t.Cleanup(func() {
		rig.c.CloseWith(websocket.CloseNormalClosure, "", false)
		<-rig.c.gone
		reader.Close()
		ts.Close()
	})
	return rig
}

// read reads n messages and returns their bytes.
func (r *batchRig) read(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	_ = r.reader.SetReadDeadline(time.Now().Add(10 * time.Second))
	for range n {
		_, b, err := r.reader.ReadMessage()
		if err != nil {
			t.Fatalf("after %d of %d frames: %v", len(got), n, err)
		}
		r.mu.Lock()
		r.msgRead++
		r.mu.Unlock()
		got = append(got, string(b))
	}
	return got
}

// stamped is frame k of a follower's stream, padded to size bytes.
func stamped(k, size int) []byte {
	f := protocol.Stamp(uint64(k), []byte(fmt.Sprintf(`{"type":"events","step":%d,"pad":""}`, k)))
	if pad := size - len(f); pad > 0 {
		f = protocol.Stamp(uint64(k), []byte(fmt.Sprintf(`{"type":"events","step":%d,"pad":"%s"}`, k, strings.Repeat("x", pad))))
	}
	return f
}

// Frames found queued together are written in one batch: the reader gets every one,
// in order, once; so does the frame sent after them. Small frames (a follower's
// catch-up, a step's frames behind a slow writer) take one write to the network,
// with the ping that was due; frames larger than a batch still arrive whole.
func TestQueuedFramesAreWrittenInOneBatch(t *testing.T) {
	tests := []struct {
		name   string
		frames int
		size   int
		ping   bool
		writes int64 // to the network for the queued frames; -1: not counted (gorilla splits large messages)
		shared bool  // sent as a lecture's frames are (SendShared: prepared once)
	}{
		{"five small frames", 5, 100, false, 1, false},
		{"five shared frames", 5, 100, false, 1, true},
		{"a catch-up of 200 frames", 200, 300, false, 1, false}, // 60 KB: under one batch
		{"a catch-up of 200 shared frames", 200, 300, false, 1, true},
		{"frames and a due ping", 3, 100, true, 1, false},
		{"one frame alone", 1, 100, false, 1, false},
		{"frames larger together than a batch", 6, 30 << 10, false, -1, false},
		{"shared frames larger together than a batch", 6, 12 << 10, false, -1, true},
		{"a frame larger than a batch between small ones", 3, 0, false, -1, false}, // sizes below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := newBatchRig(t)
			var want []string
			for k := 1; k <= tt.frames; k++ {
				size := tt.size
				if tt.size == 0 && k == 2 {
					size = batchBytes + 1000
				}
				f := stamped(k, size)
				want = append(want, string(f))
				send := rig.c.Send
				if tt.shared {
					send = rig.c.SendShared
				}
				if !send(f) {
					t.Fatalf("frame %d refused", k)
				}
			}
			if tt.ping {
				rig.c.mu.Lock()
				rig.c.pingDue = true
				rig.c.mu.Unlock()
			}
			rig.c.Start() // the writer finds every frame queued
			if got := rig.read(t, tt.frames); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("read %d frames:\n%.2000s\nwant %d:\n%.2000s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
			}
			testwait.For(t, "the writer done with the batch", func() bool { return !writing(rig.c) })
			rig.c.mu.Lock()
			queued := rig.c.queue.bytes
			rig.c.mu.Unlock()
			if queued != 0 {
				t.Fatalf("%d bytes still counted as queued after the batch", queued)
			}
			if n := rig.writes.writes.Load(); tt.writes >= 0 && n != tt.writes {
				t.Fatalf("%d frames took %d writes to the network, want %d", tt.frames, n, tt.writes)
			}
			// It resumes: the next frame comes next, alone.
			before := rig.writes.writes.Load()
			next := stamped(tt.frames+1, 100)
			if !rig.c.Send(next) {
				t.Fatal("the frame after the batch was refused")
			}
			if got := rig.read(t, 1); got[0] != string(next) {
				t.Fatalf("after the batch read %s, want %s", got[0], next)
			}
			if n := rig.writes.writes.Load() - before; n != 1 {
				t.Fatalf("the frame after the batch took %d writes, want 1", n)
			}
			rig.mu.Lock()
			pings := rig.pings
			rig.mu.Unlock()
			if tt.ping && (len(pings) != 1 || pings[0] != tt.frames) {
				t.Fatalf("pings seen after %v frames, want one after %d (behind the batch)", pings, tt.frames)
			}
		})
	}
}

// A held batch that the network does not take before the deadline drops the client
// and counts it slow, as a single write does (TestWriteDeadlineDropIsCounted).
func TestHeldBatchPastItsDeadlineFails(t *testing.T) {
	server, client := net.Pipe() // nobody reads client: every write blocks
	defer client.Close()
	b := &batchConn{Conn: server}
	b.hold()
	if n, err := b.Write([]byte("frame one")); n != 9 || err != nil {
		t.Fatalf("a held write returned %d, %v", n, err)
	}
	if err := b.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	err := b.release()
	if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("release past the deadline returned %v, want a timeout", err)
	}
	// Nothing is held any more: the next write goes straight to the network.
	if _, err := b.Write([]byte("x")); err == nil {
		t.Fatal("a write after the failed batch did not reach the network")
	}
}

// A frame sent to many clients as the same bytes is framed once: every client gets the
// same prepared message for it; bytes equal to it but elsewhere in memory, or a frame
// too large to keep, are not taken for it; the cache forgets a frame once
// preparedSlots newer ones came.
func TestSharedFramesArePreparedOnce(t *testing.T) {
	var p preparedCache
	get := func(frame []byte) *websocket.PreparedMessage {
		pm, wire := p.get(frame)
		if (pm == nil) != (wire == nil) {
			t.Fatalf("a frame has a prepared message %v but wire bytes %v", pm != nil, wire != nil)
		}
		return pm
	}
	frame := stamped(1, 100)
	first := get(frame)
	if first == nil || get(frame) != first {
		t.Fatal("the same frame was prepared twice")
	}
	if twin := get(append([]byte(nil), frame...)); twin == nil || twin == first {
		t.Fatal("a copy of the frame was taken for the frame itself")
	}
	if get(stamped(2, preparedMax+1)) != nil || get(nil) != nil {
		t.Fatal("a frame larger than preparedMax, or an empty one, was prepared")
	}
	for k := range preparedSlots {
		if get(stamped(k+3, 100)) == nil {
			t.Fatalf("frame %d not prepared", k+3)
		}
	}
	if again := get(frame); again == nil || again == first {
		t.Fatal("a frame older than every slot was still remembered")
	}
}
