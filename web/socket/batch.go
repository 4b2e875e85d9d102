package socket

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gorilla/websocket"
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

// batchWriter is the frameWriter (writer.go) of a connection Hub.Upgrade made: its
// batches go out in one system call each, and a shared frame to an idle client is
// written at once by its sender (the fan-out's fast path).
//
// A frame sent to a client with nothing queued and no writer running is written
// with one non-blocking system call (batchConn.tryWrite): a lecture's fan-out to
// thousands of followers then starts no goroutine, sets no deadline and wakes nobody
// per frame and per follower. What the socket does not take at once is the
// writePump's to finish, before anything queued after it, under the write deadline as
// ever: a follower that stops reading fills its socket buffer, then its queue, and is
// dropped as before. Frames that come in a burst (a catch-up on joining, several in a
// row) are better written together: after a fast write, the next one within fastGap
// is queued, and the writePump takes it and whatever follows in one write. A
// fan-out's frames to one follower are a whole fan-out apart.
type batchWriter struct {
	ws   *websocket.Conn
	conn *batchConn // ws's network connection
	// lastFast is the time of the last fast write, fastGap the gap after it within which
	// a frame counts as part of a burst (0: none does); under the client's lock.
	lastFast time.Time
	fastGap  time.Duration
}

// fastGap is how long after a fast write the next frame counts as part of a burst
// and is queued (batchWriter.fastGap; tests set their own). Sending one frame to each
// of 5,000 followers takes tens of milliseconds; a catch-up's frames come microseconds
// apart.
const fastGap = time.Millisecond

// writeBatch writes the frame the fast path began, then frames and the ping: when
// there are several, gathered (hold) and written with one call (release).
func (w *batchWriter) writeBatch(frames []queued, ping bool, deadline time.Time) error {
	if w.conn.hasRest.Load() {
		if err := w.conn.flushPending(deadline); err != nil {
			return err
		}
	}
	writes, size := len(frames), 0
	for _, q := range frames {
		size += len(q.frame)
	}
	if ping {
		writes++
	}
	_ = w.ws.SetWriteDeadline(deadline)
	if writes < 2 || size > batchBytes {
		return writeEach(w.ws, frames, ping)
	}
	w.conn.hold()
	err := writeEach(w.ws, frames, ping)
	if rerr := w.conn.release(); err == nil {
		err = rerr
	}
	return err
}

func (w *batchWriter) writeNow(q queued) (ok, rest bool) {
	if q.wire == nil || !w.apart() {
		return false, false
	}
	return w.conn.tryWrite(q.wire)
}

func (w *batchWriter) unfinished() bool { return w.conn.hasRest.Load() }

// apart reports whether the last fast write was at least w.fastGap ago, and if so
// counts this one as the last. Call with the client's lock held.
func (w *batchWriter) apart() bool {
	if w.fastGap <= 0 {
		return true
	}
	now := time.Now()
	if now.Sub(w.lastFast) < w.fastGap {
		return false
	}
	w.lastFast = now
	return true
}

// batchBufs are the buffers of batches in progress: a connection holds one only while
// it writes, so an idle follower costs none.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// batchConn is a WebSocket's network connection, able to hold its writes, and to
// take a shared frame's bytes without blocking (tryWrite).
type batchConn struct {
	net.Conn
	raw syscall.RawConn // of a TCP connection: non-blocking writes; nil for another kind

	// mu is held through every write to Conn: a frame tryWrite left half written
	// (pending) goes out whole before anything else, whoever writes next, and tryWrite,
	// which only tries the lock, never waits behind a write that blocks.
	mu      sync.Mutex
	held    *[]byte // the batch being gathered; nil when writes go straight through
	pending []byte  // the unwritten end of the frame tryWrite began; written first
	hasRest atomic.Bool
	rawBuf  []byte        // what rawWrite writes, for rawWriter
	rawN    int           // what rawWriter wrote
	rawFn   func(uintptr) // b.rawWriter, made once
}

// Write implements net.Conn: gathered while held, else written after what is pending.
func (b *batchConn) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.held != nil {
		*b.held = append(*b.held, p...)
		return len(p), nil
	}
	if err := b.writePending(); err != nil {
		return 0, err
	}
	return b.Conn.Write(p)
}

// writePending writes the end of a frame tryWrite began, under the deadline set.
// Call with b.mu held.
func (b *batchConn) writePending() error {
	if b.pending == nil {
		return nil
	}
	_, err := b.Conn.Write(b.pending)
	b.pending = nil
	b.hasRest.Store(false)
	return err
}

// flushPending writes what tryWrite left unwritten, under deadline.
func (b *batchConn) flushPending(deadline time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending == nil {
		return nil
	}
	if err := b.Conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	return b.writePending()
}

// tryWrite is the fan-out's fast path (batchWriter.writeNow): it writes wire, a
// whole WebSocket frame that does not change (prepared.go), with one non-blocking
// system call on the caller's goroutine, without a deadline, a goroutine or a wake-up.
// What the socket buffer cannot take now stays pending, to be written before anything
// else (the client's writePump sees rest and writes it). It reports false, having
// written nothing, when it cannot try: not a TCP connection, or another write under
// way (the reader answering a ping), or something pending already.
func (b *batchConn) tryWrite(wire []byte) (ok, rest bool) {
	if b.raw == nil || !b.mu.TryLock() {
		return false, false
	}
	defer b.mu.Unlock()
	if b.held != nil || b.pending != nil {
		return false, false
	}
	n := b.rawWrite(wire)
	if n < 0 {
		return false, false // not tried (the connection is closed): the writer finds out
	}
	if n == len(wire) {
		return true, false
	}
	// A partial write, a full socket buffer, or an error the writer will meet on the
	// rest: the frame is the writer's to finish, in its place.
	b.pending = wire[n:]
	b.hasRest.Store(true)
	return true, true
}

// rawWrite makes one non-blocking write of p: the bytes written, 0 when the socket
// buffer is full, -1 when the write was not tried at all (the connection is closed).
// Call with b.mu held: the callback, made once (rawWriter), takes p from b and leaves
// its count there, so a write allocates nothing.
//
// The callback runs under RawConn.Control, which only keeps the descriptor from being
// closed meanwhile, and not under RawConn.Write, which also takes the descriptor's
// write lock and resets its poller state and write deadline for a write that may wait:
// b.mu already orders every write to the connection, and this one never waits. That
// was about 3 % of a server's CPU in a 5,000-follower fan-out (docs/benchmarks.md).
func (b *batchConn) rawWrite(p []byte) int {
	b.rawBuf, b.rawN = p, -1
	if b.rawFn == nil {
		b.rawFn = b.rawWriter
	}
	_ = b.raw.Control(b.rawFn) // its error is the connection's closing: rawN stays -1
	b.rawBuf = nil
	return b.rawN
}

// rawWriter is the callback of rawWrite: one write, never a wait for the socket. The
// socket does not block (the runtime's network poller made it so), so the call is
// made without telling the scheduler (RawSyscall): syscall.Write would mark the
// goroutine's P as in a system call for every follower, and a fan-out of thousands of
// those in a row keeps the runtime's monitor handing Ps off and waking threads.
func (b *batchConn) rawWriter(fd uintptr) {
	p := b.rawBuf
	if len(p) == 0 {
		b.rawN = 0
		return
	}
	for {
		k, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			k = 0 // EAGAIN, or an error the blocking write will report
		}
		b.rawN = int(k)
		return
	}
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
	}
}

// release ends the batch and writes what it gathered in one call, after what is
// pending, under the write deadline gorilla set on the connection last.
func (b *batchConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf := b.held
	b.held = nil
	if buf == nil {
		return nil
	}
	var err error
	if len(*buf) > 0 {
		err = b.writePending()
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
	b := &batchConn{Conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		b.raw, _ = sc.SyscallConn()
	}
	return b, brw, nil
}
