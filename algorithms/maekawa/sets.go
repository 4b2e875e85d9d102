package maekawa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Variants of the algorithm, chosen with params.variant.
const (
	// Basic is the algorithm as the notes give it: it can deadlock.
	Basic = "basic"
	// DeadlockFree adds timestamps and INQUIRE / RELINQUISH / FAILED (Sanders' fix).
	DeadlockFree = "deadlock-free"
)

// Params are the algorithm's settings.
type Params struct {
	Variant string `param:"variant"`
	// Sets maps node index -> its voting set as ascending node indexes; nil means the
	// default sets (DefaultSets).
	Sets [][]int
}

// notes3 and notes7 are the voting sets the course notes give for N=3 and N=7, for
// processes 1..N, written here 0-based: process k of the notes is node index k-1.
var (
	notes3 = [][]int{{0, 1}, {1, 2}, {0, 2}}
	notes7 = [][]int{
		{0, 1, 2}, // V1 = {1, 2, 3}
		{1, 3, 5}, // V2 = {2, 4, 6}
		{2, 4, 5}, // V3 = {3, 5, 6}
		{0, 3, 4}, // V4 = {1, 4, 5}
		{1, 4, 6}, // V5 = {2, 5, 7}
		{0, 5, 6}, // V6 = {1, 6, 7}
		{2, 3, 6}, // V7 = {3, 4, 7}
	}
)

// DefaultSets returns the voting sets for n nodes, by index: the notes' sets for N=3 and
// N=7 (K = 2 and 3, the optimum), otherwise a grid.
//
// The grid lays the nodes out row by row on c = ceil(sqrt(n)) columns; a node's set is
// its row plus its column. Two sets always meet: node i's row crosses node j's column,
// and when that cell is empty (i sits in the short last row) j's row crosses i's column
// instead, which is never empty because every row but the last is full. When n fills
// the grid exactly (4, 6, 9, 12, 16 ...) every set has K = rows + columns - 1 members
// (about 2 sqrt(N), twice the optimum) and every node is in K sets; otherwise the sets
// differ in size and the notes' equal-size property does not hold.
func DefaultSets(n int) [][]int {
	switch n {
	case 3:
		return cloneSets(notes3)
	case 7:
		return cloneSets(notes7)
	}
	c := 1
	for c*c < n {
		c++
	}
	sets := make([][]int, n)
	for i := range sets {
		row, col := i/c, i%c
		var s []int
		for j := 0; j < n; j++ {
			if j/c == row || j%c == col {
				s = append(s, j)
			}
		}
		sets[i] = s
	}
	return sets
}

func cloneSets(sets [][]int) [][]int {
	out := make([][]int, len(sets))
	for i, s := range sets {
		out[i] = slices.Clone(s)
	}
	return out
}

// EqualSize reports whether every set has the same size K and every node is in exactly
// K sets (the notes' properties 2 and 3).
func EqualSize(sets [][]int) bool {
	if len(sets) == 0 {
		return true
	}
	k := len(sets[0])
	in := make([]int, len(sets))
	for _, s := range sets {
		if len(s) != k {
			return false
		}
		for _, j := range s {
			in[j]++
		}
	}
	for _, c := range in {
		if c != k {
			return false
		}
	}
	return true
}

// meanK is the mean set size of the default sets for n nodes.
func meanK(n int) float64 {
	total := 0
	for _, s := range DefaultSets(n) {
		total += len(s)
	}
	return float64(total) / float64(n)
}

var paramList = []sim.Param{
	{Name: "variant", Kind: sim.ParamChoice, Choices: []string{Basic, DeadlockFree}, Default: strconv.Quote(Basic),
		Doc: "basic: the notes' algorithm, which can deadlock; deadlock-free: timestamps with INQUIRE, RELINQUISH and FAILED"},
	{Name: "sets", Kind: sim.ParamObject,
		Doc: `the voting sets: {"<id>": [ids]} for every node, each containing its owner, every two sharing a process. Left out, the notes' sets for N=3 and N=7, otherwise a grid`},
}

// ParseParams decodes {"variant": "basic"|"deadlock-free", "sets": {"<id>": [ids]}}; nil,
// empty or null gives the basic variant with the default sets. Custom sets must give
// one set for every node, each containing its owner, and every two sets must share a
// process (safety needs nothing more; equal sizes are not required). Errors name the
// field.
var ParseParams = params.Parser(paramList, func([]int) Params { return Params{Variant: Basic} },
	params.Object[Params]{Name: "sets", Decode: func(raw []byte, ids []int, p *Params) (err error) {
		p.Sets, err = parseSets(raw, ids)
		return err
	}})

// parseSets reads {"<id>": [ids...]} token by token, so a key given twice is an error
// rather than silently the last one, and converts it to index sets.
func parseSets(raw []byte, ids []int) ([][]int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New(`params.sets: want an object {"<id>": [ids...]} with one voting set per node`)
	}
	index := func(id int) int { return slices.Index(ids, id) }
	sets := make([][]int, len(ids))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("params.sets: %v", err)
		}
		key := tok.(string) // object keys are always strings
		owner, err := strconv.Atoi(key)
		if err != nil || index(owner) < 0 {
			return nil, fmt.Errorf("params.sets.%s: %q is not a node id (ids: %s)", key, key, params.JoinInts(ids))
		}
		field := "params.sets." + key
		i := index(owner)
		if sets[i] != nil {
			return nil, fmt.Errorf("%s: given twice", field)
		}
		var members []int
		if err := dec.Decode(&members); err != nil {
			return nil, fmt.Errorf("%s: want an array of node ids", field)
		}
		set := make([]int, 0, len(members))
		for _, id := range members {
			j := index(id)
			if j < 0 {
				return nil, params.NodeID("sets."+key, id, ids)
			}
			if slices.Contains(set, j) {
				return nil, fmt.Errorf("%s: %d is listed twice", field, id)
			}
			set = append(set, j)
		}
		if !slices.Contains(set, i) {
			return nil, fmt.Errorf("%s: must contain %d itself (a process votes in its own set)", field, owner)
		}
		sort.Ints(set)
		sets[i] = set
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("params.sets: %v", err)
	}
	for i, s := range sets {
		if s == nil {
			return nil, fmt.Errorf("params.sets: no set for node %d (give one for every node: %s)", ids[i], params.JoinInts(ids))
		}
	}
	for i := range sets {
		for j := i + 1; j < len(sets); j++ {
			if !intersect(sets[i], sets[j]) {
				return nil, fmt.Errorf("params.sets.%d: shares no process with params.sets.%d (every two voting sets must intersect, or both could enter the CS)", ids[i], ids[j])
			}
		}
	}
	return sets, nil
}

func intersect(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
