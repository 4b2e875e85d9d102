package session

import (
	"bytes"
	"context"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// A recipe rebuilds the very run the viewers see: replaying it to its step gives the
// snapshot the session shows, interventions included.
func TestRecipeRebuildsTheRunShown(t *testing.T) {
	m := NewManager(4, Options{})
	defer m.Close()
	s, c := start(t, m, ra3)
	do(t, s, c, act(sim.ActRequest, 0))
	c.next(t, "events")
	do(t, s, c, act(sim.ActRequest, 2))
	c.next(t, "events")
	stepAll(t, s, c)
	do(t, s, c, Command{Kind: Seek, Step: 3})
	shown := c.next(t, "snapshot")

	r, err := s.Recipe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Step != 3 || r.Horizon <= 3 || len(r.Interventions) != 2 {
		t.Fatalf("recipe: step %d horizon %d, %d interventions; want 3, > 3, 2", r.Step, r.Horizon, len(r.Interventions))
	}
	if !bytes.Equal(r.Setup.Scenario, []byte(ra3)) {
		t.Fatalf("recipe scenario %s", r.Setup.Scenario)
	}
	sm, err := sim.Replay(r.Setup.Config, r.Interventions, r.Step, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := sm.Snapshot()
	for i, n := range shown.Nodes {
		if !bytes.Equal(snap.Nodes[i].State, n.State) {
			t.Fatalf("node %d: replayed %s, shown %s", i, snap.Nodes[i].State, n.State)
		}
	}
	// The recipe is a copy: changing it does not change the session.
	r.Interventions[0].Step = 99
	again, _ := s.Recipe(context.Background())
	if again.Interventions[0].Step == 99 {
		t.Fatal("the recipe aliases the session's interventions")
	}
}
