package session

import (
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// bomb is an algorithm with a bug: a request makes it panic.
type bomb struct{}

func (bomb) Step(ctx *sim.Context, in *sim.Input) {
	if in.Kind == sim.Request {
		panic("index out of range in the test algorithm")
	}
}
func (bomb) Clone() sim.Node           { return bomb{} }
func (bomb) Encode(w *sim.StateWriter) {}

var bombSpec = &sim.Spec{
	Slug: "bomb", Title: "Bomb", Family: sim.Mutex,
	Defaults: sim.Defaults{Nodes: 2, Delay: [2]int{1, 1}, CS: 1, Until: 100},
	New:      func(int, *sim.Setup) sim.Node { return bomb{} },
}

// A panic inside one session's run ends that session only: its viewer gets an
// "internal" error frame and the connection closes; another session carries on.
func TestPanicInOneSessionIsContained(t *testing.T) {
	var panicked []string
	m := NewManager(4, Options{OnPanic: func(alg string, v any, stack []byte) {
		panicked = append(panicked, alg)
	}})
	defer m.Close()
	other, oc := start(t, m, ra3)

	s, err := m.Start(Setup{Config: sim.Config{Spec: bombSpec, IDs: []int{0, 1}, CS: 1,
		Network: sim.Network{DelayMin: 1, DelayMax: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	c := newSub()
	if err := s.Attach(c); err != nil {
		t.Fatal(err)
	}
	c.next(t, "hello")
	c.next(t, "snapshot")
	do(t, s, c, act(sim.ActRequest, 0))
	f := c.next(t, "error")
	if f.Code != protocol.CodeInternal || !strings.Contains(f.Error, "index out of range") {
		t.Fatalf("error frame: %s", f.raw)
	}
	<-s.Done()
	<-c.closed
	if len(panicked) != 1 || panicked[0] != "bomb" {
		t.Fatalf("OnPanic heard %v", panicked)
	}
	if _, ok := m.Get(s.ID()); ok {
		t.Fatal("the broken session is still listed")
	}
	// The other session still answers.
	do(t, other, oc, act(sim.ActRequest, 1))
	if f := oc.next(t, "events"); !strings.Contains(string(f.raw), `"rule":"RA1"`) {
		t.Fatalf("the other session: %s", f.raw)
	}
}
