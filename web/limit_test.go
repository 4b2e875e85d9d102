package web

import (
	"net/netip"
	"testing"
	"time"
)

func TestLimiterBurstThenRefill(t *testing.T) {
	clock := time.Unix(1000, 0)
	l := newLimiter(Rate{Per: 2, Every: time.Second, Burst: 3})
	l.now = func() time.Time { return clock }
	a := netip.MustParseAddr("192.0.2.1")
	b := netip.MustParseAddr("192.0.2.2")
	for i := range 3 {
		if ok, _ := l.allow(a); !ok {
			t.Fatalf("burst: request %d refused", i)
		}
	}
	ok, wait := l.allow(a)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("past the burst: ok %v, wait %v; want refused, 500ms", ok, wait)
	}
	if ok, _ := l.allow(b); !ok {
		t.Fatal("another client was limited by the first one")
	}
	clock = clock.Add(500 * time.Millisecond)
	if ok, _ := l.allow(a); !ok {
		t.Fatal("no token after half a second at 2/s")
	}
	if ok, _ := l.allow(a); ok {
		t.Fatal("two tokens after half a second at 2/s")
	}
	// Idle clients are forgotten once their bucket would be full again.
	clock = clock.Add(time.Hour)
	l.allow(b)
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets after an hour; want only the one just used", len(l.buckets))
	}
}

func TestLimiterOffWhenRateIsZero(t *testing.T) {
	var l *limiter
	if ok, _ := l.allow(netip.Addr{}); !ok {
		t.Fatal("a nil limiter refused")
	}
	l = newLimiter(Rate{})
	for range 1000 {
		if ok, _ := l.allow(netip.MustParseAddr("::1")); !ok {
			t.Fatal("a zero rate refused")
		}
	}
}
