package socket

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
)

// Client is one WebSocket connection: a session subscriber. Writes happen on a
// goroutine that runs only while something waits to be written (frames, a ping, the
// close), so a tab left open costs no goroutine and no stack for its writes; there is
// never more than one, so writes stay in order. The session only ever queues frames,
// and a full queue drops the client instead of slowing the session. The queue is a
// slice that grows only while frames wait (a short one is reused: recycle); it is
// bounded in frames and in bytes (a snapshot of 128 processes is 1.5 MB, so 256 of
// them would be 400 MB for one tab that never reads), and a snapshot replaces an
// older one nobody has read yet. Frames found queued together go out in one write
// (batch.go).
//
// A shared frame (SendShared) sent to a client with nothing queued and no writer
// running is written at once by the sender, with one non-blocking system call
// (batchConn.tryWrite): a lecture's fan-out to thousands of followers then starts no
// goroutine, sets no deadline and wakes nobody per frame and per follower. What the
// socket does not take at once is the writer's to finish, before anything queued
// after it, under the write deadline as ever: a follower that stops reading fills its
// socket buffer, then its queue, and is dropped as before. Frames that come in a burst
// (a catch-up on joining, several in a row) are better written together: after a
// fast write, the next one within fastGap is queued, and the writer takes it and
// whatever follows in one write (batch.go). A fan-out's frames to one follower are a
// whole fan-out apart.
type Client struct {
	conn       *websocket.Conn
	batch      *batchConn    // conn's network connection, when it can hold writes (batch.go)
	flusher    func()        // c.flush, the writing goroutine's function
	maxQueue   int           // frames queued at once before the client counts as too slow
	maxBytes   int           // bytes queued or being written before it counts as too slow
	ping, wait time.Duration // between pings; deadline of each write
	gone       chan struct{} // closed once the connection is closed
	once       sync.Once
	slowOnce   sync.Once // a client is counted slow once, however it was found out

	mu         sync.Mutex
	quit       bool // CloseWith was called: nothing more is queued
	queue      []queued
	spare      []queued // the queue last written, emptied, for the next frames (recycle)
	bytes      int      // of the frames queued and of those the writer holds, until written
	started    bool     // Start was called: writes may begin
	writing    bool     // the writing goroutine runs (it stays true once the connection is closed)
	pingDue    bool
	pinger     *time.Timer
	closeCode  int
	closeText  string
	peerClosed bool      // the reader answered the peer's close frame: nothing more is written past gorilla
	lastFast   time.Time // of the last fast write
	fastGap    time.Duration
	drain      bool // write what is queued before closing (not for a client too slow to take it)

	// Set by Hub.NewClient (hub.go): metrics, rate limits, shutdown.
	obs     *ops.Metrics
	limit   *ratelimit.Conn
	release func() // when the connection has ended
}

func newClient(conn *websocket.Conn, queue, maxBytes int, ping, wait time.Duration) *Client {
	c := &Client{conn: conn, maxQueue: queue, maxBytes: maxBytes, ping: ping, wait: wait,
		gone: make(chan struct{}), closeCode: websocket.CloseNormalClosure, fastGap: fastGap}
	if conn != nil {
		c.batch, _ = conn.UnderlyingConn().(*batchConn) // made by Hub.Upgrade
	}
	c.flusher = c.flush // once: "go c.flush()" would allocate its closure at every start
	return c
}

// Start lets writes begin (what was queued or closed before goes out now) and pings
// the client every c.ping: its pongs keep the read deadline alive.
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.started = true
	c.pinger = time.AfterFunc(c.ping, func() {
		c.mu.Lock()
		c.pingDue = true
		c.kick()
		c.mu.Unlock()
	})
	if len(c.queue) > 0 || c.closing() {
		c.kick()
	}
}

// kick starts the writing goroutine unless it runs. Call with c.mu held.
func (c *Client) kick() {
	if c.started && !c.writing {
		c.writing = true
		go c.flusher()
	}
}

// closing reports whether CloseWith was called. Call with c.mu held. (A flag under the
// lock the caller holds anyway: a channel's select cost 1 % of a server's CPU in a
// 5,000-follower fan-out.)
func (c *Client) closing() bool { return c.quit }

// queued is a frame waiting to be written, with its type when the session delivered
// it (protocol.Frame's Type): what supersede goes by. Frames sent as bytes (errors,
// a lecture's stamped frames) have none and are never superseded.
type queued struct {
	frame []byte
	typ   string
	pm    *websocket.PreparedMessage // frame, framed once for every client that shares it (SendShared); or nil
	wire  []byte                     // pm's bytes on the wire, for the fast path (prepared.go); or nil
}

// Send queues an encoded frame for the client; false when the client is gone or was
// just dropped as too slow.
func (c *Client) Send(frame []byte) bool { return c.enqueue(queued{frame: frame}) }

// Deliver implements session.Subscriber: a page takes the frame's bytes, and its type
// says whether a newer snapshot makes it moot.
func (c *Client) Deliver(f protocol.Encoded) bool {
	q := queued{frame: f.JSON}
	if f.Frame != nil {
		q.typ = f.Frame.Type()
	}
	return c.enqueue(q)
}

func (c *Client) enqueue(q queued) bool {
	frame := q.frame
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing() {
		return false
	}
	if q.typ == "snapshot" {
		c.supersede()
	}
	// One frame always fits an empty queue, however large: the bound is on what
	// waits, not on what the session may send.
	if len(c.queue) >= c.maxQueue || (c.bytes > 0 && c.maxBytes > 0 && c.bytes+len(frame) > c.maxBytes) {
		c.slow()
		c.closeLocked(websocket.CloseTryAgainLater, protocol.CloseSlow, false)
		return false
	}
	if q.wire != nil && c.started && !c.writing && len(c.queue) == 0 && !c.pingDue && !c.peerClosed && c.batch != nil && c.apart() {
		if ok, rest := c.batch.tryWrite(q.wire); ok {
			if rest {
				c.kick() // the writer finishes the frame, under its deadline
			}
			return true
		}
	}
	c.queue = append(c.queue, q)
	c.bytes += len(frame)
	c.kick()
	return true
}

// fastGap is how long after a fast write the next frame counts as part of a burst
// and is queued (Client.fastGap; tests set their own). Sending one frame to each of
// 5,000 followers takes tens of milliseconds; a catch-up's frames come microseconds
// apart.
const fastGap = time.Millisecond

// apart reports whether the last fast write was at least c.fastGap ago, and if so
// counts this one as the last. Call with c.mu held.
func (c *Client) apart() bool {
	if c.fastGap <= 0 {
		return true
	}
	now := time.Now()
	if now.Sub(c.lastFast) < c.fastGap {
		return false
	}
	c.lastFast = now
	return true
}

// peerClosing wraps the reader's close handler (ReadLoop): once the peer's close
// frame is answered, the fast path writes nothing more past gorilla, which refuses
// its own writes from then on.
func (c *Client) peerClosing(answer func(int, string) error) func(int, string) error {
	return func(code int, text string) error {
		c.mu.Lock()
		c.peerClosed = true
		c.mu.Unlock()
		return answer(code, text)
	}
}

// supersede drops, before a new snapshot is queued, the newest unsent snapshot and the
// events and state frames queued after it: the new snapshot is the whole state they
// led to. Other frames (errors, lecture and question frames, hello) stay, in order.
// Call with c.mu held.
func (c *Client) supersede() {
	last := -1
	for k, q := range c.queue {
		if q.typ == "snapshot" {
			last = k
		}
	}
	if last < 0 {
		return
	}
	kept := c.queue[:last]
	for _, q := range c.queue[last:] {
		switch q.typ {
		case "snapshot", "events", "state":
			c.bytes -= len(q.frame)
			continue
		}
		kept = append(kept, q)
	}
	clear(c.queue[len(kept):])
	c.queue = kept
}

// slow counts the client in playground_slow_clients_dropped_total: its queue passed a
// bound, or a write to it reached its deadline (after a full queue the writer may
// still be blocked on the same socket).
func (c *Client) slow() { c.slowOnce.Do(func() { c.obs.SlowClient() }) }

// Close implements session.Subscriber: the session dropped us or ended.
func (c *Client) Close() { c.CloseWith(websocket.CloseGoingAway, protocol.CloseSessionEnded, true) }

// CloseWith closes the connection with code and text, after what is queued if drain.
// The first call decides; wait for c.gone to know the connection is closed.
func (c *Client) CloseWith(code int, text string, drain bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(code, text, drain)
}

func (c *Client) closeLocked(code int, text string, drain bool) {
	c.once.Do(func() {
		c.closeCode, c.closeText, c.drain = code, text, drain
		c.quit = true
		c.kick()
	})
}

// flush is the writing goroutine: it writes what is queued, and the ping when due,
// each under a deadline, until nothing waits; after CloseWith it sends the close
// frame and closes the connection, which also ends the reader.
func (c *Client) flush() {
	for {
		c.mu.Lock()
		frames := c.queue
		c.queue, c.spare = c.spare, nil
		ping := c.pingDue
		c.pingDue = false
		closing := c.closing()
		rest := c.batch != nil && c.batch.hasRest.Load() // a frame the fast path began
		if len(frames) == 0 && !ping && !closing && !rest {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if closing {
			c.finish(frames)
			return
		}
		if err := c.write(frames, ping); err != nil {
			// gorilla hides the deadline behind its own net.Error: ask for the timeout.
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				c.slow() // a viewer that stopped reading: as slow as a full queue
			}
			c.fail()
			return
		}
		if ping {
			c.pinger.Reset(c.ping)
		}
		c.recycle(frames)
	}
}

// write writes frames, then the ping when one is due, in batches of up to batchBytes
// (batch.go): when the connection can hold its writes, each batch is one system call
// under one deadline. A frame larger than a batch goes alone.
func (c *Client) write(frames []queued, ping bool) error {
	if c.batch != nil && c.batch.hasRest.Load() {
		if err := c.batch.flushPending(time.Now().Add(c.wait)); err != nil {
			return err
		}
	}
	for i := 0; i < len(frames) || ping; {
		j, size := i, 0
		for j < len(frames) && (j == i || size+len(frames[j].frame) <= batchBytes) {
			size += len(frames[j].frame)
			j++
		}
		withPing := ping && j == len(frames)
		writes := j - i
		if withPing {
			writes++
		}
		held := c.batch != nil && writes > 1 && size <= batchBytes
		_ = c.conn.SetWriteDeadline(time.Now().Add(c.wait))
		if held {
			c.batch.hold()
		}
		err := c.writeEach(frames[i:j], withPing)
		if held {
			if rerr := c.batch.release(); err == nil {
				err = rerr
			}
		}
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.bytes -= size
		c.mu.Unlock()
		i, ping = j, ping && !withPing
	}
	return nil
}

// writeEach writes frames as text messages, then a ping if ping.
func (c *Client) writeEach(frames []queued, ping bool) error {
	for _, q := range frames {
		var err error
		if q.pm != nil {
			err = c.conn.WritePreparedMessage(q.pm)
		} else {
			err = c.conn.WriteMessage(websocket.TextMessage, q.frame)
		}
		if err != nil {
			return err
		}
	}
	if ping {
		return c.conn.WriteMessage(websocket.PingMessage, nil)
	}
	return nil
}

// spareFrames bounds the queue kept for reuse: a follower that took a long catch-up
// does not keep its length for the rest of the lecture.
const spareFrames = 16

// recycle keeps the queue just written, emptied, as the next one: a follower's steady
// stream of frames then queues without allocating.
func (c *Client) recycle(frames []queued) {
	if cap(frames) > spareFrames {
		return
	}
	clear(frames)
	c.mu.Lock()
	c.spare = frames[:0]
	c.mu.Unlock()
}

// finish writes what is left (when draining) and the close frame, then ends.
func (c *Client) finish(frames []queued) {
	defer c.end()
	c.mu.Lock()
	msg := websocket.FormatCloseMessage(c.closeCode, c.closeText)
	drain := c.drain
	c.mu.Unlock()
	deadline := time.Now().Add(c.wait)
	_ = c.conn.SetWriteDeadline(deadline)
	if drain {
		for _, q := range frames {
			if err := c.conn.WriteMessage(websocket.TextMessage, q.frame); err != nil {
				return
			}
		}
	}
	_ = c.conn.WriteControl(websocket.CloseMessage, msg, deadline)
}

// fail ends a connection that could not be written to: nothing more is queued (the
// writing goroutine is this one, so CloseWith starts no other).
func (c *Client) fail() {
	c.CloseWith(websocket.CloseAbnormalClosure, "", false)
	c.end()
}

// Stop closes the connection normally after what is queued and waits until it is
// closed: the end of every socket handler.
func (c *Client) Stop() {
	c.CloseWith(websocket.CloseNormalClosure, "", true)
	<-c.gone
}

func (c *Client) end() {
	c.pinger.Stop()
	c.conn.Close()
	if c.release != nil {
		c.release()
	}
	close(c.gone)
}
