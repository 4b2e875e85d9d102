package web

import (
	"net/netip"
	"sync"
	"time"
)

// Rate is a token bucket's refill and size: Per events every Every, bursts up to Burst.
type Rate struct {
	Per   int
	Every time.Duration
	Burst int
}

// limiter keeps one token bucket per client address. A lecture hall behind one NAT is
// one address, so the rates are set for a room of students, not for one person; what
// they stop is a script hammering the server.
type limiter struct {
	rate Rate
	now  func() time.Time

	mu      sync.Mutex
	buckets map[netip.Addr]*bucket
	swept   time.Time
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxClients bounds the table: past it the oldest-idle buckets are forgotten first
// (a full bucket is the same as no bucket, so forgetting idle ones changes nothing).
const maxClients = 100_000

func newLimiter(r Rate) *limiter {
	return &limiter{rate: r, now: time.Now, buckets: make(map[netip.Addr]*bucket)}
}

// allow takes one token for addr, or reports how long until one is there.
func (l *limiter) allow(addr netip.Addr) (bool, time.Duration) {
	if l == nil || l.rate.Per <= 0 {
		return true, 0
	}
	now := l.now()
	perToken := l.rate.Every / time.Duration(l.rate.Per)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b, ok := l.buckets[addr]
	if !ok {
		b = &bucket{tokens: float64(l.rate.Burst), last: now}
		l.buckets[addr] = b
	}
	b.tokens = min(float64(l.rate.Burst), b.tokens+float64(now.Sub(b.last))/float64(perToken))
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) * float64(perToken))
}

// sweep forgets buckets that have refilled: they hold nothing a new bucket would not.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute && len(l.buckets) < maxClients {
		return
	}
	l.swept = now
	full := time.Duration(l.rate.Burst) * l.rate.Every / time.Duration(l.rate.Per)
	for a, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, a)
		}
	}
	for a := range l.buckets { // still too many: drop arbitrary ones rather than grow
		if len(l.buckets) < maxClients {
			break
		}
		delete(l.buckets, a)
	}
}
