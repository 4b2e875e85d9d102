package ratelimit

import (
	"errors"
	"net/netip"
	"strings"
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

func TestClientIPSpecs(t *testing.T) {
	for _, ok := range []string{"", "10.0.0.0/8", "10.0.0.0/8, 192.168.1.7", "::1,127.0.0.1/32", "X-Real-IP=10.0.0.0/8", "CF-Connecting-IP=173.245.48.0/20,2400:cb00::/32", "X-Forwarded-For=10.0.0.1"} {
		if _, err := ClientIP(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "X-Real-IP", "X-Real-IP=", "X Real=10.0.0.0/8", "=10.0.0.0/8", ",", "X-Real-IP=nope"} {
		if _, err := ClientIP(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
	}{
		{"20/s:600", Rate{20, time.Second, 600}},
		{"120/m:300", Rate{120, time.Minute, 300}},
		{"5/10s", Rate{5, 10 * time.Second, 5}},
		{"1/h:1", Rate{1, time.Hour, 1}},
		{"off", Rate{}},
		{"0", Rate{}},
	} {
		got, err := ParseRate(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if err == nil {
			back, err := ParseRate(got.String())
			if err != nil || back != got {
				t.Errorf("%q: String %q reads back as %+v, %v", tc.in, got.String(), back, err)
			}
		}
	}
	for _, bad := range []string{"", "20", "20/", "x/s", "-1/s", "20/s:0", "20/s:x", "20/fortnight", "20/0s", "2000000000/1ns"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// One IPv6 /64 is one client: a subscriber's 2^64 addresses share a bucket, while
// two /64s and two IPv4 addresses do not.
func TestLimiterKeysIPv6ByPrefix64(t *testing.T) {
	for _, c := range []struct {
		name   string
		a, b   string
		shared bool
	}{
		{"one /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:fffe", true},
		{"two /64s", "2001:db8:1:2::1", "2001:db8:1:3::1", false},
		{"IPv4 and its mapped form", "192.0.2.7", "::ffff:192.0.2.7", true},
		{"two IPv4 addresses", "127.0.0.1", "127.0.0.2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLimiter(Rate{Per: 1, Every: time.Hour, Burst: 1})
			if ok, _ := l.allow(netip.MustParseAddr(c.a)); !ok {
				t.Fatal("first request refused")
			}
			ok, _ := l.allow(netip.MustParseAddr(c.b))
			if ok == c.shared {
				t.Fatalf("second address allowed %v; want shared bucket %v", ok, c.shared)
			}
			if got, want := ClientOf(netip.MustParseAddr(c.a)) == ClientOf(netip.MustParseAddr(c.b)), c.shared; got != want {
				t.Fatalf("same client %v; want %v", got, want)
			}
		})
	}
}

// Starlark loads are counted per client: past its burst a client's load is refused
// with a *LoadError that says when the next one can load, an IPv6 /64 counts as one
// client, another client still loads, and a zero rate refuses nothing.
func TestLoadsAreChargedPerClient(t *testing.T) {
	clock := time.Unix(1000, 0)
	var limited []string
	l := New(Limits{Loads: Rate{Per: 1, Every: 10 * time.Second, Burst: 2}}, Hooks{Limited: func(n string) { limited = append(limited, n) }})
	l.loads.now = func() time.Time { return clock }
	v6a, v6b := netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2") // one /64
	for k, c := range []struct {
		addr    netip.Addr
		refused bool
	}{
		{v6a, false}, {v6b, false}, {v6a, true}, {netip.MustParseAddr("192.0.2.7"), false},
	} {
		err := l.Load(c.addr)()
		var le *LoadError
		if got := errors.As(err, &le); got != c.refused {
			t.Fatalf("load %d from %s: %v, want refused %v", k, c.addr, err, c.refused)
		}
		if c.refused && (le.Wait != 10*time.Second || !strings.Contains(err.Error(), "new ones can load in 10 seconds")) {
			t.Fatalf("the refusal: wait %v, %q", le.Wait, err)
		}
	}
	if len(limited) != 1 || limited[0] != "loads" {
		t.Fatalf("metrics told %v, want one loads refusal", limited)
	}
	if err := New(Limits{}, Hooks{}).Load(v6a)(); err != nil {
		t.Fatalf("a zero rate refused a load: %v", err)
	}
	if err := (*Conn)(nil).Load(); err != nil {
		t.Fatalf("a nil Conn refused a load: %v", err)
	}
}
