package session

import (
	"sync/atomic"
)

// Fair shares of the session cap. Every session belongs to a client (web/ratelimit:
// an IPv4 address or an IPv6 /64). A full manager makes room before it refuses:
//
//  1. a session nobody watches (no subscriber: no live socket, no lecture), the least
//     recently used first: its page reopens it from its URL, and a share link rebuilds
//     the same run by replay. A starter at its share may only take its own or those
//     of a client over its share;
//  2. otherwise, if the starter holds fewer than its share, the least recently used
//     session of the client holding the most, when that client is over its share.
//
// So a lecture hall behind one NAT may fill the whole server while nobody else
// wants a place, and one address that loaded 205 pages cannot keep a second address
// out: its unwatched sessions go first, and its watched ones past the share next.

// shareOf is what the manager tracks of a session for the shares (atomics: the
// session's goroutine writes them, the manager reads them under its own lock).
type shareOf struct {
	owner   string
	viewers atomic.Int32 // subscribers at the last command handled
	used    atomic.Int64 // clock nanos of the last command, attach or page load
	stop    func()       // ends the session's goroutine (its context's cancel)
}

// share is the number of sessions one client keeps while others wait for a place.
func (m *Manager) share() int {
	if m.opts.Share > 0 {
		return min(m.opts.Share, m.max)
	}
	return max(m.max/2, 1)
}

// victimLocked returns the session to end so that owner can start one: nil with no
// error when there is room, ErrFull when nobody may be evicted for owner.
func (m *Manager) victimLocked(owner string) (*Session, error) {
	if m.closed {
		return nil, ErrClosed
	}
	if len(m.byID) < m.max {
		return nil, nil
	}
	held := map[string]int{}
	for _, s := range m.byID {
		held[s.shares.owner]++
	}
	share := m.share()
	under := held[owner] < share
	var unwatched *Session
	for _, s := range m.byID {
		// A client at its share may free only its own places or those of clients
		// over theirs: never a page another client has just loaded.
		o := s.shares.owner
		if s.shares.viewers.Load() != 0 || !(under || o == owner || held[o] > share) {
			continue
		}
		if unwatched == nil || s.shares.used.Load() < unwatched.shares.used.Load() {
			unwatched = s
		}
	}
	if unwatched != nil {
		return unwatched, nil
	}
	if !under {
		return nil, ErrFull
	}
	top, most := "", 0
	for o, n := range held {
		if n > most || (n == most && o < top) {
			top, most = o, n
		}
	}
	if most <= share {
		return nil, ErrFull
	}
	var lru *Session
	for _, s := range m.byID {
		if s.shares.owner == top && (lru == nil || s.shares.used.Load() < lru.shares.used.Load()) {
			lru = s
		}
	}
	return lru, nil
}

// Held is the number of live sessions owner holds.
func (m *Manager) Held(owner string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.byID {
		if s.shares.owner == owner {
			n++
		}
	}
	return n
}
