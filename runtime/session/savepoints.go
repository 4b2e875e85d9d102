package session

import (
	"maps"
	"slices"
	"sync/atomic"

	"github.com/teach-dist/playground/runtime/sim"
)

// Seeks replay from a savepoint, not from step 0. A savepoint is a clone of the run
// (sim.Clone) and of what the session tracks of it, taken as the run first reaches a
// multiple of the spacing; a seek to step n clones the nearest one at or before n and
// replays the rest, so it costs at most one spacing of steps instead of n (at step
// 95 000 that was 80 ms of one core per seek). The kernel is deterministic, so the
// result is the run a full replay gives, byte for byte (savepoints_test.go).
//
// Memory: at most MaxSavepoints clones per session, and at most SavepointBytes of them
// by their estimated size (sim.Footprint: a 128-process Bakery with every process
// waiting is about 3 MB a clone, a token ring of 128 about 0.3 MB). When either is
// reached the spacing doubles and every other one is dropped, so a seek replays at
// most one spacing of steps, with the spacing growing as the run does (about
// horizon*2/MaxSavepoints, more for runs whose clones are large).
const (
	// DefaultSavepointEvery is the first spacing of savepoints, in steps: a replay of
	// this many steps takes about a millisecond (docs/benchmarks.md).
	DefaultSavepointEvery = 1024
	// DefaultMaxSavepoints bounds the clones a session keeps; short runs never reach
	// a savepoint and keep none.
	DefaultMaxSavepoints = 32
	// DefaultSavepointBytes bounds their estimated size per session: 200 sessions of
	// the largest runs hold at most 1.6 GB in savepoints, a session of a small run
	// far less (5 processes: a few KB a clone).
	DefaultSavepointBytes = 8 << 20
)

type savepoint struct {
	step    int
	sim     *sim.Sim // never stepped itself: a seek steps a clone of it
	size    int      // sim.Footprint when taken
	applied int
	t       trackState
}

// trackState is what track (track.go) carries from one step to the next; the rest of
// it is rebuilt (nodes, by syncNodes) or scratch.
type trackState struct {
	batchNo   int
	sentAt    map[int64]int
	lit       []litRule
	rules     [][]string
	ruleBatch []int
	ring      eventRing
	net       sim.Network
	lastSeq   int64
}

type savepoints struct {
	every    int // current spacing
	max      int
	maxBytes int
	bytes    int         // the sizes of list
	list     []savepoint // by step
	// replayed counts the steps rebuilds have replayed, coalesced the seeks skipped
	// for a later one of the same viewer (tests read them while the run goes on).
	replayed, coalesced atomic.Int64
}

func (sp *savepoints) init(every, max, maxBytes int) {
	sp.every, sp.max, sp.maxBytes, sp.list, sp.bytes = every, max, maxBytes, nil, 0
}

// thin doubles the spacing and keeps the savepoints on it.
func (sp *savepoints) thin() {
	sp.every *= 2
	kept := sp.list[:0]
	for _, p := range sp.list {
		if p.step%sp.every == 0 {
			kept = append(kept, p)
		} else {
			sp.bytes -= p.size
		}
	}
	clear(sp.list[len(kept):])
	sp.list = kept
}

// forgetFrom drops the savepoints at step or later: an intervention at step rewrote
// the run from there.
func (sp *savepoints) forgetFrom(step int) {
	k, _ := slices.BinarySearchFunc(sp.list, step, func(p savepoint, step int) int { return p.step - step })
	for _, p := range sp.list[k:] {
		sp.bytes -= p.size
	}
	clear(sp.list[k:])
	sp.list = sp.list[:k]
}

// before returns the latest savepoint at or before step, or nil.
func (sp *savepoints) before(step int) *savepoint {
	k, found := slices.BinarySearchFunc(sp.list, step, func(p savepoint, step int) int { return p.step - step })
	if found {
		return &sp.list[k]
	}
	if k == 0 {
		return nil
	}
	return &sp.list[k-1]
}

// save takes a savepoint of the current run if it stands on a multiple of the spacing
// that has none yet. Called between steps, after the step's recorded interventions.
func (s *Session) save() {
	sp := &s.saves
	step := s.sim.Steps()
	if sp.every <= 0 || step == 0 || step%sp.every != 0 {
		return
	}
	if n := len(sp.list); n > 0 && sp.list[n-1].step >= step {
		return // already kept (a replay passing a step it has)
	}
	size := s.sim.Footprint()
	for len(sp.list) > 0 && (len(sp.list) >= sp.max || sp.bytes+size > sp.maxBytes) {
		sp.thin()
	}
	if step%sp.every != 0 || sp.bytes+size > sp.maxBytes {
		return // off the new spacing, or larger than the whole budget
	}
	sp.bytes += size
	sp.list = append(sp.list, savepoint{step: step, sim: s.sim.Clone(nil), size: size, applied: s.applied, t: s.trackState()})
}

// trackState returns a copy of what is tracked now.
func (s *Session) trackState() trackState {
	return trackState{batchNo: s.batchNo, sentAt: s.sentAt, lit: s.lit, rules: s.rules,
		ruleBatch: s.ruleBatch, ring: s.ring, net: s.net, lastSeq: s.lastSeq}.clone()
}

// clone copies t deeply: a savepoint is resumed any number of times.
func (t trackState) clone() trackState {
	rules := make([][]string, len(t.rules))
	for i, r := range t.rules {
		rules[i] = slices.Clone(r)
	}
	t.rules, t.sentAt, t.lit, t.ruleBatch = rules, maps.Clone(t.sentAt), slices.Clone(t.lit), slices.Clone(t.ruleBatch)
	t.ring.buf, t.ring.off, t.ring.size = slices.Clone(t.ring.buf), slices.Clone(t.ring.off), slices.Clone(t.ring.size)
	return t
}

// resume makes a clone of p the current run, tracked as it was when p was taken.
func (s *Session) resume(p *savepoint) {
	s.sim = p.sim.Clone(s.onEvent)
	s.applied = p.applied
	t := p.t.clone()
	s.batchNo, s.sentAt, s.lit, s.rules, s.ruleBatch, s.ring, s.net, s.lastSeq =
		t.batchNo, t.sentAt, t.lit, t.rules, t.ruleBatch, t.ring, t.net, t.lastSeq
}
