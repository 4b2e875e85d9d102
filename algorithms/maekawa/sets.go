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
	// Construction builds the sets when Sets is nil (Build).
	Construction string `param:"construction"`
	// Sets maps node index -> its voting set as ascending node indexes; nil means the
	// sets of Construction.
	Sets [][]int
}

// DefaultParams are the params of a scenario that gives none.
func DefaultParams([]int) Params { return Params{Variant: Basic, Construction: Plane} }

// sets returns the voting sets of n nodes these params give.
func (p Params) sets(n int) [][]int {
	if len(p.Sets) == n {
		return p.Sets
	}
	how := p.Construction
	if how == "" {
		how = Plane
	}
	return Build(n, how).Sets
}

// about names what built these params' sets for n nodes and their K, in words the
// inspector shows: the construction's own description (Build), or, for sets given in
// the scenario, their sizes.
func (p Params) about(n int) string {
	how := p.Construction
	if how == "" {
		how = Plane
	}
	b := Build(n, how)
	if len(p.Sets) != n || slices.EqualFunc(p.Sets, b.Sets, slices.Equal) {
		return b.About
	}
	if lo, hi := sizeRange(p.Sets); lo != hi {
		return fmt.Sprintf("voting sets chosen for this run, not built: K from %d to %d", lo, hi)
	}
	return fmt.Sprintf("voting sets chosen for this run, not built: K=%d", len(p.Sets[0]))
}

var paramList = []sim.Param{
	{Name: "variant", Kind: sim.ParamChoice, Choices: []string{Basic, DeadlockFree}, Default: strconv.Quote(Basic),
		Doc: "basic: the notes' algorithm, which can deadlock; deadlock-free: timestamps with INQUIRE, RELINQUISH and FAILED"},
	{Name: "construction", Kind: sim.ParamChoice, Choices: []string{Plane, Grid}, Default: strconv.Quote(Plane),
		Doc: "how the voting sets are built when sets is left out (the notes' sets for N=3 and N=7 either way): plane: a projective plane, K about sqrt(N); grid: a row plus a column, K about 2 sqrt(N)"},
	{Name: "sets", Kind: sim.ParamObject,
		Doc: `the voting sets: {"<id>": [ids]} for every node, each containing its owner, every two sharing a process. Given, they replace the construction`},
}

// ParseParams decodes {"variant": "basic"|"deadlock-free", "construction": "plane"|"grid",
// "sets": {"<id>": [ids]}}; nil, empty or null gives the basic variant with the plane
// construction's sets (Build), which it computes once here. Custom sets must give
// one set for every node, each containing its owner, and every two sets must share a
// process (safety needs nothing more; equal sizes are not required). Errors name the
// field.
func ParseParams(raw []byte, ids []int) (any, error) {
	v, err := parse(raw, ids)
	if err != nil {
		return nil, err
	}
	p := v.(Params)
	p.Sets = p.sets(len(ids))
	return p, nil
}

var parse = params.Parser(paramList, DefaultParams,
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
