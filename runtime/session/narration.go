package session

import (
	"encoding/json"
	"slices"
)

// eventRing keeps the latest Recent encoded trace events (the narration log a
// snapshot carries) in one circular byte buffer. A hundred separate slices, each
// allocated among the short-lived frames of a playing run, pinned half-empty heap
// spans long after (docs/benchmarks.md, "Resident memory per idle session"); one
// buffer is one allocation, replaced only when the events outgrow it.
type eventRing struct {
	buf  []byte
	off  []int32 // per slot: where its event starts in buf
	size []int32 // per slot: its length
	next int     // the slot the next event takes
	n    int     // events held, at most Recent
	head int     // where the newest event ends
}

// ringStart is the first buffer's size: about 30 short events.
const ringStart = 4096

func (r *eventRing) reset() { r.next, r.n, r.head = 0, 0, 0 }

// add keeps ev (copied) and forgets the oldest event beyond Recent.
func (r *eventRing) add(ev []byte) {
	if r.off == nil {
		r.off, r.size = make([]int32, Recent), make([]int32, Recent)
	}
	if !r.fits(len(ev)) {
		r.grow(len(ev))
	}
	at := r.head
	if at+len(ev) > len(r.buf) {
		at = 0 // the tail is too short: wrap, leaving it unused
	}
	copy(r.buf[at:], ev)
	r.off[r.next], r.size[r.next] = int32(at), int32(len(ev))
	r.next = (r.next + 1) % Recent
	r.n = min(r.n+1, Recent)
	r.head = at + len(ev)
}

// kept is how many events stay when one more is added.
func (r *eventRing) kept() int { return min(r.n, Recent-1) }

// fits reports whether m more bytes go in without overwriting an event that stays.
// The events that stay lie in order from the oldest one's start to head, either in
// one piece or wrapped around the end of buf.
func (r *eventRing) fits(m int) bool {
	k := r.kept()
	if k == 0 {
		return m <= len(r.buf)
	}
	oldest := int(r.off[(r.next-k+Recent)%Recent])
	if oldest < r.head { // in one piece: room after head, or before the oldest
		return r.head+m <= len(r.buf) || m <= oldest
	}
	return r.head+m <= oldest // wrapped: only the gap between head and the oldest
}

// grow moves the events that stay, in order, to the front of a larger buffer.
func (r *eventRing) grow(m int) {
	k := r.kept()
	need := m
	for j := range k {
		need += int(r.size[(r.next-k+j+Recent)%Recent])
	}
	// A quarter to spare, rounded up to the allocator's size class.
	nb := slices.Grow([]byte(nil), max(ringStart, need+need/4))
	nb = nb[:cap(nb)]
	at := 0
	for j := range k {
		s := (r.next - k + j + Recent) % Recent
		copy(nb[at:], r.buf[r.off[s]:r.off[s]+r.size[s]])
		r.off[s] = int32(at)
		at += int(r.size[s])
	}
	r.buf, r.head = nb, at
}

// events returns the events held, oldest first. The slices alias the buffer: use
// them before the next add.
func (r *eventRing) events() []json.RawMessage {
	out := make([]json.RawMessage, 0, r.n)
	for j := range r.n {
		s := (r.next - r.n + j + Recent) % Recent
		out = append(out, r.buf[r.off[s]:r.off[s]+r.size[s]])
	}
	return out
}
