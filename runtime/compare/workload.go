package compare

import (
	"math/rand/v2"

	"github.com/teach-dist/playground/runtime/sim"
)

// Network is the network every comparison runs on: the notes' T is its mean delay, 2.
func Network() sim.Network { return sim.Network{DelayMin: 1, DelayMax: 3, FIFO: true} }

// CS is the time every process spends in the critical section.
const CS = 2

// WorkloadConfig builds one run of a comparison: spec on n processes under the
// workload ("light" or "heavy") drawn from seed, at most maxEvents events.
func WorkloadConfig(spec *sim.Spec, n int, workload string, seed uint64, maxEvents int) (sim.Config, error) {
	ids := spec.Defaults.IDs(n)
	var params any
	if spec.ParseParams != nil {
		var err error
		if params, err = spec.ParseParams(nil, ids); err != nil {
			return sim.Config{}, err
		}
	}
	net := Network()
	cfg := sim.Config{Spec: spec, IDs: ids, Params: params, Seed: seed, Network: net, CS: CS,
		MaxEvents: maxEvents, Pending: sim.MaxTime}
	r := rand.New(rand.NewPCG(seed, 0xc0ffee))
	dmax := net.DelayMax
	if spec.Family == sim.Election {
		cfg.CS = 0
		callers := ids
		// The notes compare elections in one situation: the coordinator, the highest
		// id, has failed and a process that noticed calls an election (000, 002). Every
		// election that declares it starts there, the ring elections as Bully, so the
		// figures side by side count the same thing.
		if spec.CrashLeaderFirst {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 0, Do: sim.ActCrash, Node: n - 1})
			callers = ids[:n-1]
		}
		if workload == "light" {
			callers = []int{callers[r.IntN(len(callers))]}
		}
		for _, i := range callers {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 1, Do: sim.ActElect, Node: i})
		}
		cfg.Until = 20 * n * (dmax + 2) * 4
		return cfg, nil
	}
	if workload == "light" {
		// One request at a time, long after the previous one has been served: room for
		// the token to come round the whole ring.
		gap := CS + (n+4)*(dmax+2)
		requests := max(6, 2*n)
		for k := range requests {
			cfg.Actions = append(cfg.Actions, sim.Action{At: 1 + k*gap, Do: sim.ActRequest, Node: r.IntN(n)})
		}
		cfg.Until = 1 + (requests+1)*gap
		return cfg, nil
	}
	// Heavy: every process asks again soon after it has left (a request while it
	// still waits or holds the CS is skipped), for long enough that each one enters a
	// few times; then the queue drains.
	period := CS + dmax
	span := 2 * n * (CS + 2*dmax)
	for i := range n {
		for t := r.IntN(period); t < span; t += period {
			cfg.Actions = append(cfg.Actions, sim.Action{At: t, Do: sim.ActRequest, Node: i})
		}
	}
	cfg.Until = span + n*(CS+4*dmax+4) + 50
	return cfg, nil
}
