package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Untimed followers held outside Go's network poller (-pace > 0).
//
// A follower the tool does not time stands for a student's device, which in a hall is
// not on the server's machine: what it costs here is an artefact of measuring on one
// machine, to be made small. A socket of Go's net package is registered with the
// runtime's network poller (epoll), so every frame the server writes to it makes the
// kernel mark it ready and wake the tool's poller, even when nobody waits on it yet;
// on loopback that wake-up runs inside the server's write, which delivers to the
// receiving socket itself. So once its WebSocket handshake is done, an untimed
// follower's socket leaves the poller: the tool keeps a duplicate of its descriptor,
// non-blocking and registered with nothing, and one goroutine (sweeper) reads every
// such socket of the process once per pace with read(2), taking the frames that came
// meanwhile. Each frame is checked and counted as a follower read through gorilla
// checks and counts it (follower.frame). The timed followers are not touched: they
// read through gorilla at once, and their latency is what a device of its own sees.

// wsGUID is the handshake's fixed key suffix (RFC 6455, section 1.3).
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// rawSock is an untimed follower's socket, outside the poller.
type rawSock struct {
	fd    int
	carry []byte // the start of a frame not wholly read yet
	msg   []byte // a fragmented message's payload so far
	inMsg bool   // msg holds the start of a message
}

// dialRaw opens a WebSocket to path on base (http://host:port) with a handshake of its
// own, so that what the server sent right after its answer (a follower's catch-up)
// stays with the socket, then takes the socket out of the poller. count counts every
// byte read, the handshake's answer included (as countingConn does).
func dialRaw(base, path string, count interface{ Add(int64) int64 }) (*rawSock, error) {
	host := strings.TrimPrefix(base, "http://")
	c, err := net.DialTimeout("tcp", host, 30*time.Second)
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	defer tc.Close() // the duplicate keeps the socket open
	_ = tc.SetDeadline(time.Now().Add(30 * time.Second))
	var key [16]byte
	_, _ = rand.Read(key[:])
	k := base64.StdEncoding.EncodeToString(key[:])
	req := "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + k + "\r\nSec-WebSocket-Version: 13\r\nOrigin: " + base + "\r\n\r\n"
	if _, err := io.WriteString(tc, req); err != nil {
		return nil, fmt.Errorf("the handshake: %w", err)
	}
	var got []byte
	buf := make([]byte, 4096)
	end := -1
	for end < 0 {
		n, err := tc.Read(buf)
		count.Add(int64(n))
		got = append(got, buf[:n]...)
		end = bytes.Index(got, []byte("\r\n\r\n"))
		if end < 0 && err != nil {
			return nil, fmt.Errorf("the handshake: %w", err)
		}
		if end < 0 && len(got) > 16<<10 {
			return nil, errors.New("the handshake: an answer of more than 16 KiB without its end")
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(got[:end+4])), nil)
	if err != nil {
		return nil, fmt.Errorf("the handshake: %w", err)
	}
	sum := sha1.Sum([]byte(k + wsGUID))
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		return nil, fmt.Errorf("the handshake: %s, not the switch to a WebSocket", resp.Status)
	}
	sc, err := tc.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := sc.Control(func(s uintptr) { fd, derr = syscall.Dup(int(s)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	// Closing tc takes the original descriptor out of the poller (EPOLL_CTL_DEL) and
	// closes it; the duplicate shares the socket, and is the tool's to read.
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return nil, err
	}
	return &rawSock{fd: fd, carry: append([]byte(nil), got[end+4:]...)}, nil
}

// sweeper reads the raw sockets of its followers, every one once per pace, on one
// goroutine, until close. Followers join it as they connect (add), so that each is
// read, and answers the server's pings, from its start.
type sweeper struct {
	mu    sync.Mutex
	added []*follower // not yet taken by run
	stop  chan struct{}
	done  chan struct{}
	fl    []*follower // run's; close's once run has returned
}

// newSweeper starts a sweeper with no follower.
func newSweeper(pace time.Duration) *sweeper {
	s := &sweeper{stop: make(chan struct{}), done: make(chan struct{})}
	go s.run(pace)
	return s
}

// startSweeper sweeps the followers of fl that hold a raw socket.
func startSweeper(fl []*follower, pace time.Duration) *sweeper {
	s := newSweeper(pace)
	for _, f := range fl {
		s.add(f)
	}
	return s
}

// add has s read f from its next sweep on, if f holds a raw socket.
func (s *sweeper) add(f *follower) {
	if f.raw == nil {
		return
	}
	s.mu.Lock()
	s.added = append(s.added, f)
	s.mu.Unlock()
}

// take moves the followers added since into s.fl.
func (s *sweeper) take() {
	s.mu.Lock()
	s.fl = append(s.fl, s.added...)
	s.added = nil
	s.mu.Unlock()
}

func (s *sweeper) run(pace time.Duration) {
	defer close(s.done)
	buf := make([]byte, 64<<10)
	t := time.NewTicker(pace)
	defer t.Stop()
	for {
		s.take()
		for _, f := range s.fl {
			if !f.ended.Load() {
				f.sweep(buf)
			}
		}
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

// close ends the sweeping, then closes the sockets.
func (s *sweeper) close() {
	close(s.stop)
	<-s.done
	s.take()
	for _, f := range s.fl {
		_ = syscall.Close(f.raw.fd)
	}
}

// sweep reads what f's socket holds, until it would block (buf is the sweeper's).
func (f *follower) sweep(buf []byte) {
	if len(f.raw.carry) > 0 {
		// Whole frames may wait there since the handshake (what came with its answer).
		if err := f.rawFrames(nil); err != nil {
			f.end(err)
			return
		}
	}
	for {
		n, err := rawRead(f.raw.fd, buf)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EAGAIN):
			return
		case err != nil:
			f.end(err)
			return
		case n == 0:
			f.end(io.EOF)
			return
		}
		f.wire.Add(int64(n))
		if err := f.rawFrames(buf[:n]); err != nil {
			f.end(err)
			return
		}
		if n < len(buf) {
			return
		}
	}
}

// rawRead is read(2) on a socket that never blocks, made without telling the
// scheduler (RawSyscall): syscall.Read marks the thread as in a system call each
// time, and thousands of those a second keep the runtime's monitor (sysmon) awake
// (15 % of a load process's samples with syscall.Read).
func rawRead(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// end marks f's connection as ended (its server closed it, or it broke).
func (f *follower) end(err error) {
	f.err = err
	f.ended.Store(true)
}

// errClosed is a close frame from the server: it let the follower go.
var errClosed = errors.New("the server closed the WebSocket")

// closeError is errClosed with the close frame's code and reason (RFC 6455, 5.5.1).
func closeError(payload []byte) error {
	if len(payload) < 2 {
		return errClosed
	}
	return fmt.Errorf("%w: %d %q", errClosed, binary.BigEndian.Uint16(payload), payload[2:])
}

// rawFrames takes bytes read from f's raw socket: whole frames are handled in order
// (a message to follower.frame, a ping answered), the start of one is kept for the
// next read. Server frames are not masked (RFC 6455, section 5.1), so a header is two
// to ten bytes to skip; a large message may come in fragments.
func (f *follower) rawFrames(p []byte) error {
	s := f.raw
	fromCarry := len(s.carry) > 0
	if fromCarry {
		s.carry = append(s.carry, p...)
		p = s.carry
	}
	for len(p) > 0 {
		head, size, err := serverFrameSize(p)
		if err != nil {
			f.bad++
			return err
		}
		if size == 0 || len(p) < size {
			break // not whole yet
		}
		op, fin, payload := p[0]&0x0f, p[0]&0x80 != 0, p[head:size]
		switch {
		case op == 0x8:
			return closeError(payload)
		case op == 0x9:
			// A ping: the server lets a follower go that stays silent past its pong wait.
			if _, err := syscall.Write(s.fd, maskedFrame(0x8a, payload)); err != nil && !errors.Is(err, syscall.EAGAIN) {
				return err
			}
		case op == 0xa: // a pong: nothing to do
		case (op == 0x1 || op == 0x2) && !s.inMsg:
			if fin {
				f.frame(payload, 0, nil)
			} else {
				s.msg, s.inMsg = append(s.msg[:0], payload...), true
			}
		case op == 0x0 && s.inMsg:
			s.msg = append(s.msg, payload...)
			if fin {
				f.frame(s.msg, 0, nil)
				s.inMsg = false
			}
		default:
			f.bad++
			return fmt.Errorf("a WebSocket frame of opcode %#x out of place", op)
		}
		p = p[size:]
	}
	switch {
	case len(p) == 0 && cap(s.carry) > 64<<10:
		s.carry = nil // the end of a large frame: its buffer goes
	case len(p) == 0:
		s.carry = s.carry[:0] // every frame was whole (the usual)
	case !fromCarry:
		s.carry = append(s.carry[:0], p...)
	case len(p) < len(s.carry):
		s.carry = s.carry[:copy(s.carry, p)] // the start of the next frame moves down
	}
	return nil
}

// maxServerFrame bounds a frame the tool takes from a server: a checkpoint of a large
// run is far below it.
const maxServerFrame = 64 << 20

// serverFrameSize reads a server frame's header at the start of p: the header's
// length and the whole frame's; size 0 when p does not hold the whole header yet.
func serverFrameSize(p []byte) (head, size int, err error) {
	if len(p) < 2 {
		return 0, 0, nil
	}
	if p[1]&0x80 != 0 {
		return 0, 0, errors.New("a masked WebSocket frame from the server")
	}
	n := int(p[1] & 0x7f)
	head = 2
	switch n {
	case 126:
		if len(p) < 4 {
			return 0, 0, nil
		}
		head, n = 4, int(binary.BigEndian.Uint16(p[2:]))
	case 127:
		if len(p) < 10 {
			return 0, 0, nil
		}
		m := binary.BigEndian.Uint64(p[2:])
		if m > maxServerFrame {
			return 0, 0, fmt.Errorf("a WebSocket frame of %d bytes", m)
		}
		head, n = 10, int(m)
	}
	return head, head + n, nil
}

// maskedFrame is payload (at most 125 bytes: a control frame's) as one client frame
// whose first byte is first: clients mask what they send (RFC 6455, section 5.3).
func maskedFrame(first byte, payload []byte) []byte {
	var key [4]byte
	_, _ = rand.Read(key[:])
	out := append([]byte{first, 0x80 | byte(len(payload))}, key[:]...)
	for i, b := range payload {
		out = append(out, b^key[i%4])
	}
	return out
}
