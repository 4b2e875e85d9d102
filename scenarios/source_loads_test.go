package scenarios

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// failingLoader fails every load as a sandbox does when its worker dies (a temporary
// error, not kept), counting the loads.
type failingLoader struct{ loads atomic.Int32 }

func (l *failingLoader) Load(slug, source string) (*sim.Spec, error) {
	l.loads.Add(1)
	return nil, &temporaryErr{&starlarkalg.Error{Algorithm: slug, Msg: "loading the source: it used more than the memory the sandbox allows"}}
}

type temporaryErr struct{ err *starlarkalg.Error }

func (e *temporaryErr) Error() string   { return e.err.Error() }
func (e *temporaryErr) Unwrap() error   { return e.err }
func (e *temporaryErr) Temporary() bool { return true }

// Opening a link of the current defaults with a source loads the source once: a load
// the sandbox could not finish is not kept, so each load of a source that kills its
// worker costs a worker (2 s of CPU for one that runs out of time), and the link's
// decoding must not ask twice.
func TestALinkLoadsItsSourceOnce(t *testing.T) {
	loader := &failingLoader{}
	UseSourceLoader(loader)
	t.Cleanup(func() { UseSourceLoader(InProcess) })
	template, _ := starlarkalg.Template("central")
	doc, err := json.Marshal(map[string]any{"scenario": map[string]any{"version": 1, "algorithm": "central",
		"nodes": 3, "seed": 1, "source": template + "\n# " + t.Name() + "\n"}, "step": 1, "defaults": sim.DefaultsEpoch})
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeLink("v3" + strings.TrimPrefix(deflated("central", string(doc)), "v1"))
	if err == nil || !strings.Contains(err.Error(), "the memory the sandbox allows") {
		t.Fatalf("the link: %v, want the loader's error", err)
	}
	if n := loader.loads.Load(); n != 1 {
		t.Fatalf("the link loaded its source %d times, want once", n)
	}
}
