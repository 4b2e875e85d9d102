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

// Client is one WebSocket connection: a session's subscriber, a lecture's follower or
// presenter. It is gorilla/websocket's chat example client: the session only ever
// queues frames (sendQueue, its send channel), a writing goroutine (writePump) writes
// them under a deadline with a ping when one is due, a full queue drops the client
// instead of slowing the session, and the reader (Hub.ReadLoop, its readPump) keeps
// the connection alive with pongs. Two things differ, each for thousands of idle tabs
// or followers:
//
//   - the writePump runs only while something waits to be written (frames, a ping,
//     the close), so a tab left open costs no goroutine and no stack for its writes;
//     there is never more than one, so writes stay in order;
//   - how frames reach the connection is a frameWriter's (writer.go): gorilla's write
//     per message, or, for a connection Hub.Upgrade made, frames gathered into one
//     system call per batch and a shared frame to an idle client written at once by
//     its sender (batch.go, the fan-out's fast path).
type Client struct {
	conn       *websocket.Conn
	out        frameWriter   // how frames reach conn
	pump       func()        // c.writePump, made once: "go c.writePump()" would allocate its closure at every start
	ping, wait time.Duration // between pings; deadline of each write
	gone       chan struct{} // closed once the connection is closed
	slowOnce   sync.Once     // a client is counted slow once, however it was found out

	mu       sync.Mutex
	phase    phase
	writer   writerState
	closeReq *closeRequest // CloseWith's, the first call's; nil while the client is open
	queue    sendQueue
	pingDue  bool
	pinger   *time.Timer

	// Set by Hub.NewClient (hub.go): metrics, rate limits, shutdown.
	obs     *ops.Metrics
	limit   *ratelimit.Conn
	release func() // when the connection has ended
}

// phase is how far a client's connection has come.
type phase uint8

const (
	// handshaking: its handler made it and has not called Start yet (it checks the
	// request, or refuses it): frames queue, nothing is written.
	handshaking phase = iota
	// live: started. The writePump writes what is queued, and a shared frame to an
	// idle client may be written at once (frameWriter.writeNow).
	live
	// peerClosed: live, and the reader answered the peer's close frame. gorilla refuses
	// our writes from now on; the fast path, which writes past gorilla, writes nothing.
	peerClosed
)

// writerState is whether the writePump runs.
type writerState uint8

const (
	writerIdle    writerState = iota // nothing waits to be written: none runs
	writerRunning                    // one runs; what is queued meanwhile is its to write
	writerEnded                      // the connection ended: none starts again
)

// closeRequest is how CloseWith asked the connection to close.
type closeRequest struct {
	code  int
	text  string
	drain bool // write what is queued first (not for a client too slow to take it)
}

func newClient(conn *websocket.Conn, queue, maxBytes int, ping, wait time.Duration) *Client {
	c := &Client{conn: conn, out: writerFor(conn), ping: ping, wait: wait, gone: make(chan struct{}),
		queue: sendQueue{maxFrames: queue, maxBytes: maxBytes}}
	c.pump = c.writePump
	return c
}

// Start lets writes begin (what was queued or closed before goes out now) and pings
// the client every c.ping: its pongs keep the read deadline alive (Hub.ReadLoop).
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == handshaking {
		c.phase = live
	}
	c.pinger = time.AfterFunc(c.ping, func() {
		c.mu.Lock()
		c.pingDue = true
		c.startWriter()
		c.mu.Unlock()
	})
	if !c.queue.empty() || c.closing() {
		c.startWriter()
	}
}

// startWriter starts the writePump unless it runs, may not yet (before Start) or
// may not again (the connection ended). Call with c.mu held.
func (c *Client) startWriter() {
	if c.phase != handshaking && c.writer == writerIdle {
		c.writer = writerRunning
		go c.pump()
	}
}

// closing reports whether CloseWith was called: nothing more is queued. Call with c.mu
// held. (A field under the lock the caller holds anyway: a channel's select cost 1 %
// of a server's CPU in a 5,000-follower fan-out.)
func (c *Client) closing() bool { return c.closeReq != nil }

// idle reports whether nothing is queued or being written and no ping is due, on a
// live connection: a frame may then go out at once (frameWriter.writeNow) without
// passing anything. Call with c.mu held.
func (c *Client) idle() bool {
	return c.phase == live && c.writer == writerIdle && c.queue.empty() && !c.pingDue
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing() {
		return false
	}
	if q.typ == "snapshot" {
		c.queue.supersede()
	}
	if c.queue.full(len(q.frame)) {
		c.slow()
		c.closeLocked(websocket.CloseTryAgainLater, protocol.CloseSlow, false)
		c.cutWrite()
		return false
	}
	if c.idle() {
		if ok, rest := c.out.writeNow(q); ok {
			if rest {
				c.startWriter() // the writePump finishes the frame, under its deadline
			}
			return true
		}
	}
	c.queue.push(q)
	c.startWriter()
	return true
}

// cutWrite ends a write the writer may be blocked in on a socket the client no longer
// reads: a client refused as too slow is dropped now, not when that write's deadline
// passes (the close frame, if the writer gets to it, sets a deadline of its own).
func (c *Client) cutWrite() {
	if c.conn != nil {
		_ = c.conn.UnderlyingConn().SetWriteDeadline(time.Now())
	}
}

// peerClosing wraps the reader's close handler (Hub.ReadLoop): once the peer's close
// frame is answered, the fast path writes nothing more past gorilla, which refuses
// its own writes from then on.
func (c *Client) peerClosing(answer func(int, string) error) func(int, string) error {
	return func(code int, text string) error {
		c.mu.Lock()
		if c.phase == live {
			c.phase = peerClosed
		}
		c.mu.Unlock()
		return answer(code, text)
	}
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
	if c.closing() {
		return
	}
	c.closeReq = &closeRequest{code: code, text: text, drain: drain}
	c.startWriter()
}

// writePump is the writing goroutine: it writes what is queued and the ping when
// due, each batch under a write deadline, until nothing waits, and returns; the next
// frame starts it again (startWriter). After CloseWith it writes the close frame and
// closes the connection, which also ends the reader.
func (c *Client) writePump() {
	for {
		c.mu.Lock()
		frames := c.queue.take()
		ping := c.pingDue
		c.pingDue = false
		closeReq := c.closeReq
		if len(frames) == 0 && !ping && closeReq == nil && !c.out.unfinished() {
			c.writer = writerIdle
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if closeReq != nil {
			c.finish(frames, closeReq)
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
		c.mu.Lock()
		c.queue.recycle(frames)
		c.mu.Unlock()
	}
}

// write writes frames, then the ping when one is due, in batches of up to batchBytes,
// each under a write deadline of its own (a frame larger than a batch goes alone);
// the bytes of a batch leave the queue's bound once written. A frame the fast path
// began goes before them all (frameWriter.writeBatch).
func (c *Client) write(frames []queued, ping bool) error {
	for {
		n, size := 0, 0
		for n < len(frames) && (n == 0 || size+len(frames[n].frame) <= batchBytes) {
			size += len(frames[n].frame)
			n++
		}
		withPing := ping && n == len(frames)
		if err := c.out.writeBatch(frames[:n], withPing, time.Now().Add(c.wait)); err != nil {
			return err
		}
		c.mu.Lock()
		c.queue.written(size)
		c.mu.Unlock()
		frames, ping = frames[n:], ping && !withPing
		if len(frames) == 0 && !ping {
			return nil
		}
	}
}

// finish writes what is left (when draining) and the close frame, then ends.
func (c *Client) finish(frames []queued, req *closeRequest) {
	defer c.end()
	deadline := time.Now().Add(c.wait)
	_ = c.conn.SetWriteDeadline(deadline)
	if req.drain {
		for _, q := range frames {
			if err := c.conn.WriteMessage(websocket.TextMessage, q.frame); err != nil {
				return
			}
		}
	}
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(req.code, req.text), deadline)
}

// fail ends a connection that could not be written to: nothing more is queued (the
// writePump is this goroutine, so CloseWith starts no other).
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
	c.mu.Lock()
	c.writer = writerEnded
	c.mu.Unlock()
	if c.release != nil {
		c.release()
	}
	close(c.gone)
}
