package explore

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/teach-dist/playground/runtime/sim"
)

// The explorer never steps a node twice from the same state with the same input:
// every distinct node state, message and timer name is interned once, and the result
// of a step (the node's next state and what it did) is memoised. A search then spends
// its time on the global states, which is where the interleavings multiply. This
// relies on the contract that Step is deterministic and that Encode writes every
// variable that matters (TestWalksMatchTheKernel checks the latter for the catalogue).
//
// The tables are shared by the workers of a parallel search (parallel.go): each is
// append-only and guarded by its own lock (the memo by one of several shards), and a
// worker steps nodes with its own scratch (stepper). Numbers are given in the order
// things are first met, which varies from run to run when several workers meet them;
// nothing the search reports depends on them (see insertFlight).

// A memoised step's effects are the kernel's own (sim.Did, as sim.Take reads them),
// less the rules fired (the search keeps no trace): Ref is an interned message or
// timer name.
const (
	effSend        = sim.Send
	effSetTimer    = sim.SetTimer
	effCancelTimer = sim.CancelTimer
	effEnter       = sim.EnterCS
	effExit        = sim.ExitCS
	effLeader      = sim.DeclareLeader
)

// didBytes is what one effect (sim.Did: a kind, a reference, an int) takes in the memo.
const didBytes = 16

type stepResult struct {
	next uint32    // the node's state after the step
	effs []sim.Did // what it did, in order (shared: read only)
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

// memoShards is how many locks the memo is split over: enough that workers rarely
// wait for one another.
const memoShards = 64

type memoShard struct {
	mu sync.Mutex
	m  map[memoK]stepResult
	_  [40]byte // a shard to a cache line: workers do not contend for a neighbour's
}

func (k memoK) mix() uint64 { return (k.k ^ uint64(k.up)<<48) * 0x9E3779B97F4A7C15 }

func (k memoK) shard() int { return int(k.mix() >> 58) }

// recentSize is the number of entries of a worker's own cache of recent steps, and
// recentBytes what it takes (a key of 16 bytes, a result of 32).
const (
	recentSize  = 1 << 14
	recentBytes = recentSize * (16 + 32)
)

// recent is a worker's own cache of the memo, direct-mapped: a step found here
// takes no lock. Beside a second worker the shard locks are written by both cores
// in turn, and each lock then costs a cache miss; most steps repeat a recent one.
// A zero key is never a real one (the stepping process is up).
type recent struct {
	keys [recentSize]memoK
	vals [recentSize]stepResult
}

func (r *recent) slot(k memoK) int { return int(k.mix() >> 32 & (recentSize - 1)) }

type msgInfo struct {
	m   sim.Message
	key string // its content, encoded: the canonical order of messages (msgLess)
	// pre is key's first 16 bytes as two big-endian words, zero past its end: two
	// keys that differ there compare as their pre do, and most do.
	pre  [2]uint64
	ch   int32 // channel from*n+to
	bg   bool
	desc string // for details: "REQUEST P1 -> P2"
	// canon[q] is its canonical form's number + 1 (q: quiet), 0 while unknown.
	canon [2]atomic.Uint32
	capped
}

type nodeInfo struct {
	nd  sim.Node
	enc string // the canonical JSON
	// canon[q] is its canonical form's number + 1 (q: quiet), 0 while unknown.
	canon [2]atomic.Uint32
	capped
}

// capped memoises a node state's or a message's horizon (sim.Horizon): the request
// timestamp it holds, and its form capped at each small horizon.
type capped struct {
	stamp atomic.Int32           // the timestamp + 1, 0 while unknown
	at    [capMemo]atomic.Uint32 // at[h]: the capped form's number + 1, 0 while unknown
}

// capMemo is how many horizons are memoised; a larger one is capped afresh each time.
const capMemo = 8

type timerInfo struct {
	name string
	bg   bool
}

// nodeTable holds the states met by one node index.
type nodeTable struct {
	mu  sync.Mutex
	v   cvec[nodeInfo]
	idx map[string]uint32
}

type interner struct {
	m *model

	nodes []nodeTable // per node index

	msgMu  sync.Mutex
	msgs   cvec[msgInfo]
	msgIdx map[string]uint32

	timerMu  sync.Mutex
	timers   cvec[timerInfo]
	timerIdx map[string]uint32

	memo [memoShards]memoShard

	// fresh[i] is node i's state as spec.New makes it (before Init or Recover).
	fresh []uint32

	sawTimer atomic.Bool // some step set a timer: an untimed search must restart timed
	// zeroTimeout: some step set a timer to fire less than one unit later (untimed.go's
	// argument needs time to pass on every cycle).
	zeroTimeout atomic.Bool
	bytes       atomic.Int64
}

// stepper is one worker's way into the interner: the shared tables, and the scratch a
// step needs.
type stepper struct {
	*interner
	ctx     *sim.Context
	in      sim.Input
	w       sim.StateWriter
	buf     []byte
	effs    []sim.Did
	up      uint16  // who is up in the state being stepped (bit i: node i)
	upNodes []bool  // the same, for the context
	recent  *recent // nil: every step asks the shared memo
}

func newInterner(m *model) *stepper {
	it := &interner{
		m:        m,
		nodes:    make([]nodeTable, m.n),
		msgIdx:   map[string]uint32{},
		timerIdx: map[string]uint32{},
		fresh:    make([]uint32, m.n),
	}
	for k := range it.memo {
		it.memo[k].m = map[memoK]stepResult{}
	}
	st := it.stepper()
	for i := range it.nodes {
		it.nodes[i].idx = map[string]uint32{}
		it.fresh[i] = st.node(i, m.spec.New(i, &m.setup))
	}
	return st
}

// stepper returns a new worker's scratch.
func (it *interner) stepper() *stepper {
	st := &stepper{
		interner: it,
		ctx:      sim.NewContext(0, it.m.ids),
		up:       1<<it.m.n - 1,
		upNodes:  make([]bool, it.m.n),
	}
	for i := range st.upNodes {
		st.upNodes[i] = true
	}
	st.ctx.SetUp(st.upNodes)
	return st
}

func (it *interner) message(id uint32) *msgInfo { return it.msgs.at(id) }

func (it *interner) nodeState(i int, id uint32) sim.Node { return it.nodes[i].v.at(id).nd }

func (it *interner) timerName(id uint32) string { return it.timers.at(id).name }

func (it *interner) timerBG(id uint32) bool { return it.timers.at(id).bg }

// msgLess orders messages by content, which does not depend on the order in which
// they were numbered.
func (it *interner) msgLess(a, b uint32) bool {
	if a == b {
		return false
	}
	x, y := it.msgs.at(a), it.msgs.at(b)
	switch {
	case x.pre[0] != y.pre[0]:
		return x.pre[0] < y.pre[0]
	case x.pre[1] != y.pre[1]:
		return x.pre[1] < y.pre[1]
	}
	return x.key < y.key
}

// keyPrefix is pre of a message's key (msgInfo).
func keyPrefix(key string) [2]uint64 {
	var b [16]byte
	copy(b[:], key)
	return [2]uint64{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// encodings lists node i's states met so far, by number (for tests).
func (it *interner) encodings(i int) []string {
	t := &it.nodes[i]
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, t.v.n)
	for k := range out {
		out[k] = t.v.at(uint32(k)).enc
	}
	return out
}

// setUp records who is up in the state about to be stepped: the processes alive in
// it (a loop, not a callback: this runs on every step of the search).
func (st *stepper) setUp(nodes []nodeSt) {
	var up uint16
	for i := range nodes {
		if nodes[i].alive {
			up |= 1 << i
		}
	}
	if up == st.up {
		return // nearly always: crashes are rare
	}
	st.up = up
	for i := range st.upNodes {
		st.upNodes[i] = up&(1<<i) != 0
	}
}

// node interns node i's state nd (which it keeps: the caller must not change it).
func (st *stepper) node(i int, nd sim.Node) uint32 {
	st.w.Reset()
	nd.Encode(&st.w)
	enc := st.w.Bytes()
	t := &st.nodes[i]
	t.mu.Lock()
	defer t.mu.Unlock()
	if id, ok := t.idx[string(enc)]; ok {
		return id
	}
	s := string(enc)
	id, info := t.v.add()
	info.nd, info.enc = nd, s
	t.idx[s] = id
	st.bytes.Add(int64(2*len(s)) + 160) // the map key, the copy and a small node value
	return id
}

// msg interns a message (its ID is ignored: content is what counts).
func (st *stepper) msg(m *sim.Message) uint32 {
	b := st.buf[:0]
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
	st.buf = b
	st.msgMu.Lock()
	defer st.msgMu.Unlock()
	if id, ok := st.msgIdx[string(b)]; ok {
		return id
	}
	c := m.Clone()
	c.ID = 0
	key := string(b)
	id, info := st.msgs.add()
	info.m, info.key, info.pre = c, key, keyPrefix(key)
	info.ch = int32(m.From*st.m.n + m.To)
	info.bg = slices.Contains(st.m.bgMsgs, m.Type)
	info.desc = fmt.Sprintf("%s %s -> %s", m.Type, st.m.name(m.From), st.m.name(m.To))
	st.msgIdx[key] = id
	st.bytes.Add(int64(2*len(b)) + 160)
	return id
}

func (st *stepper) timer(name string) uint32 {
	st.timerMu.Lock()
	defer st.timerMu.Unlock()
	if id, ok := st.timerIdx[name]; ok {
		return id
	}
	id, info := st.timers.add()
	info.name, info.bg = name, slices.Contains(st.m.bgTimers, name)
	st.timerIdx[name] = id
	return id
}

// step returns what node i in state id does with an input (memoised).
func (st *stepper) step(i int, id uint32, kind sim.InputKind, arg uint32) stepResult {
	k := memoK{memoKey(i, id, kind, arg), st.up}
	if st.recent == nil {
		return st.memoStep(k, i, id, kind, arg)
	}
	slot := st.recent.slot(k)
	if st.recent.keys[slot] == k {
		return st.recent.vals[slot]
	}
	r := st.memoStep(k, i, id, kind, arg)
	st.recent.keys[slot], st.recent.vals[slot] = k, r
	return r
}

// memoStep is step through the shared memo (k is the memo's key of the step).
func (st *stepper) memoStep(k memoK, i int, id uint32, kind sim.InputKind, arg uint32) stepResult {
	sh := &st.memo[k.shard()]
	sh.mu.Lock()
	r, ok := sh.m[k]
	sh.mu.Unlock()
	if ok {
		return r
	}
	var nd sim.Node
	if kind == sim.Recover {
		nd = st.m.spec.New(i, &st.m.setup) // a recovered process starts afresh
	} else {
		nd = st.nodeState(i, id).Clone()
	}
	st.in = sim.Input{Kind: kind}
	switch kind {
	case sim.Deliver:
		st.in.Msg = st.message(arg).m.Clone()
	case sim.Timer:
		st.in.Timer = st.timerName(arg)
	}
	if err := st.ctx.Call(st.m.spec, i, nd, &st.in); err != nil {
		// The algorithm's error, or a step against the contract: explore's recover
		// words it as the algorithm's.
		panic(err)
	}
	effs := st.effs[:0]
	for _, e := range st.ctx.Effects() {
		switch e.Kind {
		case sim.Send:
			effs = append(effs, sim.Did{Kind: effSend, Ref: st.msg(&e.Msg), Arg: e.Msg.To})
		case sim.SetTimer:
			st.sawTimer.Store(true)
			if e.After < 1 {
				st.zeroTimeout.Store(true)
			}
			effs = append(effs, sim.Did{Kind: effSetTimer, Ref: st.timer(e.Timer), Arg: e.After})
		case sim.CancelTimer:
			effs = append(effs, sim.Did{Kind: effCancelTimer, Ref: st.timer(e.Timer)})
		case sim.EnterCS, sim.ExitCS:
			effs = append(effs, sim.Did{Kind: e.Kind})
		case sim.DeclareLeader:
			effs = append(effs, sim.Did{Kind: effLeader, Arg: e.Leader})
		}
	}
	st.effs = effs
	st.ctx.Reset(i)
	r = stepResult{next: st.node(i, nd)}
	if len(effs) > 0 {
		r.effs = slices.Clone(effs)
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if old, ok := sh.m[k]; ok {
		return old // another worker took the same step meanwhile
	}
	sh.m[k] = r
	st.bytes.Add(64 + int64(len(effs))*didBytes)
	return r
}
