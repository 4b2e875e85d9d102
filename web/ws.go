package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
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

// client is one WebSocket connection: a session subscriber. Its writer goroutine is
// the only one that writes to the connection; the session only ever queues frames, and
// a full queue drops the client instead of slowing the session. The queue is a slice
// that grows only while frames wait, so a tab left open holds no queue at all.
type client struct {
	conn     *websocket.Conn
	maxQueue int           // frames queued at once before the client counts as too slow
	wake     chan struct{} // holds a token while frames wait
	quit     chan struct{}
	once     sync.Once

	mu        sync.Mutex
	queue     [][]byte
	closeCode int
	closeText string
	drain     bool // write what is queued before closing (not for a client too slow to take it)

	// Set by Server.newClient (web/ops.go): metrics, rate limits, shutdown.
	obs     *observer
	limit   *connLimit
	release func() // when the connection has ended
}

func newClient(conn *websocket.Conn, queue int) *client {
	return &client{conn: conn, maxQueue: queue, wake: make(chan struct{}, 1), quit: make(chan struct{}),
		closeCode: websocket.CloseNormalClosure}
}

// Send implements session.Subscriber.
func (c *client) Send(frame []byte) bool {
	select {
	case <-c.quit:
		return false
	default:
	}
	c.mu.Lock()
	if len(c.queue) >= c.maxQueue {
		c.mu.Unlock()
		c.obs.slowClient()
		c.closeWith(websocket.CloseTryAgainLater, "too slow: frames were piling up", false)
		return false
	}
	c.queue = append(c.queue, frame)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default: // the writer is already woken
	}
	return true
}

// take hands the writer every frame queued, in order.
func (c *client) take() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queue
	c.queue = nil
	return q
}

// Close implements session.Subscriber: the session dropped us or ended.
func (c *client) Close() { c.closeWith(websocket.CloseGoingAway, "the session ended", true) }

func (c *client) closeWith(code int, text string, drain bool) {
	c.once.Do(func() {
		c.mu.Lock()
		c.closeCode, c.closeText, c.drain = code, text, drain
		c.mu.Unlock()
		close(c.quit)
	})
}

// writeLoop writes queued frames and pings, each under a deadline, until quit; then it
// sends a close frame and closes the connection, which also ends the reader.
func (c *client) writeLoop(ping, wait time.Duration) {
	ticker := time.NewTicker(ping)
	defer func() {
		ticker.Stop()
		c.conn.Close()
		if c.release != nil {
			c.release()
		}
	}()
	for {
		select {
		case <-c.wake:
			for _, frame := range c.take() {
				_ = c.conn.SetWriteDeadline(time.Now().Add(wait))
				if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
					return
				}
			}
		case <-ticker.C:
			_ = c.conn.SetWriteDeadline(time.Now().Add(wait))
			if err := c.conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return
			}
		case <-c.quit:
			c.mu.Lock()
			msg := websocket.FormatCloseMessage(c.closeCode, c.closeText)
			drain := c.drain
			c.mu.Unlock()
			deadline := time.Now().Add(wait)
			_ = c.conn.SetWriteDeadline(deadline)
			if drain {
				for _, frame := range c.take() {
					if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
						return
					}
				}
			}
			_ = c.conn.WriteControl(websocket.CloseMessage, msg, deadline)
			return
		}
	}
}

// upgrader accepts same-origin WebSockets. Buffers are what an idle viewer costs most
// (docs/benchmarks.md, "Operations"): client frames are small commands, so a 1 KiB
// read buffer does (a larger frame is read through it), and writes take a 16 KiB
// buffer from the pool only while a frame goes out.
var upgrader = websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16384, WriteBufferPool: &sync.Pool{}, CheckOrigin: sameOrigin}

func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	s.conns.Add(1)
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.conns.Done()
		return // the upgrader has answered (403 for a foreign origin, 400 for a bad handshake)
	}
	sess, ok := s.sessions.Get(chi.URLParam(r, "id"))
	if !ok {
		defer s.conns.Done()
		// Tell the page why, so it can start a new session.
		wait := s.opts.WriteWait
		_ = conn.SetWriteDeadline(time.Now().Add(wait))
		_ = conn.WriteMessage(websocket.TextMessage, session.ErrorFrame(0, session.CodeGone, "this session has ended; reload the page for a new one"))
		_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "no such session"), time.Now().Add(wait))
		conn.Close()
		return
	}
	c := s.newClient(r, conn, s.opts.SendQueue)
	// The connection is served by a goroutine of its own and this handler returns:
	// net/http's per-request state (its write buffers, the request, this goroutine's
	// grown stack) is freed instead of being held for hours by a tab left open.
	go func() {
		defer s.conns.Done()
		defer s.containWS(c)
		s.serveWS(conn, c, sess)
	}()
}

// containWS turns a panic while serving a socket into the close of that socket, as
// the router's recoverer does for a request: the server and the session carry on.
func (s *Server) containWS(c *client) {
	if v := recover(); v != nil {
		s.obs.panicked("http")
		s.opts.Logger.Error("a WebSocket handler panicked; that connection closed", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		c.closeWith(websocket.CloseInternalServerErr, "internal error", false)
	}
}

// serveWS is the life of one session socket: attach, read commands, detach.
func (s *Server) serveWS(conn *websocket.Conn, c *client, sess *session.Session) {
	wait := s.opts.WriteWait
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.writeLoop(s.opts.PongWait/2, wait) // two pings per pong wait: one may be late
	}()
	defer func() {
		sess.Detach(c)
		c.closeWith(websocket.CloseNormalClosure, "", true)
		<-done
	}()
	if err := sess.Attach(c); err != nil {
		code := session.CodeGone
		if !errors.Is(err, session.ErrClosed) {
			code = session.CodeBusy
			s.obs.refused("viewers")
		}
		c.Send(session.ErrorFrame(0, code, err.Error()))
		c.closeWith(websocket.CloseTryAgainLater, code, true)
		return
	}
	conn.SetReadLimit(s.opts.ReadLimit)
	alive := func() { _ = conn.SetReadDeadline(time.Now().Add(s.opts.PongWait)) }
	alive()
	conn.SetPongHandler(func(string) error { alive(); return nil })
	for {
		kind, data, err := conn.ReadMessage()
		if err != nil {
			return // closed, timed out, or over the read limit
		}
		alive()
		if c.limited() { // over its rate: dropped unread (a rate-limited error, or 1008 on abuse)
			continue
		}
		if kind != websocket.TextMessage {
			c.Send(session.ErrorFrame(0, session.CodeBadFrame, "frames are JSON text; binary frames are not part of the protocol"))
			continue
		}
		cmd, ferr := parseFrame(data)
		if ferr != nil {
			c.Send(session.ErrorFrame(ferr.ref, ferr.code, ferr.msg))
			continue
		}
		if err := sess.Do(c, cmd); err != nil {
			c.Send(session.ErrorFrame(cmd.Ref, session.CodeGone, "this session has ended; reload the page for a new one"))
			return
		}
	}
}

// frameError is a frame the server cannot act on.
type frameError struct {
	ref       int64
	code, msg string
}

// inFrame is every field a client frame may carry (docs/protocol.md).
type inFrame struct {
	Type     string          `json:"type"`
	Ref      int64           `json:"ref"`
	Step     *int            `json:"step"`
	Speed    *float64        `json:"speed"`
	Scenario json.RawMessage `json:"scenario"`
	Do       string          `json:"do"`
	Node     *int            `json:"node"`
	To       *int            `json:"to"` // tell: the process told
	Msg      *int64          `json:"msg"`
	Groups   [][]int         `json:"groups"` // partition: process ids per group
	// network: what changes (at least one)
	Delay json.RawMessage `json:"delay"` // [min, max] or one number
	FIFO  *bool           `json:"fifo"`
	Loss  *float64        `json:"loss"`
	Hold  *bool           `json:"hold"`
}

var simpleKinds = map[string]session.Kind{
	"play": session.Play, "pause": session.Pause, "step": session.Step, "back": session.Back,
}

// netChange reads the network fields of an act frame; msg names the bad field.
func netChange(f *inFrame) (c sim.NetChange, msg string) {
	if f.Delay != nil {
		var d scenarios.Delay
		if err := d.UnmarshalJSON(f.Delay); err != nil || len(d) < 1 || len(d) > 2 || string(f.Delay) == "null" {
			return c, "delay: expected [min, max] or one number"
		}
		c.Set |= sim.NetDelay
		c.DelayMin, c.DelayMax = d[0], d[len(d)-1]
	}
	if f.FIFO != nil {
		c.Set |= sim.NetFIFO
		c.FIFO = *f.FIFO
	}
	if f.Loss != nil {
		c.Set |= sim.NetLoss
		c.Loss = *f.Loss
	}
	if f.Hold != nil {
		c.Set |= sim.NetHold
		c.Hold = *f.Hold
	}
	if err := c.Check(); err != nil {
		return c, err.Error()
	}
	return c, ""
}

// parseFrame decodes one client frame strictly into a session command.
func parseFrame(data []byte) (session.Command, *frameError) {
	var f inFrame
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return session.Command{}, &frameError{code: session.CodeBadFrame, msg: "not a protocol frame: " + err.Error()}
	}
	if dec.More() {
		return session.Command{}, &frameError{code: session.CodeBadFrame, msg: "one JSON object per frame"}
	}
	bad := func(format string, args ...any) (session.Command, *frameError) {
		return session.Command{}, &frameError{ref: f.Ref, code: session.CodeBadField, msg: fmt.Sprintf(format, args...)}
	}
	cmd := session.Command{Ref: f.Ref}
	if k, ok := simpleKinds[f.Type]; ok {
		cmd.Kind = k
		return cmd, nil
	}
	switch f.Type {
	case "":
		return session.Command{}, &frameError{ref: f.Ref, code: session.CodeBadFrame, msg: "type: missing"}
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
			sc, err := scenarios.Parse(f.Scenario)
			if err != nil {
				return session.Command{}, &frameError{ref: f.Ref, code: session.CodeBadScenario, msg: err.Error()}
			}
			setup, err := setupOf(sc, "")
			if err != nil {
				return session.Command{}, &frameError{ref: f.Ref, code: session.CodeBadScenario, msg: err.Error()}
			}
			cmd.Setup = &setup
		}
	case "act":
		do, ok := sim.ParseActionKind(f.Do)
		if !ok {
			return bad("do: %q is unknown (allowed: %s)", f.Do, strings.Join(sim.ActionNames(), ", "))
		}
		cmd.Kind, cmd.Do = session.Act, do
		if do != sim.ActPartition && f.Groups != nil {
			return bad("groups: %s takes no groups (they belong to partition)", f.Do)
		}
		if do != sim.ActTell && f.To != nil {
			return bad("to: %s takes no to (it belongs to tell)", f.Do)
		}
		if do != sim.ActNetwork {
			for _, x := range []struct {
				name string
				set  bool
			}{{"delay", f.Delay != nil}, {"fifo", f.FIFO != nil}, {"loss", f.Loss != nil}, {"hold", f.Hold != nil}} {
				if x.set {
					return bad("%s: belongs to network, not %s", x.name, f.Do)
				}
			}
		}
		switch do {
		case sim.ActDrop, sim.ActDeliver:
			if f.Msg == nil {
				return bad("msg: %s needs a message id", f.Do)
			}
			cmd.Msg = *f.Msg
		case sim.ActPartition:
			if len(f.Groups) == 0 {
				return bad("groups: partition needs groups of process ids, e.g. [[0,1],[2]]")
			}
			cmd.Groups = f.Groups
		case sim.ActHeal:
		case sim.ActTell:
			if f.Node == nil || f.To == nil {
				return bad("node, to: tell needs the id of the teller (node) and of the process told (to)")
			}
			cmd.Node, cmd.To = *f.Node, *f.To
		case sim.ActNetwork:
			c, msg := netChange(&f)
			if msg != "" {
				return bad("%s", msg)
			}
			cmd.Net = c
		default:
			if f.Node == nil {
				return bad("node: %s needs a process id", f.Do)
			}
			cmd.Node = *f.Node
		}
	default:
		return session.Command{}, &frameError{ref: f.Ref, code: session.CodeUnknownType,
			msg: fmt.Sprintf("type: %q is unknown (allowed: play, pause, step, back, seek, speed, reset, act)", f.Type)}
	}
	return cmd, nil
}
