package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// Process counts the twin handles: its receive branches go up to 8 processes.
const minNodes, maxNodes = 2, 8

// scenario is the explorer's side of the question the twin asks: n processes with
// ids 0..n-1, each asking for the CS once at time 0 (in id order, before any message
// arrives), FIFO channels, a CS a process may leave at any moment (cs > 0; the
// explorer abstracts its length).
func scenario(n int) (*scenarios.Scenario, error) {
	if n < minNodes || n > maxNodes {
		return nil, fmt.Errorf("%d processes: the Promela twin takes %d to %d", n, minNodes, maxNodes)
	}
	fifo, cs := true, 2
	sc := &scenarios.Scenario{
		Version:   scenarios.Version,
		Algorithm: "ricart-agrawala",
		Title:     fmt.Sprintf("Ricart-Agrawala, %d processes asking once at the start, FIFO", n),
		About:     "The question cmd/spinvsexplore puts to SPIN and to the explorer alike.",
		Nodes:     n,
		Seed:      1,
		Network:   &scenarios.Network{Delay: scenarios.Delay{1, 3}, FIFO: &fifo},
		CS:        &cs,
	}
	for p := range n {
		sc.Events = append(sc.Events, scenarios.Event{At: 0, Do: "request", Node: &p})
	}
	return sc, nil
}

// scenarioJSON is scenario(n) as a file for `playground explore`, read back through
// the scenario decoder so that a file it would refuse is never written.
func scenarioJSON(n int) ([]byte, error) {
	sc, err := scenario(n)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := scenarios.Parse(b); err != nil {
		return nil, fmt.Errorf("the generated scenario is refused: %v", err)
	}
	return append(b, '\n'), nil
}

// buildPlayground compiles cmd/playground once, so that the explorer's figures are
// its own and not the go tool's.
func buildPlayground(ctx context.Context, workDir string) (string, error) {
	bin := filepath.Join(workDir, "playground")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/teach-dist/playground/cmd/playground")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/playground (run this from inside the module, or pass --playground): %v\n%s", err, out)
	}
	return bin, nil
}

// exploreRun is what one `playground explore` run found.
type exploreRun struct {
	res *explore.Result
	run *measured
}

// runExplore writes scenario(n) to a file and runs `playground explore` on it: with the
// reductions the algorithm declares, or with --full (full true), every state; with
// workers goroutines (0: one per core, the explorer's default).
func runExplore(ctx context.Context, bin, workDir string, n int, maxMemory string, timeout time.Duration, full bool, workers int) (*exploreRun, error) {
	b, err := scenarioJSON(n)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(workDir, "ricart-agrawala-fifo-"+strconv.Itoa(n)+".json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, err
	}
	// The explorer's own --timeout ends the search with its figures; the kill a
	// minute later is only a backstop.
	args := []string{"explore", "--quiet", "--max-memory", maxMemory, "--timeout", timeout.String(), "--workers", strconv.Itoa(workers)}
	if full {
		args = append(args, "--full")
	}
	m, err := runMeasured(ctx, timeout+time.Minute, workDir, bin, append(args, file)...)
	if err != nil {
		return nil, fmt.Errorf("playground explore: %v", err)
	}
	r := &exploreRun{run: m}
	if m.timedOut {
		return r, nil
	}
	// 0: every property holds, 3: one breaks, 2: a bound stopped it (docs/explorer.md).
	if m.exit != 0 && m.exit != 2 && m.exit != 3 {
		return nil, fmt.Errorf("playground explore exited %d: %s", m.exit, m.stderr)
	}
	r.res = new(explore.Result)
	if err := json.Unmarshal([]byte(m.stdout), r.res); err != nil {
		return nil, fmt.Errorf("playground explore: its summary: %v", err)
	}
	return r, nil
}
