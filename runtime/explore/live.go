package explore

import (
	"context"
	"fmt"

	"github.com/teach-dist/playground/runtime/sim"
)

// liveness checks bounded eventual entry on the graph the search stored: for each
// process, the states in which it is alive and waits for the CS must form no cycle
// (or an order of events exists that keeps it waiting for ever), and then the longest
// run through them is the bound. Dead ends were already reported as deadlocks.
//
// A cycle with no way out, in which the process can never enter again whatever
// happens, is reported as a deadlock ("only a cycle"); a cycle it may leave is a
// breach of bounded entry. Either comes as a lasso: the path to the cycle, then the
// cycle, three times.
func (x *search) liveness(ctx context.Context) (outcome, int, error) {
	n := x.st.count
	pend := make([]uint16, n) // bit i: node i is alive and waits
	s := newState(x.m)
	any := false
	for k := 0; k < n; k++ {
		if err := x.load(k, s); err != nil {
			return outcome{}, 0, err
		}
		for i := range s.nodes {
			if s.nodes[i].alive && s.nodes[i].pending {
				pend[k] |= 1 << i
				any = true
			}
		}
	}
	if !any {
		return outcome{}, 0, nil
	}
	if fwd, b := x.forwardOnly(ctx); b != "" {
		return outcome{bound: b}, 0, nil
	} else if fwd {
		return x.forwardBound(ctx, pend)
	}
	return x.waitCycles(ctx, pend)
}

// waitCycles is the liveness check by depth-first search, for each process, through
// the states in which it waits.
func (x *search) waitCycles(ctx context.Context, pend []uint16) (outcome, int, error) {
	n := x.st.count
	color := make([]uint8, n) // 0 new, 1 on the stack, 2 done
	dist := make([]uint32, n) // longest run from here until the process stops waiting
	type frame struct {
		k  uint32
		it edgeIter
	}
	var stack []frame
	bound := 0
	work := 0
	for i := 0; i < x.m.n; i++ {
		bit := uint16(1) << i
		clear(color)
		clear(dist)
		for r := 0; r < n; r++ {
			if pend[r]&bit == 0 || color[r] != 0 {
				continue
			}
			color[r] = 1
			stack = append(stack[:0], frame{k: uint32(r), it: x.st.succ(r)})
			for len(stack) > 0 {
				if work++; work&0xffff == 0 {
					if b := x.limits(ctx); b != "" {
						return outcome{bound: b}, 0, nil
					}
				}
				top := &stack[len(stack)-1]
				if t, ok := x.st.next(&top.it); ok {
					switch {
					case pend[t]&bit == 0:
						dist[top.k] = max(dist[top.k], 1)
					case color[t] == 0:
						color[t] = 1
						stack = append(stack, frame{k: t, it: x.st.succ(int(t))})
					case color[t] == 1:
						cycle := []uint32{}
						for j := len(stack) - 1; j >= 0; j-- {
							cycle = append(cycle, stack[j].k)
							if stack[j].k == t {
								break
							}
						}
						return x.lasso(i, bit, pend, cycle), 0, nil
					default:
						dist[top.k] = max(dist[top.k], dist[t]+1)
					}
					continue
				}
				k := top.k
				color[k] = 2
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					p := stack[len(stack)-1].k
					dist[p] = max(dist[p], dist[k]+1)
				}
				bound = max(bound, int(dist[k]))
			}
		}
	}
	return outcome{}, bound, nil
}

// lasso words a cycle (given backwards, from its last state to its first) in which
// process i waits, and classifies it.
func (x *search) lasso(i int, bit uint16, pend []uint16, back []uint32) outcome {
	first := back[len(back)-1]
	states := x.chain(first)
	for j := len(back) - 2; j >= 0; j-- {
		states = append(states, back[j])
	}
	states = append(states, first)
	out := outcome{states: states, via: -1, repeat: len(back), waiter: i, kernel: PropEntry}
	if x.escapes(first, bit, pend) {
		out.found = &finding{property: PropEntry,
			detail: fmt.Sprintf("%s may wait for ever: a cycle of %d steps keeps it waiting, so its entry is not bounded", x.m.name(i), len(back))}
	} else {
		out.found = &finding{property: sim.PropDeadlock,
			detail: fmt.Sprintf("%s can never enter: every run from here goes round cycles in which it waits (%d steps each)", x.m.name(i), len(back))}
	}
	return out
}

// escapes reports whether some run from k reaches a state where the process no longer
// waits.
func (x *search) escapes(k uint32, bit uint16, pend []uint16) bool {
	seen := map[uint32]bool{k: true}
	queue := []uint32{k}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		it := x.st.succ(int(u))
		for v, ok := x.st.next(&it); ok; v, ok = x.st.next(&it) {
			if pend[v]&bit == 0 {
				return true
			}
			if !seen[v] {
				seen[v] = true
				queue = append(queue, v)
			}
		}
	}
	return false
}

// forwardOnly reports whether every edge leads to a state numbered higher: then the
// graph has no cycle and the numbering is a topological order. That is the common
// case (every run ends: each process asks a fixed number of times and every step
// brings the run closer to its end, as with Ricart-Agrawala asking once), and it lets
// the entry bound be found in one sweep per process instead of a search.
func (x *search) forwardOnly(ctx context.Context) (bool, string) {
	for k := 0; k < x.st.count; k++ {
		if k&0xffff == 0xffff {
			if b := x.limits(ctx); b != "" {
				return false, b
			}
		}
		it := x.st.succ(k)
		for t, ok := x.st.next(&it); ok; t, ok = x.st.next(&it) {
			if int(t) <= k {
				return false, ""
			}
		}
	}
	return true, ""
}

// forwardBound is the entry bound of a graph without cycles (see forwardOnly): in
// decreasing state order, the longest run from each state in which process i waits
// until it stops waiting, as liveness computes it by depth-first search.
func (x *search) forwardBound(ctx context.Context, pend []uint16) (outcome, int, error) {
	n := x.st.count
	dist := make([]uint32, n)
	bound := uint32(0)
	for i := 0; i < x.m.n; i++ {
		bit := uint16(1) << i
		for k := n - 1; k >= 0; k-- {
			if k&0xffff == 0 {
				if b := x.limits(ctx); b != "" {
					return outcome{bound: b}, 0, nil
				}
			}
			if pend[k]&bit == 0 {
				continue
			}
			d := uint32(0)
			it := x.st.succ(k)
			for t, ok := x.st.next(&it); ok; t, ok = x.st.next(&it) {
				if pend[t]&bit == 0 {
					d = max(d, 1)
				} else {
					d = max(d, dist[t]+1)
				}
			}
			dist[k] = d
			bound = max(bound, d)
		}
	}
	return outcome{}, int(bound), nil
}
