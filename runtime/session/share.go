package session

import (
	"context"
	"sync/atomic"
	"time"
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

// evictedRecipes keeps the recipes of evicted sessions, the oldest forgotten first
// past the cap: a reload of the page rebuilds its run, at its step with its
// interventions, under the same id (Revive). A recipe is a few hundred bytes.
type evictedRecipes struct {
	byID  map[string]evicted
	order []string
}

type evicted struct {
	owner  string
	recipe Recipe
	bound  *boundRef // a lecture's fork stays tied to its lecture (bound.go)
}

// keepRecipe asks the evicted session for its recipe (a resting run answers without
// waking) and keeps it; a session too busy to answer at once is simply ended.
func (m *Manager) keepRecipe(s *Session) {
	ctx, cancel := context.WithTimeout(m.ctx, recipeWait)
	defer cancel()
	rec, err := s.Recipe(ctx)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e := &m.evicted
	if e.byID == nil {
		e.byID = map[string]evicted{}
	}
	e.byID[s.id] = evicted{owner: s.shares.owner, recipe: rec, bound: s.bound.Load()}
	e.order = append(e.order, s.id)
	for len(e.order) > m.max {
		delete(e.byID, e.order[0])
		e.order = e.order[1:]
	}
}

// recipeWait bounds how long an eviction waits for the evicted run's recipe.
const recipeWait = 100 * time.Millisecond

// Revive rebuilds the session id that was evicted to make room, from its recipe, for
// owner (who must be the one it was evicted from: the id alone is not enough to take
// someone else's run). It reports false when id was not evicted here, or when the
// server is full for owner.
func (m *Manager) Revive(owner, id string) (*Session, bool) {
	m.mu.Lock()
	ev, ok := m.evicted.byID[id]
	if ok && ev.owner == owner {
		delete(m.evicted.byID, id) // its place in order is skipped when it comes up
	}
	m.mu.Unlock()
	if !ok || ev.owner != owner {
		return nil, false
	}
	r := ev.recipe
	s, err := m.start(owner, id, r.Setup, func(s *Session) error {
		s.bound.Store(ev.bound)
		return s.restore(r.Interventions, r.Step)
	})
	if err != nil {
		return nil, false
	}
	return s, true
}
