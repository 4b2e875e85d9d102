// Package nodeid turns the node indexes an algorithm keeps (0..N-1) into the ids the
// inspector shows (the scenario's ids), for Encode. Every function returns a non-nil
// slice: the inspector writes an empty list as [], never null.
package nodeid

// Of is the id of node index i, or -1 when i is negative (none).
func Of(ids []int, i int) int {
	if i < 0 {
		return -1
	}
	return ids[i]
}

// All maps node indexes to ids, in order.
func All(ids, idx []int) []int {
	out := make([]int, len(idx))
	for k, i := range idx {
		out[k] = ids[i]
	}
	return out
}

// Where lists, in index order, the ids of the nodes whose flag is set.
func Where(ids []int, flags []bool) []int {
	out := []int{}
	for i, ok := range flags {
		if ok {
			out = append(out, ids[i])
		}
	}
	return out
}

// Filter lists, in index order, the ids of the nodes i for which keep(i) holds.
func Filter(ids []int, keep func(i int) bool) []int {
	out := []int{}
	for i, id := range ids {
		if keep(i) {
			out = append(out, id)
		}
	}
	return out
}

// Stamped writes a queue of requests as the inspector shows one, [timestamp, id]
// pairs in the queue's order; of gives an entry's timestamp and node index.
func Stamped[E any](ids []int, queue []E, of func(e *E) (ts, i int)) [][2]int {
	out := make([][2]int, len(queue))
	for k := range queue {
		ts, i := of(&queue[k])
		out[k] = [2]int{ts, ids[i]}
	}
	return out
}
