package session

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// drive runs the same commands on two sessions and fails unless every frame they send
// back is the same, byte for byte.
type twin struct {
	t    *testing.T
	s    [2]*Session
	c    [2]*sub
	name string
}

func (w *twin) do(cmd Command, types ...string) frame {
	w.t.Helper()
	var got [2]frame
	for k := range 2 {
		do(w.t, w.s[k], w.c[k], cmd)
		got[k] = w.c[k].next(w.t, types...)
	}
	if !bytes.Equal(got[0].raw, got[1].raw) {
		w.t.Fatalf("%s: %+v:\n savepoints  %s\n full replay %s", w.name, cmd, got[0].raw, got[1].raw)
	}
	return got[0]
}

// A seek that resumes from a savepoint gives the frames a replay from step 0 gives,
// byte for byte, for every algorithm: the snapshot, the steps after it, and a new
// intervention made there. Savepoints every 2 steps, at most 4 of them, so they are
// thinned out (the spacing doubles) on the way.
func TestSeekFromSavepointsIsAFullReplay(t *testing.T) {
	fast := NewManager(len(algorithms.All()), Options{SavepointEvery: 2, MaxSavepoints: 4})
	defer fast.Close()
	full := NewManager(len(algorithms.All()), Options{SavepointEvery: 1 << 30})
	defer full.Close()
	for _, spec := range algorithms.All() {
		t.Run(spec.Slug, func(t *testing.T) {
			doc := fmt.Sprintf(`{"version":2,"algorithm":%q,"seed":7,"cs":2}`, spec.Slug)
			ids := setupOf(t, doc).Config.IDs
			w := &twin{t: t, name: spec.Slug}
			w.s[0], w.c[0] = start(t, fast, doc)
			w.s[1], w.c[1] = start(t, full, doc)
			first := sim.ActRequest
			if spec.Family == sim.Election {
				first = sim.ActElect
			}
			horizon := 0
			for range 4 { // rounds of requests (or elections), each stepped until quiet
				for _, id := range ids {
					w.do(act(first, id), "events", "error")
				}
				for range 300 {
					f := w.do(Command{Kind: Step}, "events", "state")
					if f.Type == "state" {
						break
					}
					horizon = f.Step
				}
			}
			if horizon < 12 {
				t.Fatalf("the run stopped at step %d: too short to test savepoints", horizon)
			}
			for _, step := range []int{horizon, horizon / 2, 3, horizon - 1, 17, horizon / 3} {
				w.do(Command{Kind: Seek, Step: step}, "snapshot")
				for range 3 {
					w.do(Command{Kind: Step}, "events", "state")
				}
			}
			// An intervention in the middle rewrites the future: savepoints after it
			// must not be resumed.
			w.do(Command{Kind: Seek, Step: horizon / 2}, "snapshot")
			w.do(act(sim.ActCrash, ids[len(ids)-1]), "events")
			for range 10 {
				w.do(Command{Kind: Step}, "events", "state")
			}
			w.do(Command{Kind: Seek, Step: horizon/2 + 8}, "snapshot")
			w.do(Command{Kind: Seek, Step: horizon / 2}, "snapshot")
		})
	}
}

// tokenRing128 is the run of the report: it never goes quiet.
const tokenRing = `{"version":2,"algorithm":"token-ring","nodes":16,"seed":1}`

// A seek far into a long run replays at most one spacing of steps, whatever the step.
func TestSeekReplaysAtMostTheSpacing(t *testing.T) {
	const every, far = 256, 40_000
	m := NewManager(2, Options{SavepointEvery: every, MaxSavepoints: 1024})
	defer m.Close()
	s, err := m.StartAt(setupOf(t, tokenRing), nil, far)
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.next(t, "snapshot")
	for _, step := range []int{far - 1, far / 2, 1, far - every + 1, 12_345, far} {
		before := s.saves.replayed.Load()
		do(t, s, c, Command{Kind: Seek, Step: step})
		if f := c.next(t, "snapshot"); f.Step != step {
			t.Fatalf("seek %d: snapshot at %d", step, f.Step)
		}
		if n := s.saves.replayed.Load() - before; n >= every {
			t.Errorf("seek to %d replayed %d steps; want fewer than %d", step, n, every)
		}
	}
}

// Seeks of one viewer queued behind a busy run coalesce: only the last is replayed,
// and the viewer gets one snapshot, of that step. Another viewer's seek is its own.
func TestQueuedSeeksCoalesce(t *testing.T) {
	m := NewManager(2, Options{})
	defer m.Close()
	s, err := m.StartAt(setupOf(t, tokenRing), nil, 5000)
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.next(t, "snapshot")
	release := make(chan struct{})
	// Hold the run's goroutine so the seeks queue up behind it.
	if err := s.Checkpoint(func(_, _ protocol.Encoded) { <-release }); err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{4000, 3000, 2000, 1000} {
		do(t, s, c, Command{Kind: Seek, Step: step})
	}
	close(release)
	do(t, s, c, Command{Kind: Speed, Speed: 2}) // answered with a state frame, after the seeks
	var snaps []int
	for {
		f := c.next(t, "snapshot", "state")
		if f.Type == "state" {
			break
		}
		snaps = append(snaps, f.Step)
	}
	if len(snaps) != 1 || snaps[0] != 1000 || s.saves.coalesced.Load() != 3 {
		t.Fatalf("snapshots at %v, %d seeks coalesced; want one at 1000, 3 coalesced", snaps, s.saves.coalesced.Load())
	}
}

// BenchmarkSeekFar is a seek at step 95 000 of a 128-process token ring (a long run
// that a seek from step 0 makes costly): replaying from step 0, and from the nearest savepoint.
func BenchmarkSeekFar(b *testing.B) {
	const far = 95_000
	doc := `{"version":2,"algorithm":"token-ring","nodes":128,"seed":1}`
	for _, bc := range []struct {
		name  string
		every int
	}{{"from-step-0", 1 << 30}, {"savepoints", DefaultSavepointEvery}} {
		b.Run(bc.name, func(b *testing.B) {
			m := NewManager(1, Options{SavepointEvery: bc.every})
			defer m.Close()
			s, err := m.StartAt(setupOf(b, doc), nil, far)
			if err != nil {
				b.Fatal(err)
			}
			c := newSub()
			if err := s.Attach(c); err != nil {
				b.Fatal(err)
			}
			c.nextB(b, "snapshot")
			b.ResetTimer()
			for k := 0; b.Loop(); k++ {
				if err := s.Do(c, Command{Kind: Seek, Step: far - k%2}); err != nil {
					b.Fatal(err)
				}
				c.nextB(b, "snapshot")
			}
		})
	}
}

// nextB waits for a frame of this type in a benchmark (testwait needs a *testing.T).
func (s *sub) nextB(b *testing.B, typ string) {
	b.Helper()
	for f := range s.frames {
		if bytes.HasPrefix(f, []byte(`{"type":"`+typ+`"`)) {
			return
		}
	}
}

// The size a savepoint is budgeted at (sim.Footprint) is within a factor of two of
// what its clone holds on the heap, for the runs whose clones are large.
func TestFootprintEstimatesAClone(t *testing.T) {
	for _, doc := range []string{
		`{"version":2,"algorithm":"bakery","nodes":128,"seed":1}`,
		`{"version":2,"algorithm":"token-ring","nodes":128,"seed":1}`,
		`{"version":2,"algorithm":"maekawa","nodes":128,"seed":1}`,
	} {
		cfg := setupOf(t, doc).Config
		cfg.Until = 0
		var ivs []sim.Intervention
		if cfg.Spec.Slug != "token-ring" { // every process waits: messages in flight
			for i := range cfg.IDs {
				ivs = append(ivs, sim.Intervention{Action: sim.Action{Do: sim.ActRequest, Node: i, From: -1, To: -1}})
			}
		}
		r, err := sim.Replay(cfg, ivs, 3000, nil)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		clones := make([]*sim.Sim, 10)
		for k := range clones {
			clones[k] = r.Clone(nil)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := int(after.HeapAlloc-before.HeapAlloc) / len(clones)
		runtime.KeepAlive(clones)
		if est := r.Footprint(); est < held/2 || est > 2*held {
			t.Errorf("%s: footprint %d bytes, a clone holds %d", cfg.Spec.Slug, est, held)
		}
	}
}

// However large the clones, a session keeps no more of them than its byte budget,
// and still keeps some: seeks stay bounded by the (wider) spacing.
func TestSavepointsStayWithinTheirBudget(t *testing.T) {
	const budget = 1 << 20 // three clones of a 128-process token ring
	m := NewManager(1, Options{SavepointEvery: 64, MaxSavepoints: 1000, SavepointBytes: budget})
	defer m.Close()
	doc := `{"version":2,"algorithm":"token-ring","nodes":128,"seed":1}`
	s, err := m.StartAt(setupOf(t, doc), nil, 20_000)
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.next(t, "snapshot") // the savepoints were taken before it was sent
	sum := 0
	for _, p := range s.saves.list {
		sum += p.size
	}
	if n := len(s.saves.list); n == 0 || sum != s.saves.bytes || sum > budget {
		t.Fatalf("%d savepoints of %d bytes (counted %d); budget %d", n, sum, s.saves.bytes, budget)
	}
}
