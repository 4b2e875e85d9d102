// Package gate bounds how many heavy requests (exports: replays that write megabytes)
// run at once, server-wide and per client, and how long each may run. A request over a
// bound is refused at once with a message and Retry-After, never queued: a queue of
// replays nobody waits for any more is the overload this package exists to stop.
//
// A client is the rate limiter's key: the address chi's ClientIP middleware found, an
// IPv6 address counted as its /64 (one host may hold a whole /64).
package gate

import (
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/web/ratelimit"
)

// Limits bound the requests a Gate lets through. Zero values take the defaults.
type Limits struct {
	Concurrent int           // at once, server-wide (default 4)
	PerClient  int           // at once, per client (default 2)
	Timeout    time.Duration // each request's deadline, from entering to its last byte (default 30 s)
}

func (l Limits) withDefaults() Limits {
	defaults.Positive(&l.Concurrent, 4)
	defaults.Positive(&l.PerClient, 2)
	defaults.Positive(&l.Timeout, 30*time.Second)
	return l
}

// Gate counts the requests it let through, in all and per client.
type Gate struct {
	lim Limits
	// Refused, if set, is told each refusal: "client" or "server" (metrics).
	Refused func(which string)

	mu    sync.Mutex
	n     int
	per   map[netip.Prefix]int
	after time.Duration // Retry-After of a refusal
}

// New returns a gate with these limits.
func New(lim Limits) *Gate {
	lim = lim.withDefaults()
	return &Gate{lim: lim, per: map[netip.Prefix]int{}, after: max(time.Second, lim.Timeout/4)}
}

// workTime is how long the work of a request may take: nine tenths of the time limit.
func (g *Gate) workTime() time.Duration { return g.lim.Timeout - g.lim.Timeout/10 }

// Limits are the gate's limits, defaults applied.
func (g *Gate) Limits() Limits { return g.lim }

// Client is the key of r's client (ratelimit.ClientOf): its address, an IPv6 one as
// its /64; one shared key when no address was found.
func Client(r *http.Request) netip.Prefix { return ratelimit.ClientOfRequest(r) }

// shared is the key of work done for everyone (Shared): it has no per-client share.
var shared = netip.PrefixFrom(netip.IPv6Unspecified(), 1)

// enter takes a place for client c; ok is false with the limit that refused it.
func (g *Gate) enter(c netip.Prefix) (which string, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case c != shared && g.per[c] >= g.lim.PerClient:
		return "client", false
	case g.n >= g.lim.Concurrent:
		return "server", false
	}
	g.n++
	g.per[c]++
	return "", true
}

func (g *Gate) leave(c netip.Prefix) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.per[c]--; g.per[c] <= 0 {
		delete(g.per, c)
	}
}

// Running is how many requests are inside the gate.
func (g *Gate) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

// Wrap lets h run when r's client and the server have a place left, with the gate's
// deadline on its context (h must watch it: a replay checks it between steps). A
// client over its share gets 429, a full server 503, both with Retry-After.
func (g *Gate) Wrap(h http.HandlerFunc) http.HandlerFunc { return g.wrap(h, Client) }

// Shared is Wrap for work done once for many clients (a lecture's export, computed
// for its whole hall behind one address): it counts toward the server's limit only.
// Its callers bound how much of it one client can cause.
func (g *Gate) Shared(h http.HandlerFunc) http.HandlerFunc {
	return g.wrap(h, func(*http.Request) netip.Prefix { return shared })
}

func (g *Gate) wrap(h http.HandlerFunc, client func(*http.Request) netip.Prefix) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := client(r)
		which, ok := g.enter(c)
		if !ok {
			if g.Refused != nil {
				g.Refused(which)
			}
			w.Header().Set("Retry-After", strconv.Itoa(int(g.after/time.Second)))
			if which == "client" {
				http.Error(w, "too many exports at once from your address ("+strconv.Itoa(g.lim.PerClient)+
					" at most): wait for one to finish, then try again", http.StatusTooManyRequests)
				return
			}
			http.Error(w, "the server is busy with other exports ("+strconv.Itoa(g.lim.Concurrent)+
				" at most at once): try again in a few seconds", http.StatusServiceUnavailable)
			return
		}
		defer g.leave(c)
		// The whole request ends by the time limit: the work stops a tenth before it,
		// which leaves the handler's last words (a cut export's note, a buffer's flush)
		// that tenth, and a client that does not read fails its write at the limit
		// itself, instead of holding its place in a blocked write.
		start := time.Now()
		ctx, cancel := context.WithDeadline(r.Context(), start.Add(g.workTime()))
		defer cancel()
		_ = http.NewResponseController(w).SetWriteDeadline(start.Add(g.lim.Timeout))
		h(w, r.WithContext(ctx))
	}
}
