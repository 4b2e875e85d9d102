package explore

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/teach-dist/playground/runtime/sim"
)

// The explorer never steps a node twice from the same state with the same input:
// every distinct node state, message and timer name is interned once, and the result
// of a step (the node's next state and what it did) is memoised. A search then spends
// its time on the global states, which is where the interleavings multiply. This
// relies on the contract that Step is deterministic and that Encode writes every
// variable that matters (TestEncodeIsComplete checks the latter for the catalogue).

// effKind is what a memoised step did, in order.
type effKind uint8

const (
	effSend effKind = iota
	effSetTimer
	effCancelTimer
	effEnter
	effExit
	effLeader
)

type eff struct {
	kind  effKind
	a     uint32 // send: message; timers: name; leader: the id
	after int32  // set timer
}

type stepResult struct {
	next     uint32 // the node's state after the step
	from, to uint32 // its effects: effs[from:to]
}

// memoKey packs (node state, argument, input kind, node index) into one word: a map
// with integer keys is much faster than one with struct keys.
// memoK adds who is up: a step may ask the perfect failure detector (sim.Context.Up).
type memoK struct {
	k  uint64
	up uint16 // bit i: node i is up (MaxNodes fits)
}

func memoKey(i int, id uint32, kind sim.InputKind, arg uint32) uint64 {
	if arg >= 1<<24 {
		panic("explore: more than 2^24 distinct messages")
	}
	return uint64(id)<<32 | uint64(arg)<<8 | uint64(kind)<<4 | uint64(i)
}

type msgInfo struct {
	m    sim.Message
	ch   int32 // channel from*n+to
	bg   bool
	desc string // for details: "REQUEST P1 -> P2"
}

type interner struct {
	m   *model
	ctx *sim.Context
	in  sim.Input
	w   sim.StateWriter
	buf []byte

	nodes   [][]sim.Node // per node index, by id
	encs    [][]string   // per node index, by id: the canonical JSON
	nodeIdx []map[string]uint32

	msgs   []msgInfo
	msgIdx map[string]uint32

	timers   []string
	timerBG  []bool
	timerIdx map[string]uint32

	memo    map[memoK]uint32
	up      uint16 // who is up in the state being stepped (bit i: node i)
	upNodes []bool // the same, for the context
	results []stepResult
	effs    []eff

	// fresh[i] is node i's state as spec.New makes it (before Init or Recover).
	fresh []uint32

	sawTimer bool // some step set a timer: an untimed search must restart timed
	bytes    int64
}

func newInterner(m *model) *interner {
	it := &interner{
		m:        m,
		ctx:      sim.NewContext(0, m.ids),
		nodes:    make([][]sim.Node, m.n),
		encs:     make([][]string, m.n),
		nodeIdx:  make([]map[string]uint32, m.n),
		msgIdx:   map[string]uint32{},
		timerIdx: map[string]uint32{},
		memo:     map[memoK]uint32{},
		fresh:    make([]uint32, m.n),
		up:       1<<m.n - 1,
		upNodes:  make([]bool, m.n),
	}
	for i := range it.upNodes {
		it.upNodes[i] = true
	}
	it.ctx.SetUp(it.upNodes)
	for i := range it.nodeIdx {
		it.nodeIdx[i] = map[string]uint32{}
		it.fresh[i] = it.node(i, m.spec.New(i, &m.setup))
	}
	return it
}

// setUp records who is up in the state about to be stepped.
func (it *interner) setUp(up func(i int) bool) {
	it.up = 0
	for i := range it.upNodes {
		it.upNodes[i] = up(i)
		if it.upNodes[i] {
			it.up |= 1 << i
		}
	}
}

// node interns node i's state nd (which it keeps: the caller must not change it).
func (it *interner) node(i int, nd sim.Node) uint32 {
	it.w.Reset()
	nd.Encode(&it.w)
	enc := it.w.Bytes()
	if id, ok := it.nodeIdx[i][string(enc)]; ok {
		return id
	}
	id := uint32(len(it.nodes[i]))
	s := string(enc)
	it.nodes[i] = append(it.nodes[i], nd)
	it.encs[i] = append(it.encs[i], s)
	it.nodeIdx[i][s] = id
	it.bytes += int64(2*len(s)) + 160 // the map key, the copy and a small node value
	return id
}

// msg interns a message (its ID is ignored: content is what counts).
func (it *interner) msg(m *sim.Message) uint32 {
	b := it.buf[:0]
	b = append(b, m.Type...)
	b = append(b, 0)
	b = binary.AppendVarint(b, int64(m.From))
	b = binary.AppendVarint(b, int64(m.To))
	b = binary.AppendVarint(b, int64(m.TS))
	b = binary.AppendVarint(b, int64(m.Arg))
	b = binary.AppendVarint(b, int64(len(m.Vec)))
	for _, v := range m.Vec {
		b = binary.AppendVarint(b, int64(v))
	}
	b = binary.AppendVarint(b, int64(len(m.Queue)))
	for _, v := range m.Queue {
		b = binary.AppendVarint(b, int64(v))
	}
	it.buf = b
	if id, ok := it.msgIdx[string(b)]; ok {
		return id
	}
	id := uint32(len(it.msgs))
	c := m.Clone()
	c.ID = 0
	it.msgs = append(it.msgs, msgInfo{
		m:    c,
		ch:   int32(m.From*it.m.n + m.To),
		bg:   slices.Contains(it.m.bgMsgs, m.Type),
		desc: fmt.Sprintf("%s %s -> %s", m.Type, it.m.name(m.From), it.m.name(m.To)),
	})
	it.msgIdx[string(b)] = id
	it.bytes += int64(2*len(b)) + 128
	return id
}

func (it *interner) timer(name string) uint32 {
	if id, ok := it.timerIdx[name]; ok {
		return id
	}
	id := uint32(len(it.timers))
	it.timers = append(it.timers, name)
	it.timerBG = append(it.timerBG, slices.Contains(it.m.bgTimers, name))
	it.timerIdx[name] = id
	return id
}

// step returns what node i in state id does with an input (memoised).
func (it *interner) step(i int, id uint32, kind sim.InputKind, arg uint32) stepResult {
	k := memoK{memoKey(i, id, kind, arg), it.up}
	if r, ok := it.memo[k]; ok {
		return it.results[r]
	}
	var nd sim.Node
	if kind == sim.Recover {
		nd = it.m.spec.New(i, &it.m.setup) // a recovered process starts afresh
	} else {
		nd = it.nodes[i][id].Clone()
	}
	it.in = sim.Input{Kind: kind}
	switch kind {
	case sim.Deliver:
		it.in.Msg = it.msgs[arg].m.Clone()
	case sim.Timer:
		it.in.Timer = it.timers[arg]
	}
	it.ctx.Reset(i)
	nd.Step(it.ctx, &it.in)
	if err := it.ctx.Err(); err != nil {
		// A scripted algorithm's error: explore's recover words it as the algorithm's.
		panic(err)
	}
	res := stepResult{from: uint32(len(it.effs))}
	for _, e := range it.ctx.Effects() {
		switch e.Kind {
		case sim.Send:
			if e.Msg.To < 0 || e.Msg.To >= it.m.n {
				panic(fmt.Sprintf("%s: %s sent %s to node index %d, which does not exist", it.m.spec.Slug, it.m.name(i), e.Msg.Type, e.Msg.To))
			}
			it.effs = append(it.effs, eff{kind: effSend, a: it.msg(&e.Msg)})
		case sim.SetTimer:
			it.sawTimer = true
			it.effs = append(it.effs, eff{kind: effSetTimer, a: it.timer(e.Timer), after: int32(max(e.After, 0))})
		case sim.CancelTimer:
			it.effs = append(it.effs, eff{kind: effCancelTimer, a: it.timer(e.Timer)})
		case sim.EnterCS:
			it.effs = append(it.effs, eff{kind: effEnter})
		case sim.ExitCS:
			it.effs = append(it.effs, eff{kind: effExit})
		case sim.DeclareLeader:
			it.effs = append(it.effs, eff{kind: effLeader, a: uint32(e.Leader)})
		}
	}
	it.ctx.Reset(i)
	res.to = uint32(len(it.effs))
	res.next = it.node(i, nd)
	it.memo[k] = uint32(len(it.results))
	it.results = append(it.results, res)
	it.bytes += 64 + int64(res.to-res.from)*12
	return res
}
