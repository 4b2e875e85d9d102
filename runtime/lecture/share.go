package lecture

import "time"

// Fair shares of the lecture cap. Every lecture belongs to the client that started it
// (an IPv4 address or an IPv6 /64, as web/ratelimit counts it). A full registry makes
// room before it refuses a client holding fewer than its share: it ends a lecture of
// the client holding the most, when that client is over its share, one whose presenter
// is away first, then the one whose presenter was seen longest ago. So one department
// behind one NAT may run every lecture while nobody else wants one, and one address
// that started 51 lectures cannot keep another instructor out: its lectures past the
// share go first. A client at its share is refused as before (ErrFull).

// evictedWhy is why a lecture ended to make room; its followers read it.
const evictedWhy = "the server needed room for another lecture, and this one's network held more than its share"

// victimLocked returns the lecture to end so that client can start one, or nil when
// none may be. r.mu is held; the registry is full.
func (r *Registry) victimLocked(client string) *Lecture {
	held := map[string]int{}
	for _, l := range r.bySession {
		held[l.owner]++
	}
	share := r.opts.Share
	if held[client] >= share {
		return nil
	}
	top, most := "", 0
	for o, n := range held {
		if n > most || (n == most && o < top) {
			top, most = o, n
		}
	}
	if most <= share {
		return nil
	}
	var victim *Lecture
	var victimAway bool
	var victimSeen time.Time
	for _, l := range r.bySession {
		if l.owner != top {
			continue
		}
		l.mu.Lock()
		away, seen := len(l.presenters) == 0, l.seen
		l.mu.Unlock()
		if victim == nil || (away && !victimAway) || (away == victimAway && seen.Before(victimSeen)) {
			victim, victimAway, victimSeen = l, away, seen
		}
	}
	return victim
}
