package socket

import "github.com/gorilla/websocket"

// queued is a frame waiting to be written, with its type when the session delivered
// it (protocol.Frame's Type): what supersede goes by. Frames sent as bytes (errors,
// a lecture's stamped frames) have none and are never superseded.
type queued struct {
	frame []byte
	typ   string
	pm    *websocket.PreparedMessage // frame, framed once for every client that shares it (SendShared); or nil
	wire  []byte                     // pm's bytes on the wire, for the fast path (prepared.go); or nil
}

// sendQueue is what waits for a client's writePump: the send channel of gorilla's
// chat example, as a slice under the client's lock. It grows only while frames wait
// (a short one is reused: recycle). It is bounded in frames and in bytes (a snapshot
// of 128 processes is 1.5 MB, so 256 of them would be 400 MB for one tab that never
// reads), and a snapshot replaces an older one nobody has read yet (supersede).
type sendQueue struct {
	frames    []queued
	spare     []queued // the frames last taken, emptied, for the next ones (recycle)
	bytes     int      // of the frames queued and of those the writePump took, until written
	maxFrames int      // frames queued at once before the client counts as too slow
	maxBytes  int      // bytes queued or being written before it counts as too slow; 0: no bound
}

func (q *sendQueue) empty() bool { return len(q.frames) == 0 }

// full reports whether a frame of n bytes would pass a bound. One frame always fits
// an empty queue, however large: the bound is on what waits, not on what the session
// may send.
func (q *sendQueue) full(n int) bool {
	return len(q.frames) >= q.maxFrames || (q.bytes > 0 && q.maxBytes > 0 && q.bytes+n > q.maxBytes)
}

func (q *sendQueue) push(f queued) {
	q.frames = append(q.frames, f)
	q.bytes += len(f.frame)
}

// take hands the writePump every frame queued; their bytes count until written.
func (q *sendQueue) take() []queued {
	frames := q.frames
	q.frames, q.spare = q.spare, nil
	return frames
}

// written takes n bytes the writePump wrote off the bound.
func (q *sendQueue) written(n int) { q.bytes -= n }

// supersede drops, before a new snapshot is queued, the newest unsent snapshot and the
// events and state frames queued after it: the new snapshot is the whole state they
// led to. Other frames (errors, lecture and question frames, hello) stay, in order.
func (q *sendQueue) supersede() {
	last := -1
	for k, f := range q.frames {
		if f.typ == "snapshot" {
			last = k
		}
	}
	if last < 0 {
		return
	}
	kept := q.frames[:last]
	for _, f := range q.frames[last:] {
		switch f.typ {
		case "snapshot", "events", "state":
			q.bytes -= len(f.frame)
			continue
		}
		kept = append(kept, f)
	}
	clear(q.frames[len(kept):])
	q.frames = kept
}

// spareFrames bounds the queue kept for reuse: a follower that took a long catch-up
// does not keep its length for the rest of the lecture.
const spareFrames = 16

// recycle keeps frames, written and taken back, emptied, as the next queue: a
// follower's steady stream of frames then queues without allocating.
func (q *sendQueue) recycle(frames []queued) {
	if cap(frames) > spareFrames {
		return
	}
	clear(frames)
	q.spare = frames[:0]
}
