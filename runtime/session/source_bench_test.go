package session

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sandbox"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// BenchmarkLiveStep is what a user's step costs a live session: the step taken and its
// frame published to a viewer, with the Go algorithm, with its Starlark template run
// in this process (as before the sandbox) and run by the sandbox (the server's kernel,
// the step a call to a worker), at 5 and 16 processes, every process asking in turn.
// ns/op is the step's latency:
//
//	go test -run '^$' -bench LiveStep -cpu 1 ./runtime/session/
func BenchmarkLiveStep(b *testing.B) {
	pool := sandbox.New(sandbox.Options{Workers: 1, Nice: -1})
	defer pool.Close()
	defer scenarios.UseSourceLoader(scenarios.InProcess)
	src, _ := starlarkalg.Template("ricart-agrawala")
	for _, n := range []int{5, 16} {
		for _, v := range []struct {
			name, source string
			loader       scenarios.SourceLoader
		}{{"go", "", scenarios.InProcess}, {"starlark-in-process", src, scenarios.InProcess}, {"starlark-sandboxed", src, pool}} {
			b.Run(fmt.Sprintf("N=%d/%s", n, v.name), func(b *testing.B) {
				scenarios.UseSourceLoader(v.loader)
				doc, err := json.Marshal(map[string]any{"version": 1, "algorithm": "ricart-agrawala", "nodes": n, "seed": 3, "source": v.source})
				if err != nil {
					b.Fatal(err)
				}
				s, err := newSession("bench", setupOf(b, string(doc)), Options{MaxEvents: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				viewer := &benchSub{}
				s.subs = append(s.subs, viewer)
				for k := 0; b.Loop(); k++ {
					if k%4 == 0 { // the next process asks in (refused while it waits or is inside)
						_ = s.command(Command{Kind: Act, Act: sim.ActionJSON{Do: "request", Node: new(s.cfg.IDs[(k/4)%n])}})
					}
					if err := s.command(Command{Kind: Step}); err != nil {
						b.Fatal(err)
					}
				}
				if viewer.n == 0 {
					b.Fatal("no frame was published")
				}
			})
		}
	}
}
