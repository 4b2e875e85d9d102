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
