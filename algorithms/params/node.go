package params

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
)

// DefaultID is the id a node field left out takes: f.Default says which (sim.FirstID,
// LowestID or HighestID). -1 when there are no ids.
func DefaultID(f sim.Param, ids []int) int {
	if len(ids) == 0 {
		return -1
	}
	switch f.Default {
	case sim.LowestID:
		return slices.Min(ids)
	case sim.HighestID:
		return slices.Max(ids)
	}
	return ids[0]
}

// Holder is the node index of id, the process that starts with the token or the
// coordinator's role. Hand-built params naming a stranger fall back to f's default
// rather than build a run nobody can enter.
func Holder(ids []int, id int, f sim.Param) int {
	if i := slices.Index(ids, id); i >= 0 {
		return i
	}
	return slices.Index(ids, DefaultID(f, ids))
}

// NodeID checks that id is one of ids; the error names the field and lists the ids.
func NodeID(field string, id int, ids []int) error {
	return notNode("params."+field, id, ids)
}

func notNode(path string, id int, ids []int) error {
	if slices.Contains(ids, id) {
		return nil
	}
	return fmt.Errorf("%s: %d is not a node id (ids: %s)", path, id, JoinInts(ids))
}

// JoinInts writes v space-separated, the way messages list ids: "0 1 2".
func JoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
