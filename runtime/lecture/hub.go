package lecture

import (
	"sync"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
)

// Hub fans one lecture's stamped frames out to its followers and keeps what a newcomer
// needs: the checkpoint and the frames after it. Memory's streams are hubs, and so are
// the NATS broker's: on the presenter's server the frames are stamped as they are
// published (Publish, StampCheckpoint), on the others they arrive stamped and are put
// in as they are (Put, Checkpoint, Load). Either way the followers of every server get
// the same bytes. The zero Hub is empty and open.
type Hub struct {
	mu     sync.Mutex
	seq    uint64   // the last frame's number
	cpSeq  uint64   // the number the checkpoint stands for
	cp     [][]byte // stamped with cpSeq
	log    [][]byte // frames cpSeq+1 .. seq; a checkpoint starts a new slice, so a state taken stays valid
	subs   []*hubSub
	closed Reason        // why the hub closed (0 while open)
	moved  chan struct{} // closed when seq moves, for WaitFor; made on demand
}

type hubSub struct {
	h *Hub
	f Follower
}

// HubState is what a hub holds: what a server that mirrors the lecture loads.
type HubState struct {
	CPSeq, Seq uint64
	CP, Log    [][]byte
	Ended      bool
}

// Publish stamps frame with the next number and adds it; it returns the number and the
// stamped frame, or once the hub is closed the last number and nil.
func (h *Hub) Publish(frame []byte) (uint64, []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 {
		return h.seq, nil
	}
	fr := protocol.Stamp(h.seq+1, frame)
	h.add(h.seq+1, fr)
	return h.seq, fr
}

// Put adds frame number seq, stamped already. Frames must come in order (seq =
// last+1); any other is ignored.
func (h *Hub) Put(seq uint64, frame []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || seq != h.seq+1 {
		return
	}
	h.add(seq, frame)
}

// add appends frame number seq and offers it to every follower. A follower that cannot
// take it is dropped: nobody waits for it. h.mu is held.
func (h *Hub) add(seq uint64, frame []byte) {
	h.seq = seq
	h.log = append(h.log, frame)
	h.fanOut(frame)
	h.notify()
}

// fanOut offers frame to every follower. h.mu is held.
func (h *Hub) fanOut(frame []byte) {
	subs := h.subs
	refused := FanOut(len(subs), func(i int) bool { return subs[i].f.Send(frame) })
	for k := len(refused) - 1; k >= 0; k-- { // from the last: removing swaps a later one in
		s := subs[refused[k]]
		h.remove(s)
		s.f.Close(Slow)
	}
}

func (h *Hub) notify() {
	if h.moved != nil {
		close(h.moved)
		h.moved = nil
	}
}

// StampCheckpoint stamps frames with the last number and makes them the checkpoint;
// the log starts over. It returns that number and the stamped frames (nil once the hub
// is closed).
func (h *Hub) StampCheckpoint(frames [][]byte) (uint64, [][]byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 {
		return h.seq, nil
	}
	cp := make([][]byte, len(frames))
	for i, f := range frames {
		cp[i] = protocol.Stamp(h.seq, f)
	}
	h.cpSeq, h.cp, h.log = h.seq, cp, nil
	return h.seq, cp
}

// Checkpoint replaces the checkpoint with frames stamped with number seq, the last
// frame's; the log starts over. A checkpoint for another number is ignored.
func (h *Hub) Checkpoint(seq uint64, frames [][]byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || seq != h.seq {
		return false
	}
	h.cpSeq, h.cp, h.log = seq, frames, nil
	return true
}

// Load replaces what the hub holds with st, the presenter's server's, and offers the
// followers the frames of st they have not had. When st's log no longer reaches back to
// the last frame they had, they cannot go on without a gap: they are dropped (as too
// slow) and come back for the checkpoint, like a follower that resumes from too far back.
func (h *Hub) Load(st HubState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || st.Seq < h.seq {
		return
	}
	if st.CPSeq > h.seq {
		subs := h.subs
		h.subs = nil
		for _, s := range subs {
			s.f.Close(Slow)
		}
	} else {
		for i, f := range st.Log {
			if st.CPSeq+uint64(i)+1 > h.seq {
				h.fanOut(f)
			}
		}
	}
	h.cpSeq, h.seq, h.cp, h.log = st.CPSeq, st.Seq, st.CP, st.Log
	h.notify()
}

// Follow attaches f: it first gets the frames after number after if the hub has them
// all, else the checkpoint and the log (after = 0 asks for that), then every frame.
func (h *Hub) Follow(after uint64, f Follower) (Subscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.closed {
	case 0:
	case Ended:
		return nil, ErrEnded
	default:
		return nil, ErrUnreachable
	}
	var catchUp [][]byte
	if after > 0 && after >= h.cpSeq && after <= h.seq {
		catchUp = h.log[after-h.cpSeq:]
	} else {
		catchUp = append(catchUp, h.cp...)
		catchUp = append(catchUp, h.log...)
	}
	for _, fr := range catchUp {
		if !f.Send(fr) {
			f.Close(Slow)
			return nil, ErrBehind
		}
	}
	s := &hubSub{h: h, f: f}
	h.subs = append(h.subs, s)
	return s, nil
}

// WaitFor waits until the hub has frame seq, or it closes, or d passes: a follower that
// comes over from a server ahead of this one resumes here without a gap.
func (h *Hub) WaitFor(seq uint64, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		h.mu.Lock()
		if h.seq >= seq || h.closed != 0 {
			h.mu.Unlock()
			return
		}
		if h.moved == nil {
			h.moved = make(chan struct{})
		}
		moved := h.moved
		h.mu.Unlock()
		select {
		case <-moved:
		case <-timer.C:
			return
		}
	}
}

// Cancel implements Subscription.
func (s *hubSub) Cancel() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.h.remove(s)
}

func (h *Hub) remove(s *hubSub) {
	for i, x := range h.subs {
		if x == s {
			last := len(h.subs) - 1
			h.subs[i] = h.subs[last]
			h.subs[last] = nil
			h.subs = h.subs[:last]
			return
		}
	}
}

// Close lets every follower go (why: Ended or Unreachable) and refuses new ones. The
// checkpoint and log stay: a server that mirrors the lecture may still ask for the
// frames it missed before the end.
func (h *Hub) Close(why Reason) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 {
		return
	}
	h.closed = why
	subs := h.subs
	h.subs = nil
	for _, s := range subs {
		s.f.Close(why)
	}
	h.notify()
}

// Snapshot is what the hub holds now.
func (h *Hub) Snapshot() HubState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return HubState{CPSeq: h.cpSeq, Seq: h.seq, CP: h.cp, Log: h.log[:len(h.log):len(h.log)], Ended: h.closed == Ended}
}

// Last is the number of the last frame.
func (h *Hub) Last() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

// LogLen is how many frames follow the checkpoint.
func (h *Hub) LogLen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.log)
}

// Followers is how many followers are attached.
func (h *Hub) Followers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
