package explore

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// The parallel search must give the same answer whatever the number of workers: the
// same verdict, property, numbers of states and transitions, depth, entry bound and
// the same counterexample, which the kernel replays into the same trace, byte for
// byte. The harness is the soundness tests' (every configuration of testdata and the
// generated ones), reduced and full, each search bounded; a search stopped by the
// state bound must stop at the same place too.

// parallelBound keeps each of the harness's searches short.
const parallelBound = 40_000

// goroutine is Options.Go as a command gives it: the tests start the workers.
func goroutine(fn func()) { go fn() }

func TestParallelSearchIsIndependentOfWorkers(t *testing.T) {
	for _, c := range soundnessCases(t) {
		for _, full := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/full=%v", c.name, full), func(t *testing.T) {
				var want []byte
				for _, workers := range []int{1, 2, 3, 8} {
					res := explore(t, c.sc, Options{NoReduce: full, MaxStates: parallelBound, Workers: workers, Go: goroutine})
					got := workerIndependent(t, res)
					if want == nil {
						want = got
						continue
					}
					if string(got) != string(want) {
						t.Fatalf("%d workers:\n%s\n1 worker:\n%s", workers, got, want)
					}
				}
			})
		}
	}
}

// workerIndependent is everything a result says that must not depend on the workers
// (not the time, nor the memory the interner took), with the kernel's trace of the
// counterexample.
func workerIndependent(t *testing.T, res *Result) []byte {
	t.Helper()
	r := *res
	r.Seconds, r.Memory, r.Workers = 0, 0, 0
	if r.Storage != nil {
		// The states, their tables and edges are the same whatever the workers; the
		// interner's numbers and the workers' caches are not, and the parts hold
		// interned numbers as varints, so their bytes may differ by a page.
		s := *r.Storage
		s.Interned, s.States = 0, 0
		r.Storage = &s
	}
	var out struct {
		Result *Result
		Trace  []sim.Event
	}
	out.Result = &r
	if cx := r.Counterexample; cx != nil {
		out.Trace = replayTrace(t, cx.Scenario)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replayTrace runs a counterexample through the kernel and returns its trace.
func replayTrace(t *testing.T, sc *scenarios.Scenario) []sim.Event {
	t.Helper()
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	return recordRun(t, cfg)
}

// recordRun runs a configuration through the kernel and returns its trace.
func recordRun(t *testing.T, cfg sim.Config) []sim.Event {
	t.Helper()
	var rec sim.Recorder
	s, err := sim.New(cfg, rec.Sink())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if len(rec.Events) == 0 {
		t.Fatal("the run has an empty trace")
	}
	return rec.Events
}

// The arena's pages fill to the byte: strings of 254 bytes (256 with their length)
// fill a page exactly, and the next must start the next page, not skip one. Every
// string reads back and is found.
func TestStoreKeysAcrossFullPages(t *testing.T) {
	bs := newByteSet()
	perPage := pageSize / 256
	n := 3*perPage + 1
	key := func(k int) []byte {
		b := make([]byte, 254)
		binary.LittleEndian.PutUint32(b, uint32(k))
		return b
	}
	for k := range n {
		if idx, isNew := bs.insert(key(k), bs.hash(key(k))); !isNew || int(idx) != k {
			t.Fatalf("key %d: number %d, new %v", k, idx, isNew)
		}
	}
	for _, k := range []int{0, perPage - 1, perPage, 2 * perPage, n - 1} {
		if got := bs.get(uint32(k)); !bytes.Equal(got, key(k)) {
			t.Fatalf("key %d reads back as %x...", k, got[:4])
		}
		if idx, ok := bs.lookup(key(k), bs.hash(key(k))); !ok || int(idx) != k {
			t.Fatalf("key %d: lookup %d %v", k, idx, ok)
		}
	}
}

// The pairs' table grows many times over; every pair keeps its number and is found.
func TestPairSetGrows(t *testing.T) {
	ps := newPairSet()
	const n = 300_000
	v := func(k int) uint64 { return uint64(k)*0x9E3779B97F4A7C15 | 1 }
	for k := range n {
		if idx, isNew := ps.insert(v(k), pairHash(v(k))); !isNew || int(idx) != k {
			t.Fatalf("pair %d: number %d, new %v", k, idx, isNew)
		}
	}
	for k := range n {
		if idx, ok := ps.lookup(v(k), pairHash(v(k))); !ok || int(idx) != k || ps.at(idx) != v(k) {
			t.Fatalf("pair %d: lookup %d %v", k, idx, ok)
		}
		if idx, isNew := ps.insert(v(k), pairHash(v(k))); isNew || int(idx) != k {
			t.Fatalf("pair %d inserted again: %d %v", k, idx, isNew)
		}
	}
	if _, ok := ps.lookup(2, pairHash(2)); ok {
		t.Fatal("a pair never inserted is found")
	}
}
