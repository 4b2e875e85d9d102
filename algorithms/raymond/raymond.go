// Package raymond is Raymond's tree-based token algorithm: the processes form a tree,
// each one points at the neighbour in the direction of the token (holder), requests
// travel along those pointers and the token travels back along the same edges, turning
// the pointers round as it goes. Each process keeps a FIFO queue of the neighbours (or
// itself) that asked it, and asks its own holder at most once at a time.
package raymond

import (
	"bytes"
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

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "raymond",
		Title:   "Raymond's tree algorithm",
		Family:  sim.Mutex,
		Summary: "Requests climb a tree towards the token and the token comes back down the same path, so an entry costs a number of messages proportional to the tree's height: O(log N) on a balanced tree.",
		Rules: []sim.Rule{
			{Label: "RY-1", Group: "Initialisation", Lines: []string{
				"holder := my parent in the tree (the root: myself, it has the token)",
				"queue := empty; asked := false; using := false"},
				Says: "points towards the root, which starts with the token"},
			{Label: "RY-2", Group: "Asking for the CS", Lines: []string{
				"append myself to queue",
				"ASSIGN (RY-6); ASK (RY-7)"},
				Says: "wants the CS and queues its own request"},
			{Label: "RY-3", Group: "Receiving REQUEST from neighbour j", Lines: []string{
				"append j to queue",
				"ASSIGN (RY-6); ASK (RY-7)"},
				Says: "queues a neighbour's request"},
			{Label: "RY-4", Group: "Receiving PRIVILEGE", Lines: []string{
				"holder := myself   // the token is here",
				"ASSIGN (RY-6); ASK (RY-7)"},
				Says: "receives the token"},
			{Label: "RY-5", Group: "Leaving the CS", Lines: []string{
				"using := false",
				"ASSIGN (RY-6); ASK (RY-7)"},
				Says: "leaves the CS"},
			{Label: "RY-6", Group: "ASSIGN: passing the token down", Lines: []string{
				"if holder = myself and not using and queue is not empty:",
				"    holder := take the head of queue; asked := false",
				"    if holder = myself: using := true; enter the CS",
				"    else: send PRIVILEGE to holder"},
				Says: "hands the token to the first in its queue, or enters the CS if that is itself"},
			{Label: "RY-7", Group: "ASK: passing a request up", Lines: []string{
				"if holder != myself and queue is not empty and not asked:",
				"    send REQUEST to holder; asked := true"},
				Says: "asks its holder for the token on behalf of its queue"},
			{Label: "RY-8", Group: "Recovering after a crash", Lines: []string{
				"queue := empty; asked := false; using := false; no token",
				"holder := my parent (the root: its first child)",
				"// whatever was queued or held here is lost, and the pointers may now",
				"// lead in a circle: Raymond's algorithm assumes no failures"},
				Says: "comes back without the token, pointing at its tree parent"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, REQUESTED (its own request is queued) or HELD (using the token)"},
			{Name: "holder", Doc: "id of the neighbour in the direction of the token; its own id when it has the token"},
			{Name: "queue", Doc: "ids that asked this process for the token (itself included), oldest first"},
			{Name: "asked", Doc: "whether it has sent a REQUEST to its holder that the token has not yet answered"},
			{Name: "parent", Doc: "id of its parent in the tree (-1: the root); fixed"},
		},
		Messages: []sim.MessageType{
			{Name: MsgRequest, Label: "REQ", Doc: "asks the neighbour in the direction of the token for it"},
			{Name: MsgPrivilege, Label: "PRIV", Doc: "the token, sent to the neighbour that asked for it"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry", Formula: "2d: d REQUEST up and d PRIVILEGE back, d the tree distance to the token; O(log N) on a balanced tree, 0 with the token"},
			{Name: "messages per CS entry, worst case on the balanced default tree", Formula: "4⌊log₂ N⌋ (twice the diameter)",
				Value: func(n int) float64 { return float64(4 * (bits.Len(uint(n)) - 1)) }},
			{Name: "messages per CS entry under heavy load", Formula: "about 4"},
			{Name: "synchronisation delay", Formula: "dT along the tree, O(log N)"},
		},
		Defaults:    sim.Defaults{Nodes: 7, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		Params:      paramList,
		Stage:       sim.Stage{Edges: "parent", EdgesLabel: "tree edge", Pointer: "holder", PointerLabel: "holder: towards the token"},
		ParseParams: ParseParams,
		New:         newNode,
	}
}

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

func newNode(self int, setup *sim.Setup) sim.Node {
	p := params.Of(setup, Params{})
	if len(p.Parent) != len(setup.IDs) {
		p = BalancedTree(len(setup.IDs)) // hand-built params of the wrong size
	}
	child := slices.Index(p.Parent, self)
	return &node{self: self, ids: setup.IDs, parent: p.Parent[self], child: child}
}

func (n *node) Step(ctx *sim.Context, in *sim.Input) {
	switch in.Kind {
	case sim.Init:
		ctx.Rule("RY-1")
		n.holder = n.parent
		if n.parent < 0 {
			n.holder = n.self
		}
		n.queue, n.asked, n.using = n.queue[:0], false, false
	case sim.Recover:
		ctx.Rule("RY-8")
		n.holder = n.parent
		if n.parent < 0 {
			n.holder = n.child
		}
		n.queue, n.asked, n.using = n.queue[:0], false, false
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

func (n *node) Clone() sim.Node {
	c := *n
	c.queue = slices.Clone(n.queue)
	return &c
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

// HoldsToken reports whether the privilege is here (the holder pointer points at self).
func (n *node) HoldsToken() bool { return n.holder == n.self }
