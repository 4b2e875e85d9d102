// Package socket is the WebSocket endpoint of a live session (/ws/{id},
// docs/protocol.md): the connection's writer, its read loop and limits, and the
// decoding of the commands a page sends. Lecture sockets (web/lecturehttp) are built
// from the same pieces.
package socket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/runs"
)

// sameOrigin accepts a WebSocket handshake only from a page of this very server: the
// Origin header must be present and name this host. Browsers always send it, so a
// missing one is not a browser following our page.
func sameOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// Client is one WebSocket connection: a session subscriber. Writes happen on a
// goroutine that runs only while something waits to be written (frames, a ping, the
// close), so a tab left open costs no goroutine and no stack for its writes; there is
// never more than one, so writes stay in order. The session only ever queues frames,
// and a full queue drops the client instead of slowing the session. The queue is a
// slice that grows only while frames wait; it is bounded in frames and in bytes (a
// snapshot of 128 processes is 1.5 MB, so 256 of them would be 400 MB for one tab
// that never reads), and a snapshot replaces an older one nobody has read yet.
type Client struct {
	conn       *websocket.Conn
	maxQueue   int           // frames queued at once before the client counts as too slow
	maxBytes   int           // bytes queued or being written before it counts as too slow
	ping, wait time.Duration // between pings; deadline of each write
	quit       chan struct{} // closed by CloseWith: nothing more is queued
	gone       chan struct{} // closed once the connection is closed
	once       sync.Once
	slowOnce   sync.Once // a client is counted slow once, however it was found out

	mu        sync.Mutex
	queue     []queued
	bytes     int  // of the frames queued and of those the writer holds, until written
	started   bool // Start was called: writes may begin
	writing   bool // the writing goroutine runs (it stays true once the connection is closed)
	pingDue   bool
	pinger    *time.Timer
	closeCode int
	closeText string
	drain     bool // write what is queued before closing (not for a client too slow to take it)

	// Set by Hub.NewClient (hub.go): metrics, rate limits, shutdown.
	obs     *ops.Metrics
	limit   *ratelimit.Conn
	release func() // when the connection has ended
}

func newClient(conn *websocket.Conn, queue, maxBytes int, ping, wait time.Duration) *Client {
	return &Client{conn: conn, maxQueue: queue, maxBytes: maxBytes, ping: ping, wait: wait, quit: make(chan struct{}),
		gone: make(chan struct{}), closeCode: websocket.CloseNormalClosure}
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
		go c.flush()
	}
}

func (c *Client) closing() bool {
	select {
	case <-c.quit:
		return true
	default:
		return false
	}
}

// queued is a frame waiting to be written, with its type when the session delivered
// it (protocol.Frame's Type): what supersede goes by. Frames sent as bytes (errors,
// a lecture's stamped frames) have none and are never superseded.
type queued struct {
	frame []byte
	typ   string
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
	c.queue = append(c.queue, q)
	c.bytes += len(frame)
	c.kick()
	return true
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
		close(c.quit)
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
		c.queue = nil
		ping := c.pingDue
		c.pingDue = false
		closing := c.closing()
		if len(frames) == 0 && !ping && !closing {
			c.writing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if closing {
			c.finish(frames)
			return
		}
		for _, q := range frames {
			frame := q.frame
			_ = c.conn.SetWriteDeadline(time.Now().Add(c.wait))
			if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
				// gorilla hides the deadline behind its own net.Error: ask for the timeout.
				if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
					c.slow() // a viewer that stopped reading: as slow as a full queue
				}
				c.fail()
				return
			}
			c.mu.Lock()
			c.bytes -= len(frame)
			c.mu.Unlock()
		}
		if ping {
			_ = c.conn.SetWriteDeadline(time.Now().Add(c.wait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				c.fail()
				return
			}
			c.pinger.Reset(c.ping)
		}
	}
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

// ServeSession serves /ws/{id}: the socket of a page on its live session.
func (h *Hub) ServeSession(w http.ResponseWriter, r *http.Request) {
	done := h.Track()
	conn, ok := h.Upgrade(w, r)
	if !ok {
		done()
		return // the upgrader has answered (403 for a foreign origin, 400 for a bad handshake)
	}
	sess, ok := h.sessions.Get(chi.URLParam(r, "id"))
	if !ok {
		defer done()
		wait := h.opts.WriteWait
		_ = conn.SetWriteDeadline(time.Now().Add(wait))
		closing := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, protocol.CloseNoSession)
		if h.opts.Ready() {
			// Tell the page why, so it can start a new session.
			_ = conn.WriteMessage(websocket.TextMessage, protocol.ErrorFrame(0, protocol.CodeGone, "this session has ended; reload the page for a new one"))
		} else {
			// Shutting down ended the session: say so, as to every other socket.
			closing = websocket.FormatCloseMessage(websocket.CloseGoingAway, protocol.CloseShuttingDown)
		}
		_ = conn.WriteControl(websocket.CloseMessage, closing, time.Now().Add(wait))
		conn.Close()
		return
	}
	c := h.NewClient(r, conn, h.opts.SendQueue)
	// The connection is served by a goroutine of its own and this handler returns:
	// net/http's per-request state (its write buffers, the request, this goroutine's
	// grown stack) is freed instead of being held for hours by a tab left open.
	go func() {
		defer done()
		defer h.containWS(c)
		h.serveWS(conn, c, sess)
	}()
}

// containWS turns a panic while serving a socket into the close of that socket, as
// the router's recoverer does for a request: the server and the session carry on.
func (h *Hub) containWS(c *Client) {
	if v := recover(); v != nil {
		h.opts.Metrics.Panicked("http")
		h.opts.Logger.Error("a WebSocket handler panicked; that connection closed", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		c.CloseWith(websocket.CloseInternalServerErr, protocol.CloseInternal, false)
	}
}

// serveWS is the life of one session socket: attach, read commands, detach.
func (h *Hub) serveWS(conn *websocket.Conn, c *Client, sess *session.Session) {
	c.Start()
	defer func() {
		sess.Detach(c)
		c.Stop()
	}()
	if !h.Attach(c, sess) {
		return
	}
	h.ReadLoop(conn, c, func(data []byte) bool {
		_, ok := RunCommand(c, sess, data)
		return ok
	})
}

// ReadLoop reads text frames with the connection's limits and hands each to handle
// until the connection ends or handle returns false.
//
// A tab left open keeps this goroutine parked in a read for hours, with the stack it
// grew to. Parsing a frame (encoding/json) grows a stack to 8 KiB, and a stack parked
// this deep in the network poller never shrinks below that at a collection (the
// runtime halves only stacks using under a quarter of theirs). So each frame is
// handled on a goroutine of its own, waited for: frames stay in order, and the reader
// keeps the few KiB a read needs (docs/benchmarks.md, "Resident memory per idle session").
func (h *Hub) ReadLoop(conn *websocket.Conn, c *Client, handle func([]byte) bool) {
	conn.SetReadLimit(h.opts.ReadLimit)
	alive := func() { _ = conn.SetReadDeadline(time.Now().Add(h.opts.PongWait)) }
	alive()
	conn.SetPongHandler(func(string) error { alive(); return nil })
	for {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			return
		}
		alive()
		if c.limited() { // over its rate: dropped unread (a rate-limited error, or 1008 on abuse)
			continue
		}
		if kind != websocket.TextMessage {
			c.Send(protocol.ErrorFrame(0, protocol.CodeBadFrame, "frames are JSON text; binary frames are not part of the protocol"))
			continue
		}
		if !onOwnStack(handle, data) {
			return
		}
	}
}

// onOwnStack runs handle(data) on a new goroutine and waits for it. A panic there is
// raised again here, with the stack it came from, so the socket's own containment
// (containWS, net/http's) still applies.
func onOwnStack(handle func([]byte) bool, data []byte) bool {
	type result struct {
		ok       bool
		panicked any
		stack    []byte
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{panicked: v, stack: debug.Stack()}
			}
		}()
		done <- result{ok: handle(data)}
	}()
	r := <-done
	if r.panicked != nil {
		panic(fmt.Sprintf("%v [in a frame handler: %s]", r.panicked, r.stack))
	}
	return r.ok
}

// Attach subscribes c to sess, or tells it why not and closes it (a viewer's or the
// presenter's socket). Kept out of serveWS, whose frame stays under the reader for
// the connection's whole life.
func (h *Hub) Attach(c *Client, sess *session.Session) bool {
	err := sess.Attach(c)
	if err == nil {
		return true
	}
	code := protocol.CodeGone
	if !errors.Is(err, session.ErrClosed) {
		code = protocol.CodeBusy
		h.opts.Metrics.Refused("viewers")
	}
	c.Send(protocol.ErrorFrame(0, code, err.Error()))
	c.CloseWith(websocket.CloseTryAgainLater, code, true)
	return false
}

// RunCommand parses one client frame and hands it to the session; errors go back to
// the client as error frames. It reports false once the session has ended.
func RunCommand(c *Client, sess *session.Session, data []byte) (session.Command, bool) {
	cmd, ferr := c.ParseFrame(data)
	if ferr != nil {
		c.Send(ferr.Frame())
		return cmd, true
	}
	if err := sess.Do(c, cmd); err != nil {
		c.Send(protocol.ErrorFrame(cmd.Ref, protocol.CodeGone, "this session has ended; reload the page for a new one"))
		return cmd, false
	}
	return cmd, true
}

// FrameError is a frame the server cannot act on.
type FrameError struct {
	ref       int64
	code, msg string
	line      int // of the scenario's source, when the error is in it
}

// Frame is the error frame that tells the client.
func (e *FrameError) Frame() []byte { return protocol.ErrorFrameAt(e.ref, e.code, e.msg, e.line) }

// simpleKind is the command of a frame that carries nothing but its type.
func simpleKind(typ string) (session.Kind, bool) {
	switch typ {
	case "play":
		return session.Play, true
	case "pause":
		return session.Pause, true
	case "step":
		return session.Step, true
	case "back":
		return session.Back, true
	}
	return 0, false
}

// ParseFrame decodes one client frame strictly into a session command. An act frame's
// action decodes through the same code as a scenario event (sim.ActionJSON).
func ParseFrame(data []byte) (session.Command, *FrameError) { return ParseFrameCharged(data, nil) }

// ParseFrame is ParseFrame (the function) with the Starlark loads a reset frame
// causes charged to the connection's client (ratelimit.Limits.Loads).
func (c *Client) ParseFrame(data []byte) (session.Command, *FrameError) {
	return ParseFrameCharged(data, c.limit.Load)
}

// ParseFrameCharged is ParseFrame that asks charge before loading a reset frame's
// source not yet cached (scenarios.LoadCharge): a refused load is a rate-limited
// error frame, and the run keeps its rules.
func ParseFrameCharged(data []byte, charge scenarios.LoadCharge) (session.Command, *FrameError) {
	var f protocol.Command
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		if fe := (*sim.FieldError)(nil); errors.As(err, &fe) { // a field's own decoder (delay)
			return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: fe.Error()}
		}
		return session.Command{}, &FrameError{code: protocol.CodeBadFrame, msg: "not a protocol frame: " + err.Error()}
	}
	if dec.More() {
		return session.Command{}, &FrameError{code: protocol.CodeBadFrame, msg: "one JSON object per frame"}
	}
	if k := scenarios.DuplicateKey(data); k != "" {
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: k + ": is given twice (each key once)"}
	}
	bad := func(format string, args ...any) (session.Command, *FrameError) {
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadField, msg: fmt.Sprintf(format, args...)}
	}
	cmd := session.Command{Ref: f.Ref}
	if k, ok := simpleKind(f.Type); ok {
		cmd.Kind = k
		return cmd, nil
	}
	switch f.Type {
	case "":
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadFrame, msg: "type: missing"}
	case "seek":
		if f.Step == nil {
			return bad("step: seek needs the step to show")
		}
		cmd.Kind, cmd.Step = session.Seek, *f.Step
	case "speed":
		if f.Speed == nil {
			return bad("speed: missing (%v to %v)", session.MinSpeed, session.MaxSpeed)
		}
		cmd.Kind, cmd.Speed = session.Speed, *f.Speed
	case "reset":
		cmd.Kind = session.Reset
		if len(f.Scenario) > 0 && string(f.Scenario) != "null" {
			sc, err := scenarios.ParseCharged(f.Scenario, charge)
			if le := (*ratelimit.LoadError)(nil); errors.As(err, &le) {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeRateLimited, msg: le.Error()}
			}
			if err != nil {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: err.Error(), line: scenarios.SourceLine(err)}
			}
			setup, err := runs.SetupOf(sc, "")
			if err != nil {
				return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeBadScenario, msg: err.Error(), line: scenarios.SourceLine(err)}
			}
			cmd.Setup = &setup
		}
	case "act":
		if f.At != nil {
			return bad("at: an act happens now (at belongs to scenario events)")
		}
		if _, err := f.ActionJSON.Kind(); err != nil {
			return bad("%v", err)
		}
		cmd.Kind, cmd.Act = session.Act, f.ActionJSON
	default:
		return session.Command{}, &FrameError{ref: f.Ref, code: protocol.CodeUnknownType,
			msg: fmt.Sprintf("type: %q is unknown (allowed: play, pause, step, back, seek, speed, reset, act)", f.Type)}
	}
	return cmd, nil
}
