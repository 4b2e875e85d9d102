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

// batchConn is a WebSocket's network connection, able to hold its writes, and to
// take a shared frame's bytes without blocking (tryWrite).
type batchConn struct {
	net.Conn
	raw syscall.RawConn // of a TCP connection: non-blocking writes; nil for another kind

	// mu is held through every write to Conn: a frame tryWrite left half written
	// (pending) goes out whole before anything else, whoever writes next, and tryWrite,
	// which only tries the lock, never waits behind a write that blocks.
	mu       sync.Mutex
	held     *[]byte   // the batch being gathered; nil when writes go straight through
	deadline time.Time // asked for while held, set once at release
	pending  []byte    // the unwritten end of the frame tryWrite began; written first
	hasRest  atomic.Bool
	rawBuf   []byte        // what rawWrite writes, for rawWriter
	rawN     int           // what rawWriter wrote
	rawFn    func(uintptr) // b.rawWriter, made once
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

// tryWrite is the fan-out's fast path (client.go, Client.enqueue): it writes wire, a
// whole WebSocket frame that does not change (prepared.go), with one non-blocking
// system call on the caller's goroutine, without a deadline, a goroutine or a wake-up.
// What the socket buffer cannot take now stays pending, to be written before anything
// else (the client's writer sees rest and writes it). It reports false, having
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
		b.deadline = time.Time{}
	}
}

// release ends the batch and writes what it gathered in one call, under the last
// deadline asked for, after what is pending.
func (b *batchConn) release() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	buf, deadline := b.held, b.deadline
	b.held = nil
	if buf == nil {
		return nil
	}
	var err error
	if len(*buf) > 0 {
		if !deadline.IsZero() {
			err = b.Conn.SetWriteDeadline(deadline)
		}
		if err == nil {
			err = b.writePending()
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
	b := &batchConn{Conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		b.raw, _ = sc.SyscallConn()
	}
	return b, brw, nil
}
