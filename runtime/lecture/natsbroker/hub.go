package natsbroker

import (
	"sync"
	"time"

	"github.com/teach-dist/playground/runtime/lecture"
)

// hub fans one lecture's stamped frames out to this server's followers and keeps what a
// newcomer needs: the checkpoint and the frames after it. It is lecture.Memory's topic
// without the stamping: on the presenter's server the stream stamps each frame and hands
// it to its hub, on the others the frames arrive stamped over NATS and a mirror hands
// them to its hub. Either way the followers of every server get the same bytes.
type hub struct {
	mu     sync.Mutex
	seq    uint64   // the last frame's number
	cpSeq  uint64   // the number the checkpoint stands for
	cp     [][]byte // stamped with cpSeq
	log    [][]byte // frames cpSeq+1 .. seq; a checkpoint starts a new slice, so a state taken stays valid
	subs   []*hubSub
	closed lecture.Reason // why the hub closed (0 while open)
	moved  chan struct{}  // closed when seq moves, for waitFor; made on demand
}

type hubSub struct {
	h *hub
	f lecture.Follower
}

// state is what a hub holds: what a server that mirrors the lecture loads.
type state struct {
	cpSeq, seq uint64
	cp, log    [][]byte
	ended      bool
}

// put appends frame number seq and offers it to every follower. A follower that cannot
// take it is dropped: nobody waits for it. Frames must come in order (seq = last+1).
func (h *hub) put(seq uint64, frame []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || seq != h.seq+1 {
		return
	}
	h.seq = seq
	h.log = append(h.log, frame)
	h.fanOut(frame)
	h.notify()
}

// fanOut offers frame to every follower. h.mu is held.
func (h *hub) fanOut(frame []byte) {
	subs := h.subs
	refused := lecture.FanOut(len(subs), func(i int) bool { return subs[i].f.Send(frame) })
	for k := len(refused) - 1; k >= 0; k-- {
		s := subs[refused[k]]
		h.remove(s)
		s.f.Close(lecture.Slow)
	}
}

func (h *hub) notify() {
	if h.moved != nil {
		close(h.moved)
		h.moved = nil
	}
}

// checkpoint replaces the checkpoint with frames stamped with number seq, the last
// frame's; the log starts over. A checkpoint for another number is ignored.
func (h *hub) checkpoint(seq uint64, frames [][]byte) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || seq != h.seq {
		return false
	}
	h.cpSeq, h.cp, h.log = seq, frames, nil
	return true
}

// load replaces what the hub holds with st, the presenter's server's, and offers the
// followers the frames of st they have not had. When st's log no longer reaches back to
// the last frame they had, they cannot go on without a gap: they are dropped (as too
// slow) and come back for the checkpoint, like a follower that resumes from too far back.
func (h *hub) load(st state) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed != 0 || st.seq < h.seq {
		return
	}
	if st.cpSeq > h.seq {
		subs := h.subs
		h.subs = nil
		for _, s := range subs {
			s.f.Close(lecture.Slow)
		}
	} else {
		for i, f := range st.log {
			if st.cpSeq+uint64(i)+1 > h.seq {
				h.fanOut(f)
			}
		}
	}
	h.cpSeq, h.seq, h.cp, h.log = st.cpSeq, st.seq, st.cp, st.log
	h.notify()
}

// follow attaches f: it first gets the frames after number after if the hub has them
// all, else the checkpoint and the log (after = 0 asks for that), then every frame.
func (h *hub) follow(after uint64, f lecture.Follower) (*hubSub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch h.closed {
	case 0:
	case lecture.Ended:
		return nil, lecture.ErrEnded
	default:
		return nil, lecture.ErrUnreachable
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
			f.Close(lecture.Slow)
			return nil, lecture.ErrBehind
		}
	}
	s := &hubSub{h: h, f: f}
	h.subs = append(h.subs, s)
	return s, nil
}

// waitFor waits until the hub has frame seq, or it closes, or d passes: a follower that
// comes over from a server ahead of this one resumes here without a gap.
func (h *hub) waitFor(seq uint64, d time.Duration) {
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

// Cancel implements lecture.Subscription.
func (s *hubSub) Cancel() {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.h.remove(s)
}

func (h *hub) remove(s *hubSub) {
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

// close lets every follower go (why: Ended or Unreachable) and refuses new ones. The
// checkpoint and log stay: a server that mirrors the lecture may still ask for the
// frames it missed before the end.
func (h *hub) close(why lecture.Reason) {
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

// snapshot is what the hub holds now.
func (h *hub) snapshot() state {
	h.mu.Lock()
	defer h.mu.Unlock()
	return state{cpSeq: h.cpSeq, seq: h.seq, cp: h.cp, log: h.log[:len(h.log):len(h.log)], ended: h.closed == lecture.Ended}
}

func (h *hub) last() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}

func (h *hub) logLen() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.log)
}

func (h *hub) followers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
