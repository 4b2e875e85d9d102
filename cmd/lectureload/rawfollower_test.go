package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
)

// serverFrame is payload as one unmasked server frame with opcode op (fin: the last of
// its message), its length in 7, 16 or 64 bits as the size asks.
func serverFrame(op byte, fin bool, payload []byte) []byte {
	first := op
	if fin {
		first |= 0x80
	}
	n := len(payload)
	var out []byte
	switch {
	case n < 126:
		out = []byte{first, byte(n)}
	case n <= 0xffff:
		out = []byte{first, 126, byte(n >> 8), byte(n)}
	default:
		out = binary.BigEndian.AppendUint64([]byte{first, 127}, uint64(n))
	}
	return append(out, payload...)
}

func eventsFrame(n uint64, pad int) []byte {
	return protocol.Stamp(n, []byte(`{"type":"events","step":1,"pad":"`+strings.Repeat("x", pad)+`"}`))
}

// A raw follower reads the same frames wherever the reads cut the stream: frames split
// across reads, a message in fragments, 16- and 64-bit lengths; the numbering finds the
// gap and the repeat.
func TestRawFramesWhereverTheReadsCut(t *testing.T) {
	big := eventsFrame(10, 140_000) // in three fragments, the last with a 64-bit length
	var stream []byte
	for _, f := range [][]byte{
		serverFrame(0x1, true, eventsFrame(7, 0)),   // the catch-up: twice the same number
		serverFrame(0x1, true, eventsFrame(7, 300)), // a 16-bit length
		serverFrame(0x1, true, eventsFrame(8, 0)),
		serverFrame(0xa, true, []byte("pong")), // a control frame to skip
		serverFrame(0x1, true, eventsFrame(9, 0)),
		serverFrame(0x1, false, big[:1000]),
		serverFrame(0x0, false, big[1000:2000]),
		serverFrame(0x0, true, big[2000:]),
		serverFrame(0x1, true, eventsFrame(12, 0)), // 11 never came
		serverFrame(0x1, true, eventsFrame(12, 0)), // and 12 came twice
	} {
		stream = append(stream, f...)
	}
	for _, chunk := range []int{1, 2, 3, 7, 100, 4096, len(stream)} {
		f := &follower{proto: 1, raw: &rawSock{fd: -1}}
		for p := stream; len(p) > 0; {
			k := min(chunk, len(p))
			if err := f.rawFrames(p[:k]); err != nil {
				t.Fatalf("reads of %d bytes: %v", chunk, err)
			}
			p = p[k:]
		}
		if f.frames != 7 || f.gaps != 1 || f.repeats != 1 || f.last != 12 || f.first != 7 || f.bad != 0 || len(f.raw.carry) != 0 {
			t.Fatalf("reads of %d bytes: frames %d, gaps %d, repeats %d, first %d, last %d, bad %d, %d bytes left over; want 7, 1, 1, 7, 12, 0, 0",
				chunk, f.frames, f.gaps, f.repeats, f.first, f.last, f.bad, len(f.raw.carry))
		}
		if f.eventsN != 5 { // the catch-up is left out of the counts
			t.Fatalf("reads of %d bytes: %d events frames counted, want 5", chunk, f.eventsN)
		}
	}
}

// Bytes that are not what a server sends end the follower, counted as unreadable.
func TestRawFramesRefuseWhatNoServerSends(t *testing.T) {
	for _, tt := range []struct {
		name   string
		stream []byte
		want   string
	}{
		{"a masked frame", []byte{0x81, 0x80 | 4, 1, 2, 3, 4, 'a', 'b', 'c', 'd'}, "masked"},
		{"a continuation without a start", serverFrame(0x0, true, []byte("x")), "out of place"},
		{"a new message inside a fragmented one", append(serverFrame(0x1, false, []byte("[1")), serverFrame(0x1, true, []byte("]"))...), "out of place"},
		{"an unknown opcode", serverFrame(0x3, true, nil), "out of place"},
		{"a frame too large to be one", binary.BigEndian.AppendUint64([]byte{0x81, 127}, 1<<40), "bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &follower{proto: 1, raw: &rawSock{fd: -1}}
			err := f.rawFrames(tt.stream)
			if err == nil || !strings.Contains(err.Error(), tt.want) || f.bad != 1 {
				t.Fatalf("error %v, bad %d; want an error about %q, bad 1", err, f.bad, tt.want)
			}
		})
	}
	f := &follower{proto: 1, raw: &rawSock{fd: -1}}
	if err := f.rawFrames(serverFrame(0x8, true, []byte{0x03, 0xe8, 's', 'l', 'o', 'w'})); !errors.Is(err, errClosed) || err.Error() != `the server closed the WebSocket: 1000 "slow"` {
		t.Fatalf("a close frame: %v, want errClosed with its code and reason", err)
	}
}

// Over a real socket: the handshake, the frames the server sent with its answer, the
// sweeper's reads outside the poller, a ping answered with a pong (or the server would
// let the follower go), and the server's close ending the follower.
func TestRawFollowerOverASocket(t *testing.T) {
	next := make(chan []byte)
	pongs := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{WriteBufferSize: 512} // a large frame goes in fragments
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		conn.SetPongHandler(func(s string) error { pongs <- s; return nil })
		go func() {
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					return
				}
			}
		}()
		// The catch-up right after the answer: it may come in the handshake's read.
		_ = conn.WriteMessage(websocket.TextMessage, eventsFrame(3, 0))
		for b := range next {
			switch {
			case b == nil:
				_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "slow"), time.Now().Add(time.Second))
				return
			case string(b) == "ping":
				_ = conn.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(time.Second))
			default:
				_ = conn.WriteMessage(websocket.TextMessage, b)
			}
		}
	}))
	defer srv.Close()

	f := &follower{proto: 1}
	raw, err := dialRaw(srv.URL, "/", &f.wire)
	if err != nil {
		t.Fatal(err)
	}
	f.raw = raw
	sw := startSweeper([]*follower{f}, time.Millisecond)
	testwait.For(t, "the catch-up frame", func() bool { return f.seen.Load() == 3 })
	next <- eventsFrame(4, 0)
	next <- eventsFrame(5, 2000)
	testwait.For(t, "two more frames, one in fragments", func() bool { return f.seen.Load() == 5 })
	next <- []byte("ping")
	if got := testwait.Recv(t, "the pong", pongs); got != "are you there" {
		t.Fatalf("the pong carries %q, want the ping's payload", got)
	}
	next <- nil
	testwait.For(t, "the follower to end at the server's close", f.ended.Load)
	sw.close()
	if f.frames != 3 || f.gaps != 0 || f.repeats != 0 || f.bad != 0 || !errors.Is(f.err, errClosed) {
		t.Fatalf("frames %d, gaps %d, repeats %d, bad %d, end %v; want 3, 0, 0, 0, the close", f.frames, f.gaps, f.repeats, f.bad, f.err)
	}
	// The catch-up is left out of the counts; the socket's bytes hold the handshake's
	// answer and the framing too.
	events := int64(len(eventsFrame(4, 0)) + len(eventsFrame(5, 2000)))
	if f.eventsN != 2 || f.eventsBytes != events || f.wire.Load() <= events+int64(len("HTTP/1.1 101")) {
		t.Fatalf("events frames %d of %d bytes, socket %d bytes; want 2 of %d, more on the socket", f.eventsN, f.eventsBytes, f.wire.Load(), events)
	}
}

// Frames that came in the same read as the handshake's answer are the follower's
// first frames, read at its first sweep.
func TestRawFollowerKeepsWhatCameWithTheAnswer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rest := make(chan struct{})
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + wsGUID))
		answer := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n"
		// One write: the answer, two whole frames and the start of a third.
		third := serverFrame(0x1, true, eventsFrame(9, 0))
		_, _ = c.Write(slices.Concat([]byte(answer), serverFrame(0x1, true, eventsFrame(7, 0)), serverFrame(0x1, true, eventsFrame(8, 0)), third[:5]))
		<-rest
		_, _ = c.Write(third[5:])
		_, _ = io.Copy(io.Discard, c) // until the follower closes
	}()
	f := &follower{proto: 1}
	if f.raw, err = dialRaw("http://"+l.Addr().String(), "/", &f.wire); err != nil {
		t.Fatal(err)
	}
	sw := startSweeper([]*follower{f}, time.Millisecond)
	testwait.For(t, "the two whole frames", func() bool { return f.seen.Load() == 8 })
	close(rest)
	testwait.For(t, "the third frame", func() bool { return f.seen.Load() == 9 })
	sw.close()
	if f.frames != 3 || f.gaps != 0 || f.repeats != 0 || f.bad != 0 {
		t.Fatalf("frames %d, gaps %d, repeats %d, bad %d; want 3, 0, 0, 0", f.frames, f.gaps, f.repeats, f.bad)
	}
}
