package ratelimit

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Rate is a token bucket's refill and size: Per events every Every, bursts up to Burst.
type Rate struct {
	Per   int
	Every time.Duration
	Burst int
}

// bucket is r as a golang.org/x/time/rate limiter; a zero Rate never refuses.
func (r Rate) bucket() *rate.Limiter {
	if r.Per <= 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(rate.Every(r.Every/time.Duration(r.Per)), r.Burst)
}

// ParseRate reads a rate as the serve flags write it: "N/UNIT:BURST", where UNIT is s,
// m, h or a Go duration ("20/s:600", "120/m:300", "5/10s:20"); "off" or "0" limits
// nothing. Without ":BURST" the burst is N.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Rate{}, nil
	}
	spec, burstText, hasBurst := strings.Cut(s, ":")
	perText, unit, ok := strings.Cut(spec, "/")
	if !ok {
		return Rate{}, fmt.Errorf("%q: write N/UNIT[:BURST], e.g. 20/s:600, or off", s)
	}
	per, err := strconv.Atoi(perText)
	if err != nil || per < 1 {
		return Rate{}, fmt.Errorf("%q: %q is not a positive count", s, perText)
	}
	var every time.Duration
	switch unit {
	case "s":
		every = time.Second
	case "m":
		every = time.Minute
	case "h":
		every = time.Hour
	default:
		every, err = time.ParseDuration(unit)
		if err != nil || every <= 0 {
			return Rate{}, fmt.Errorf("%q: %q is not a unit (s, m, h or a duration like 10s)", s, unit)
		}
	}
	if every/time.Duration(per) <= 0 {
		return Rate{}, fmt.Errorf("%q: more than one event per nanosecond", s)
	}
	burst := per
	if hasBurst {
		burst, err = strconv.Atoi(burstText)
		if err != nil || burst < 1 {
			return Rate{}, fmt.Errorf("%q: burst %q is not a positive count", s, burstText)
		}
	}
	return Rate{Per: per, Every: every, Burst: burst}, nil
}

// String writes r as ParseRate reads it.
func (r Rate) String() string {
	if r.Per <= 0 {
		return "off"
	}
	unit := r.Every.String()
	switch r.Every {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return fmt.Sprintf("%d/%s:%d", r.Per, unit, r.Burst)
}

// limiter keeps one token bucket per client (an IPv4 address or an IPv6 /64). A lecture hall behind one NAT is
// one address, so the rates are set for a room of students, not for one person; what
// they stop is a script hammering the server.
type limiter struct {
	rate Rate
	now  func() time.Time

	mu      sync.Mutex
	buckets map[Client]*rate.Limiter
	swept   time.Time
}

// maxClients bounds the table: past it the oldest-idle buckets are forgotten first
// (a full bucket is the same as no bucket, so forgetting idle ones changes nothing).
const maxClients = 100_000

func newLimiter(r Rate) *limiter {
	return &limiter{rate: r, now: time.Now, buckets: make(map[Client]*rate.Limiter)}
}

// allow takes one token for addr's client (ClientOf), or reports how long until one
// is there.
func (l *limiter) allow(addr netip.Addr) (bool, time.Duration) {
	if l == nil || l.rate.Per <= 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	key := ClientOf(addr)
	b, ok := l.buckets[key]
	if !ok {
		b = l.rate.bucket()
		l.buckets[key] = b
	}
	// A reservation tells how long the token takes; one not taken is given back.
	res := b.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// sweep forgets buckets that have refilled: they hold nothing a new bucket would not.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute && len(l.buckets) < maxClients {
		return
	}
	l.swept = now
	for a, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.rate.Burst) {
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
