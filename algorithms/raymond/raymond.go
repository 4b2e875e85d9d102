// Package raymond is Raymond's tree-based token algorithm: the processes form a tree,
// each one points at the neighbour in the direction of the token (holder), requests
// travel along those pointers and the token travels back along the same edges, turning
// the pointers round as it goes. Each process keeps a FIFO queue of the neighbours (or
// itself) that asked it, and asks its own holder at most once at a time.
package raymond

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/teach-dist/playground/algorithms/cs"
	"github.com/teach-dist/playground/algorithms/nodeid"
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Message types.
const (
	MsgRequest   = "REQUEST"
	MsgPrivilege = "PRIVILEGE"
)

// Params hold the tree: the parent of every node index, -1 for the root.
type Params struct {
	Parent []int
}

// BalancedTree is the default: a balanced binary tree over the ids order, the first id
// at the root, the children of position k at 2k+1 and 2k+2.
func BalancedTree(n int) Params {
	p := Params{Parent: make([]int, n)}
	for k := range p.Parent {
		p.Parent[k] = (k - 1) / 2
	}
	if n > 0 {
		p.Parent[0] = -1
	}
	return p
}

var paramList = []sim.Param{
	{Name: "tree", Kind: sim.ParamObject,
		Doc: `the tree: each id maps to its parent's id, e.g. {"1": 0, "2": 0}; the root, left out or null, starts with the token. Left out, a balanced binary tree in ids order`},
}

// ParseParams decodes {"tree": {"<id>": parentId, ...}}: every id but the root maps to
// its parent's id; the root is left out or maps to null. The parents must form one tree
// spanning every node. nil, empty or null gives the balanced default.
var ParseParams = params.Parser(paramList, func(ids []int) Params { return BalancedTree(len(ids)) },
	params.Object[Params]{Name: "tree", Decode: func(raw []byte, ids []int, p *Params) (err error) {
		*p, err = parseTree(raw, ids)
		return err
	}})

const treeShape = `an object mapping each id to its parent's id, e.g. {"1": 0, "2": 0}`

// parseTree reads the tree object token by token, so a repeated key is caught rather
// than silently overwritten.
func parseTree(raw []byte, ids []int) (Params, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return Params{}, fmt.Errorf("params.tree: want %s", treeShape)
	}
	n := len(ids)
	parent := make([]int, n)
	listed := make([]bool, n)
	for i := range parent {
		parent[i] = -1
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return Params{}, fmt.Errorf("params.tree: %v", err)
		}
		key := tok.(string) // object keys are always strings
		id, err := strconv.Atoi(key)
		k := slices.Index(ids, id)
		if err != nil || k < 0 {
			return Params{}, fmt.Errorf("params.tree.%s: not a node id (ids: %s)", key, params.JoinInts(ids))
		}
		if listed[k] {
			return Params{}, fmt.Errorf("params.tree.%s: listed twice", key)
		}
		listed[k] = true
		var v any
		if err := dec.Decode(&v); err != nil {
			return Params{}, fmt.Errorf("params.tree.%s: %v", key, err)
		}
		if v == nil {
			continue // the root may be listed with no parent
		}
		num, ok := v.(json.Number)
		pid, err := strconv.Atoi(string(num))
		if !ok || err != nil {
			return Params{}, fmt.Errorf("params.tree.%s: got %s, want the parent's id (an integer) or null for the root", key, string(mustJSON(v)))
		}
		pk := slices.Index(ids, pid)
		if pk < 0 {
			return Params{}, fmt.Errorf("params.tree.%s: parent %d is not a node id (ids: %s)", key, pid, params.JoinInts(ids))
		}
		if pk == k {
			return Params{}, fmt.Errorf("params.tree.%s: a node cannot be its own parent", key)
		}
		parent[k] = pk
	}
	if _, err := dec.Token(); err != nil {
		return Params{}, fmt.Errorf("params.tree: %v", err)
	}
	var roots []int
	for k, pk := range parent {
		if pk < 0 {
			roots = append(roots, ids[k])
		}
	}
	if len(roots) != 1 {
		return Params{}, fmt.Errorf("params.tree: %d nodes have no parent (%s); exactly one, the root, may have none", len(roots), params.JoinInts(roots))
	}
	// With one root, a node that does not reach it lies on a cycle.
	for k := range parent {
		seen := make([]bool, n)
		path := []int{ids[k]}
		for x := k; parent[x] >= 0; x = parent[x] {
			if seen[x] {
				return Params{}, fmt.Errorf("params.tree: the parents form a cycle (%s) instead of leading to the root %d",
					strings.ReplaceAll(params.JoinInts(path), " ", " -> "), roots[0])
			}
			seen[x] = true
			path = append(path, ids[parent[x]])
		}
	}
	return Params{Parent: parent}, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

type node struct {
	self   int
	ids    []int // shared, never written
	parent int   // index, -1 for the root
	child  int   // index of the first child (the recovered root points there), -1 none
	holder int   // index; self when the token is here
	queue  []int // indexes, oldest first
	asked  bool
	using  bool
}

// text is what the pages show of the algorithm, in a file a teacher can read beside
// this code.
//
//go:embed spec.txt
var text string

// Spec describes the algorithm for the registry (algorithms.All): spec.txt, then what
// is code. Each call builds a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	s := sim.BuildSpec(text, sim.Spec{
		Params:      paramList,
		Stage:       sim.Stage{Edges: "parent", EdgesLabel: "tree edge", Pointer: "holder", PointerLabel: "holder: towards the token"},
		ParseParams: ParseParams,
		New:         newNode,
	})
	// Twice the diameter of the default tree, whose height is ⌊log₂ N⌋.
	s.Cost("messages per CS entry, worst case on the balanced default tree").Value =
		func(n int) float64 { return float64(4 * (bits.Len(uint(n)) - 1)) }
	return s
}

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, Params{})
	if len(p.Parent) != len(setup.IDs) {
		p = BalancedTree(len(setup.IDs)) // hand-built params of the wrong size
	}
	child := slices.Index(p.Parent, self)
	return &node{self: self, ids: setup.IDs, parent: p.Parent[self], child: child}
}

// start empties the node's queue and points it at its parent; the root, which has
// none, points at rootHolder: itself with the token at the start (RY-1), its first
// child after a crash, the token lost (RY-8).
func (n *node) start(rootHolder int) {
	n.holder = n.parent
	if n.parent < 0 {
		n.holder = rootHolder
	}
	n.queue, n.asked, n.using = n.queue[:0], false, false
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("RY-1")
		n.start(n.self)
	case sim.Recover:
		ctx.Rule("RY-8")
		n.start(n.child)
	case sim.Request:
		if !n.using && !slices.Contains(n.queue, n.self) {
			ctx.Rule("RY-2")
			n.queue = append(n.queue, n.self)
			n.assignAndAsk(ctx)
		}
	case sim.Release:
		if n.using {
			ctx.Rule("RY-5")
			n.using = false
			ctx.Exit()
			n.assignAndAsk(ctx)
		}
	case sim.Deliver:
		switch in.Msg.Type {
		case MsgRequest:
			ctx.Rule("RY-3")
			n.queue = append(n.queue, in.Msg.From)
			n.assignAndAsk(ctx)
		case MsgPrivilege:
			ctx.Rule("RY-4")
			n.holder = n.self
			n.assignAndAsk(ctx)
		}
	}
}

func (n *node) assignAndAsk(ctx *sim.Context) {
	n.assign(ctx)
	n.ask(ctx)
}

// assign is RY-6.
func (n *node) assign(ctx *sim.Context) {
	if n.holder != n.self || n.using || len(n.queue) == 0 {
		return
	}
	ctx.Rule("RY-6")
	n.holder = n.queue[0]
	n.queue = slices.Delete(n.queue, 0, 1)
	n.asked = false
	if n.holder == n.self {
		n.using = true
		ctx.Enter()
		return
	}
	ctx.Send(n.holder, sim.Message{Type: MsgPrivilege})
}

// ask is RY-7.
func (n *node) ask(ctx *sim.Context) {
	if n.holder == n.self || len(n.queue) == 0 || n.asked {
		return
	}
	ctx.Rule("RY-7")
	ctx.Send(n.holder, sim.Message{Type: MsgRequest})
	n.asked = true
}

// WaitingFor: a process with requests queued and no token waits for its holder.
func (n *node) WaitingFor() []int {
	if n.holder == n.self || n.holder < 0 || len(n.queue) == 0 {
		return nil
	}
	return []int{n.holder}
}

func (n *node) Encode(w *sim.StateWriter) {
	state := cs.Released
	switch {
	case n.using:
		state = cs.Held
	case slices.Contains(n.queue, n.self):
		state = cs.Requested
	}
	w.Str("state", state)
	w.Int("holder", nodeid.Of(n.ids, n.holder))
	w.Ints("queue", nodeid.All(n.ids, n.queue))
	w.Bool("asked", n.asked)
	w.Int("parent", nodeid.Of(n.ids, n.parent))
}

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
}

// HoldsToken reports whether the privilege is here (the holder pointer points at self).
func (n *node) HoldsToken() bool { return n.holder == n.self }
