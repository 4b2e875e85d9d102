package explore

import (
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// model is everything a search holds fixed: the algorithm, the network model and the
// workload, in the kernel's vocabulary (node indexes).
type model struct {
	spec     *sim.Spec
	cfg      sim.Config
	n        int
	ids      []int
	setup    sim.Setup
	timed    bool
	fifo     bool
	loss     bool // network.loss > 0: any message may be lost
	dmin     int32
	dmax     int32
	cs       int32 // time in the CS; 0 keeps a process there until a release event
	election bool

	// The workload. Timed: events in kernel order (time, then list order), taken one by
	// one at their time. Untimed: each node's events in order, plus the node-less ones
	// (partition, heal) in their own order, each whenever it applies.
	events  []wevent
	start   []int32   // untimed: events at time 0, which the kernel runs before any delivery
	perNode [][]int32 // untimed: indexes into events, after time 0
	global  []int32   // untimed: partition and heal, after time 0
	drops   []int32   // drop events: each lets one matching message be lost
	parts   bool      // the workload partitions the network
	ignored int       // deliver, fire and tell events of the scenario (see newModel)

	bgTimers []string
	bgMsgs   []string
}

// wevent is one workload event.
type wevent struct {
	at  int
	act sim.Action
}

// maxDrops bounds the drop events: they are a bitmask in the state.
const maxDrops = 64

func newModel(cfg sim.Config, timed bool) (*model, error) {
	if cfg.Spec == nil {
		return nil, fmt.Errorf("no algorithm")
	}
	m := &model{
		spec:     cfg.Spec,
		cfg:      cfg,
		n:        len(cfg.IDs),
		ids:      cfg.IDs,
		setup:    sim.Setup{IDs: cfg.IDs, Params: cfg.Params, MaxDelay: cfg.Network.DelayMax},
		timed:    timed,
		fifo:     cfg.Network.FIFO,
		loss:     cfg.Network.Loss > 0,
		dmin:     int32(cfg.Network.DelayMin),
		dmax:     int32(cfg.Network.DelayMax),
		cs:       int32(cfg.CS),
		election: cfg.Spec.Family == sim.Election,
		bgTimers: cfg.Spec.BackgroundTimers,
		bgMsgs:   cfg.Spec.BackgroundMessages,
	}
	if m.n < 1 || m.n > MaxNodes {
		return nil, &InputError{Field: "nodes", Reason: fmt.Sprintf("%d processes is more than the explorer handles (at most %d: the number of interleavings grows exponentially)", m.n, MaxNodes)}
	}
	// Kernel order: by time, then as listed (a stable sort keeps the list order).
	order := make([]int, len(cfg.Actions))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cfg.Actions[a].At - cfg.Actions[b].At })
	m.perNode = make([][]int32, m.n)
	for _, k := range order {
		a := cfg.Actions[k]
		switch a.Do {
		case sim.ActDeliver:
			m.ignored++
			continue
		case sim.ActDrop:
			if len(m.drops) == maxDrops {
				return nil, &InputError{Field: fmt.Sprintf("events[%d]", k), Reason: fmt.Sprintf("more than %d drop events", maxDrops)}
			}
		case sim.ActPartition, sim.ActHeal:
			m.parts = true
		}
		if a.Do == sim.ActFire || a.Do == sim.ActTell {
			// fire is a choice the search makes itself; a tell's message never reaches
			// the algorithm, so it changes none of the properties checked.
			m.ignored++
			continue
		}
		idx := int32(len(m.events))
		m.events = append(m.events, wevent{at: a.At, act: a})
		switch {
		case a.Do == sim.ActDrop:
			m.drops = append(m.drops, idx)
		case !timed && a.At == 0:
			m.start = append(m.start, idx)
		case a.Do == sim.ActPartition || a.Do == sim.ActHeal:
			m.global = append(m.global, idx)
		default:
			m.perNode[a.Node] = append(m.perNode[a.Node], idx)
		}
	}
	return m, nil
}

// dropIndex returns the token number of drop event k.
func (m *model) dropIndex(k int32) int {
	return slices.Index(m.drops, k)
}

func (m *model) name(i int) string { return fmt.Sprintf("P%d", m.ids[i]) }
