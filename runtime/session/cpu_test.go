package session

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/teach-dist/playground/runtime/sim"
)

// The fair level shares the cores by max-min fairness: clients under it keep their
// use, the rest share what is left equally.
func TestWaterLevel(t *testing.T) {
	tests := []struct {
		rates    []float64
		capacity float64
		want     float64
	}{
		{[]float64{0.2, 0.3}, 1, math.Inf(1)},      // they fit
		{[]float64{4}, 1.5, 1.5},                   // one client alone has the capacity
		{[]float64{0.01, 4}, 1.5, 1.49},            // a visitor's use is left whole
		{[]float64{2, 2}, 1, 0.5},                  // two equal clients halve it
		{[]float64{0.1, 0.2, 3, 5}, 1.5, 0.6},      // two small, two big
		{[]float64{0.4, 0.4, 0.4, 0.4}, 1.5, .375}, // all equal
	}
	for _, tt := range tests {
		sum := 0.0
		for _, r := range tt.rates {
			sum += r
		}
		if got := waterLevel(append([]float64(nil), tt.rates...), sum, tt.capacity); math.Abs(got-tt.want) > 1e-9 && got != tt.want {
			t.Errorf("waterLevel(%v, %v) = %v, want %v", tt.rates, tt.capacity, got, tt.want)
		}
	}
}

// A client is slowed by a power of two as far under its share as it is over it.
func TestFactorOf(t *testing.T) {
	tests := []struct{ level, rate, want float64 }{
		{1, 0.5, 1},
		{1, 1.05, 1}, // within a tenth: not slowed
		{1, 1.5, 0.5},
		{1, 2, 0.5},
		{1, 3, 0.25},
		{1, 16, 1.0 / 16},
		{1, 1e6, MinFactor},
		{math.Inf(1), 100, 1},
	}
	for _, tt := range tests {
		if got := factorOf(tt.level, tt.rate); got != tt.want {
			t.Errorf("factorOf(%v, %v) = %v, want %v", tt.level, tt.rate, got, tt.want)
		}
	}
}

func startFor(t *testing.T, m *Manager, owner, doc string) (*Session, *sub) {
	t.Helper()
	s, err := m.StartFor(owner, setupOf(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.next(t, "hello")
	c.next(t, "snapshot")
	return s, c
}

// A session's work (steps, seeks, replays) is charged to its client, and to nobody
// else.
func TestSessionsChargeTheirClient(t *testing.T) {
	cpu := NewCPU(CPUOptions{})
	m := NewManager(4, Options{CPU: cpu})
	t.Cleanup(m.Close)
	s, c := startFor(t, m, "10.0.0.1", ra3)
	requestAndStep(t, s, c, 0, 5)
	do(t, s, c, Command{Kind: Seek, Step: 1})
	c.next(t, "snapshot")
	if r := cpu.Rate("10.0.0.1"); r <= 0 {
		t.Errorf("the client's use after its steps and seek: %v", r)
	}
	if r := cpu.Rate("10.0.0.2"); r != 0 {
		t.Errorf("another client was charged %v", r)
	}
}

// When the clients' work is more than the cores, a client over its share has its
// runs slowed, and says so in its clock frames; a client under it (a fresh visitor)
// plays at its own speed. Back under its share, the slowed client goes at its speed
// again.
func TestAClientOverItsShareIsSlowedAndOthersAreNot(t *testing.T) {
	var r *clocked
	cpu := NewCPU(CPUOptions{Cores: 1, Now: func() time.Time { return r.clock.Now() }, Starved: func() bool { return false }})
	r = newClocked(t, Options{CPU: cpu})
	// The heavy client's other runs: ten seconds of work in the last moment; the
	// visitor's page, a millisecond.
	cpu.Charge("10.0.0.1", 10*time.Second)
	cpu.Charge("10.0.0.2", time.Millisecond)
	heavy, hc := startFor(t, r.ms[0], "10.0.0.1", ra3)
	fresh, fc := startFor(t, r.ms[0], "10.0.0.2", ra3)
	for _, x := range []struct {
		s *Session
		c *sub
	}{{heavy, hc}, {fresh, fc}} {
		do(t, x.s, x.c, Command{Kind: Speed, Speed: MaxSpeed})
		x.c.next(t, "state")
		for n := range 3 {
			do(t, x.s, x.c, act(sim.ActRequest, n))
			x.c.next(t, "events")
		}
		do(t, x.s, x.c, Command{Kind: Play})
		x.c.next(t, "state")
	}
	r.pass(t, 0)
	r.pass(t, 250*time.Millisecond)
	// What each showed: the latest virtual time and the slowed fractions its frames said.
	shown := func(c *sub) (int, map[float64]bool) {
		last, slowed := 0, map[float64]bool{}
		for len(c.frames) > 0 {
			f := c.next(t, "events", "state")
			slowed[f.Slowed] = true
			last = max(last, f.T)
		}
		return last, slowed
	}
	ht, hs := shown(hc)
	ft, fs := shown(fc)
	want := factorOf(1, cpu.Rate("10.0.0.1"))
	if want >= 1 || !hs[want] || len(hs) != 1 {
		t.Errorf("the heavy client's frames said slowed %v, want only %v", keys(hs), want)
	}
	if !fs[0] || len(fs) != 1 {
		t.Errorf("the fresh visitor's frames said slowed %v, want none", keys(fs))
	}
	if ft < 4 || float64(ht) > float64(ft)*want+1 {
		t.Errorf("in 250 ms at 16x the heavy run showed virtual time %d, the fresh one %d (slowed %v)", ht, ft, want)
	}
	// Its use fades (nothing charged for a minute): it is under its share again.
	r.clock.now = r.clock.Now().Add(time.Minute)
	do(t, heavy, hc, act(sim.ActRequest, 0))
	r.pass(t, 250*time.Millisecond)
	var last frame
	for len(hc.frames) > 0 {
		last = hc.next(t, "events", "state")
	}
	if last.Type == "" || last.Slowed != 0 {
		t.Errorf("after its use faded the heavy client's latest frame says slowed %v: %s", last.Slowed, last.raw)
	}
}

func keys(m map[float64]bool) []string {
	var out []string
	for k := range m {
		out = append(out, fmt.Sprint(k))
	}
	return out
}

// The sessions of a client over its share take turns: while one works, another of the
// same client waits, and any other client works at once; a turn given back with a
// rest comes back only after it.
func TestTurnsOfAClient(t *testing.T) {
	cpu := NewCPU(CPUOptions{Cores: 1})
	release, ok := cpu.Turn(context.Background(), "a")
	if !ok {
		t.Fatal("the first turn")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := cpu.Turn(done, "a"); ok {
		t.Fatal("a second session of the client worked while the first held the turn")
	}
	other, ok := cpu.Turn(context.Background(), "b")
	if !ok {
		t.Fatal("another client waited for the first's turn")
	}
	other(0)
	release(time.Millisecond) // back after the rest
	again, ok := cpu.Turn(context.Background(), "a")
	if !ok {
		t.Fatal("the turn never came back")
	}
	again(0)
}

// A slowed client's turn rests so that its work keeps a processor busy for at most a
// quarter of the fair level, and at least an eighth of it.
func TestRest(t *testing.T) {
	tests := []struct {
		level float64
		work  time.Duration
		want  time.Duration
	}{
		{math.Inf(1), time.Millisecond, 0},
		{4, time.Millisecond, 0},                       // the level allows a whole processor
		{2, time.Millisecond, time.Millisecond},        // half of one
		{1, time.Millisecond, 3 * time.Millisecond},    // a quarter
		{0.25, time.Millisecond, 7 * time.Millisecond}, // never under an eighth
		{0.01, time.Millisecond, 7 * time.Millisecond},
		{0.5, 5 * time.Millisecond, 35 * time.Millisecond}, // an eighth
	}
	for _, tt := range tests {
		cpu := NewCPU(CPUOptions{Cores: 1})
		cpu.level = tt.level
		if got := cpu.Rest(tt.work); got != tt.want {
			t.Errorf("level %v, work %v: rest %v, want %v", tt.level, tt.work, got, tt.want)
		}
	}
}

// A client is slowed only against others: alone it keeps its speed however much it
// uses; with another client working it is slowed when the rates pass the cores, or,
// when goroutines wait for a processor (the process gets fewer than its cores), when
// it uses more than its part of what the clients use.
func TestSlowedOnlyAgainstOthers(t *testing.T) {
	tests := []struct {
		name    string
		heavy   time.Duration // work charged in the last moment, with a 1 s half-life
		visitor time.Duration
		starved bool
		want    float64 // the heavy client's factor
	}{
		{"alone, far over the cores", 100 * time.Second, 0, false, 1},
		{"alone, starved", 100 * time.Second, 0, true, 1},
		{"with a visitor, under the cores", 500 * time.Millisecond, time.Millisecond, false, 1},
		{"with a visitor, over the cores", 20 * time.Second, time.Millisecond, false, 1.0 / 16},
		{"with a visitor, under the cores but starved", 500 * time.Millisecond, time.Millisecond, true, 1.0 / 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
			cpu := NewCPU(CPUOptions{Cores: 1, HalfLife: time.Second, Now: func() time.Time { return now },
				Starved: func() bool { return tt.starved }})
			cpu.Charge("heavy", tt.heavy)
			cpu.Charge("visitor", tt.visitor)
			if got := cpu.Factor("heavy"); got != tt.want {
				t.Errorf("the heavy client's factor %v (rate %.3f), want %v", got, cpu.Rate("heavy"), tt.want)
			}
			if got := cpu.Factor("visitor"); got != 1 {
				t.Errorf("the visitor's factor %v", got)
			}
		})
	}
}
