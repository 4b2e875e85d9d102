package socket

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
)

// Options configure a Hub; the server fills them from its own.
type Options struct {
	PongWait  time.Duration // a connection silent this long is dead
	WriteWait time.Duration // deadline of every write
	SendQueue int           // frames queued per connection before it counts as too slow
	// SendBytes bounds the bytes queued per connection (and being written to it) before
	// it counts as too slow; 0: no byte bound.
	SendBytes int
	ReadLimit int64 // largest frame accepted from a client

	Logger  *slog.Logger
	Metrics *ops.Metrics       // counts sockets, slow clients, panics, refusals (nil: none)
	Limits  *ratelimit.Limiter // per-connection frame rates (nil: none)
	// Ready reports whether the server takes new work: a socket to a session that is
	// gone is told "reload" while it does, "shutting down" once it does not.
	Ready func() bool
}

// Hub is the server's WebSockets: it makes every connection's client (counted,
// rate limited, closed with 1001 on shutdown), serves the session socket /ws/{id},
// and lets the server wait for every handler to return.
type Hub struct {
	opts     Options
	sessions *session.Manager
	// upgrader accepts same-origin WebSockets. Buffers are what an idle viewer costs
	// most (docs/benchmarks.md, "Operations"): client frames are small commands, so a
	// 1 KiB read buffer does (a larger frame is read through it), and writes take a
	// 16 KiB buffer from the pool only while a frame goes out.
	upgrader websocket.Upgrader
	conns    sync.WaitGroup // socket handlers, which outlive http.Server.Shutdown

	mu       sync.Mutex
	open     map[*Client]struct{} // for the shutdown to close
	draining bool
}

// NewHub returns the hub of the sessions' sockets.
func NewHub(sessions *session.Manager, opts Options) *Hub {
	return &Hub{opts: opts, sessions: sessions, open: make(map[*Client]struct{}),
		upgrader: websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16384, WriteBufferPool: &sync.Pool{}, CheckOrigin: sameOrigin}}
}

// Options are the hub's options (lecture sockets size their queues from them).
func (h *Hub) Options() Options { return h.opts }

// Track counts a socket handler until the returned func runs (Wait waits for it).
func (h *Hub) Track() (done func()) {
	h.conns.Add(1)
	return h.conns.Done
}

// Wait waits for every tracked handler to return.
func (h *Hub) Wait() { h.conns.Wait() }

// Upgrade accepts a same-origin WebSocket; the upgrader answers a refused handshake
// (403 for a foreign origin, 400 for a bad one).
func (h *Hub) Upgrade(w http.ResponseWriter, r *http.Request) (*websocket.Conn, bool) {
	conn, err := h.upgrader.Upgrade(batchHijacker{w}, r, nil) // writes can be batched (batch.go)
	return conn, err == nil
}

// Drain closes every WebSocket with 1001 "server shutting down" after what is queued
// for it; sockets opened from now on are closed at once.
func (h *Hub) Drain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining = true
	for c := range h.open {
		c.CloseWith(websocket.CloseGoingAway, protocol.CloseShuttingDown, true)
	}
}

// Draining reports whether Drain was called.
func (h *Hub) Draining() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.draining
}

// NewClient makes the client of a WebSocket connection: it counts in /metrics, obeys
// the per-connection rate limits (Client.limited) and is closed with 1001 when the
// server shuts down. Every WebSocket handler makes its client here.
func (h *Hub) NewClient(r *http.Request, conn *websocket.Conn, queue int) *Client {
	c := newClient(conn, queue, h.opts.SendBytes, h.opts.PongWait/2, h.opts.WriteWait) // two pings per pong wait: one may be late
	c.obs = h.opts.Metrics
	if h.opts.Limits != nil {
		c.limit = h.opts.Limits.Conn(r)
	}
	kind := "session"
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/ws/lecture/"):
		kind = "follower"
	case strings.HasPrefix(p, "/ws/present/"):
		kind = "presenter"
	}
	closed := h.opts.Metrics.SocketOpened(kind)
	h.mu.Lock()
	if h.draining {
		c.CloseWith(websocket.CloseGoingAway, protocol.CloseShuttingDown, true)
	} else {
		h.open[c] = struct{}{}
	}
	h.mu.Unlock()
	c.release = func() {
		h.mu.Lock()
		delete(h.open, c)
		h.mu.Unlock()
		closed()
	}
	return c
}

// Refuse tells a client why it cannot have this socket, then closes it.
func (h *Hub) Refuse(conn *websocket.Conn, frames ...[]byte) {
	wait := h.opts.WriteWait
	_ = conn.SetWriteDeadline(time.Now().Add(wait))
	for _, f := range frames {
		_ = conn.WriteMessage(websocket.TextMessage, f)
	}
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, protocol.CloseRefused), time.Now().Add(wait))
	conn.Close()
}

// limited reports whether the frame just read must be dropped unread. It sends the
// client a rate-limited error frame; a client that keeps sending past its strikes is
// closed with 1008. Read loops call it before parsing: a refused frame costs nothing.
func (c *Client) limited() bool {
	switch c.limit.Frame() {
	case ratelimit.Allowed:
		return false
	case ratelimit.Abusive:
		c.CloseWith(websocket.ClosePolicyViolation, protocol.CloseAbuse, true)
		return true
	}
	c.Send(protocol.ErrorFrame(0, protocol.CodeRateLimited, "too many commands: this one was dropped unread; slow down"))
	return true
}
