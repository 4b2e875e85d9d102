package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// The address accepted n up to 128 while Run setup's form stopped at 32. Both
// now take their bounds from the scenario's (sim.MinNodes, sim.MaxNodes).
func TestRunSetupAndTheAddressAgreeOnTheNumberOfProcesses(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	p := get(t, browser(t), ts.URL+"/play/central")
	want := fmt.Sprintf(`name="nodes" min="%d" max="%d"`, sim.MinNodes, sim.MaxNodes)
	if !strings.Contains(p.body, want) {
		t.Fatalf("Run setup's control is not %s", want)
	}
	for n, status := range map[int]int{sim.MaxNodes: http.StatusOK, sim.MaxNodes + 1: http.StatusBadRequest, sim.MinNodes: http.StatusOK, sim.MinNodes - 1: http.StatusBadRequest} {
		if p := get(t, browser(t), fmt.Sprintf("%s/play/central?n=%d", ts.URL, n)); p.status != status {
			t.Errorf("n=%d: %d, want %d", n, p.status, status)
		}
	}
}
