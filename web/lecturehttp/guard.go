package lecturehttp

import (
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/teach-dist/playground/web/ratelimit"
)

// What one client may hold of a lecture, so that no one client can take a lecture
// from the others: a client is an IPv4 address or an
// IPv6 /64, as a router hands a home or a hall one of each. A lecture hall behind one
// NAT is one client, so the share is sized for a hall of 300 and more (default: 40 %
// of a lecture's places, 2,000 of 5,000), not for one person: what it stops is one
// address taking every place or flooding the tally, while the rest of the room (any
// other address) still joins and answers. The lecture counts both, on its own server
// for every server of a cluster (runtime/lecture/places.go). docs/security.md,
// "Lectures, viewers and seeks".

// ClientKey is the client a request counts for (ratelimit.ClientOf): its IPv4
// address, or its IPv6 /64, as every other share and rate limit counts it.
func ClientKey(r *http.Request) string { return ratelimit.ClientOfRequest(r).String() }

// guesses rate-limits wrong join codes per client from the first one: a lookup of a
// code that names no lecture takes a token, and a client without one is refused any
// lookup until it refills. A right code costs nothing, so a hall of students typing
// the code on the projector is never slowed; a script walking the code space gets
// Burst guesses, then Per per Every.
type guesses struct {
	rate  ratelimit.Rate
	mu    sync.Mutex
	perIP map[string]*rate.Limiter
}

// maxGuessers bounds the clients remembered; past it the oldest state is dropped
// (every bucket starts full again), which only helps a client that has many /64s.
const maxGuessers = 100_000

func (g *guesses) limiter(client string) *rate.Limiter {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.perIP == nil || len(g.perIP) >= maxGuessers {
		g.perIP = make(map[string]*rate.Limiter)
	}
	l := g.perIP[client]
	if l == nil {
		l = rate.NewLimiter(rate.Every(g.rate.Every/time.Duration(g.rate.Per)), g.rate.Burst)
		g.perIP[client] = l
	}
	return l
}

// allowed reports whether client may look a code up now.
func (g *guesses) allowed(client string) bool {
	if g.rate.Per <= 0 {
		return true
	}
	return g.limiter(client).Tokens() >= 1
}

// wrong charges client one wrong guess.
func (g *guesses) wrong(client string) {
	if g.rate.Per > 0 {
		g.limiter(client).Allow()
	}
}
