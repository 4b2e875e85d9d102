package socket

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"time"
)

// Batched writes. gorilla/websocket writes each message with a system call of its
// own, and on loopback or a LAN that call is nearly all a frame costs the server
// (docs/benchmarks.md, "5,000 followers"). When a client's writer finds several frames
// queued (a follower's catch-up, a burst at 4x, a server that fell behind), it holds
// the connection: gorilla's writes of those frames, each a whole WebSocket frame
// written under gorilla's own lock, gather in a buffer, and release writes them with
// one call and one write deadline. Whatever else gorilla writes meanwhile (the reader
// answering a ping) joins the buffer in its place, so the order on the wire is the
// order of the writes.

// batchBytes bounds what one held batch gathers: the writer starts a new batch past
// it, and writes a frame larger than it alone (a snapshot of a large run is copied
// once, by gorilla, not twice).
const batchBytes = 64 << 10

// batchBufs are the buffers of batches in progress: a connection holds one only while
// it writes, so an idle follower costs none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// batchConn is a WebSocket's network connection, able to hold its writes.
type batchConn struct {
	net.Conn

	mu       sync.Mutex
	held     *[]byte   // the batch being gathered; nil when writes go straight through
	deadline time.Time // asked for while held, set once at release
}

// Write implements net.Conn: gathered while held, else written.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.held != nil {
		*b.held = append(*b.held, p...)
		b.mu.Unlock()
		return len(p), nil
	}
	b.mu.Unlock()
	return b.Conn.Write(p)
}

// SetWriteDeadline implements net.Conn: gorilla sets one before every write; while
// held, only the last one counts, and release sets it.
func (b *batchConn) SetWriteDeadline(t time.Time) error {
	b.mu.Lock()
	if b.held != nil {
		b.deadline = t
		b.mu.Unlock()
		return nil
	}
	b.mu.Unlock()
	return b.Conn.SetWriteDeadline(t)
}

// SetWriteBuffer sets the kernel send buffer of a TCP connection (web/lecturehttp
// bounds a follower's).
func (b *batchConn) SetWriteBuffer(n int) error {
	if tc, ok := b.Conn.(interface{ SetWriteBuffer(int) error }); ok {
		return tc.SetWriteBuffer(n)
	}
	return nil
}

// hold starts a batch: writes gather until release.
func (b *batchConn) hold() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held == nil {
		b.held = batchBufs.Get().(*[]byte)
		b.deadline = time.Time{}
	}
}

// release ends the batch and writes what it gathered in one call, under the last
// deadline asked for.
func (b *batchConn) release() error {
	b.mu.Lock()
	buf, deadline := b.held, b.deadline
	b.held = nil
	b.mu.Unlock()
	if buf == nil {
		return nil
	}
	var err error
	if len(*buf) > 0 {
		if !deadline.IsZero() {
			err = b.Conn.SetWriteDeadline(deadline)
		}
		if err == nil {
			_, err = b.Conn.Write(*buf)
		}
	}
	if cap(*buf) <= 2*batchBytes { // a batch grown past that is rare: let it go
		*buf = (*buf)[:0]
		batchBufs.Put(buf)
	}
	return err
}

// batchHijacker hands the upgrader the hijacked connection as a batchConn.
type batchHijacker struct{ http.ResponseWriter }

// Hijack implements http.Hijacker.
func (h batchHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &batchConn{Conn: conn}, brw, nil
}
