package socket

import (
	"time"

	"github.com/gorilla/websocket"
)

// frameWriter is how a client's frames reach its connection: the client (client.go)
// decides what to write and when, its frameWriter how. plainWriter writes each
// message with gorilla, as gorilla's chat example does; batchWriter (batch.go), for a
// connection Hub.Upgrade made, gathers a batch's messages into one system call and
// writes a shared frame to an idle client at once, from its sender's goroutine.
type frameWriter interface {
	// writeBatch writes frames as text messages, then a ping if ping, under
	// deadline; a frame writeNow began goes first.
	writeBatch(frames []queued, ping bool, deadline time.Time) error
	// writeNow is the fast path, for a client with nothing else to write: it writes q
	// at once, without blocking. ok: it went (rest: only in part, the rest waits for
	// the next writeBatch); not ok: nothing was written, q is to be queued. Call with
	// the client's lock held.
	writeNow(q queued) (ok, rest bool)
	// unfinished reports whether a frame writeNow began waits for writeBatch.
	unfinished() bool
}

// writerFor is the frameWriter of conn: batched when Hub.Upgrade made its network
// connection, else plain.
func writerFor(conn *websocket.Conn) frameWriter {
	if conn != nil {
		if bc, ok := conn.UnderlyingConn().(*batchConn); ok {
			return &batchWriter{ws: conn, conn: bc, fastGap: fastGap}
		}
	}
	return plainWriter{ws: conn}
}

// plainWriter writes through gorilla alone: a system call per message.
type plainWriter struct{ ws *websocket.Conn }

func (w plainWriter) writeBatch(frames []queued, ping bool, deadline time.Time) error {
	_ = w.ws.SetWriteDeadline(deadline)
	return writeEach(w.ws, frames, ping)
}

func (plainWriter) writeNow(queued) (ok, rest bool) { return false, false }

func (plainWriter) unfinished() bool { return false }

// writeEach writes frames as text messages, then a ping if ping.
func writeEach(ws *websocket.Conn, frames []queued, ping bool) error {
	for _, q := range frames {
		var err error
		if q.pm != nil {
			err = ws.WritePreparedMessage(q.pm)
		} else {
			err = ws.WriteMessage(websocket.TextMessage, q.frame)
		}
		if err != nil {
			return err
		}
	}
	if ping {
		return ws.WriteMessage(websocket.PingMessage, nil)
	}
	return nil
}
