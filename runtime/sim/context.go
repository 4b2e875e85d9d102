package sim

import "fmt"

// EffectKind says what a node did during a step.
type EffectKind uint8

const (
	FireRule EffectKind = iota
	Send
	SetTimer
	CancelTimer
	EnterCS
	ExitCS
	DeclareLeader
)

// Effect is one thing a node did, in the order it did it.
type Effect struct {
	Kind   EffectKind
	Rule   string  // FireRule
	Why    string  // FireRule: which case of the rule applied (a key of Rule.Why)
	Msg    Message // Send (To set)
	Timer  string  // SetTimer, CancelTimer
	After  int     // SetTimer
	Leader int     // DeclareLeader: the leader's id
}

// Context is a node's only window on the world during one step: it records effects,
// and the kernel (or a test) reads them afterwards. It holds no clock and no randomness.
type Context struct {
	self    int
	ids     []int
	up      []bool // who is up, for Up; nil: everybody
	effects []Effect
	did     []Did // the same effects as Take reads them (Ref: the effect's index)
	err     error // set by Fail: the step could not be carried out
}

// add records effect e; arg is what Take reads of it (Did.Arg).
func (c *Context) add(e Effect, arg int) {
	c.did = append(c.did, Did{Kind: e.Kind, Ref: uint32(len(c.effects)), Arg: arg})
	c.effects = append(c.effects, e)
}

// NewContext returns a context for node self among ids; tests use it to drive one node.
func NewContext(self int, ids []int) *Context {
	return &Context{self: self, ids: ids}
}

// Self is this node's index.
func (c *Context) Self() int { return c.self }

// N is the number of nodes.
func (c *Context) N() int { return len(c.ids) }

// ID is the id of node i; SelfID the id of this node.
func (c *Context) ID(i int) int { return c.ids[i] }
func (c *Context) SelfID() int  { return c.ids[c.self] }

// Up is a perfect failure detector: it reports whether node i is up (not crashed)
// right now. An algorithm asks it only where its notes assume crashes are reliably
// detected; the kernel answers from its own record of crashes.
func (c *Context) Up(i int) bool { return c.up == nil || c.up[i] }

// SetUp points Up at a record of who is up (shared, read at each call; nil: everybody).
// The kernel and the explorer set it; a test may, to drive one node beside crashed ones.
func (c *Context) SetUp(up []bool) { c.up = up }

// Index returns the index of the node with this id.
func (c *Context) Index(id int) (int, bool) {
	for i, v := range c.ids {
		if v == id {
			return i, true
		}
	}
	return 0, false
}

// Rule records that a labelled rule of the pseudocode fired.
func (c *Context) Rule(label string) {
	c.add(Effect{Kind: FireRule, Rule: label}, 0)
}

// RuleWhy records that a rule fired and which of its cases applied, so the narration
// can say why ("defers P1's request: its own request is older"). why is a key of the
// rule's Why map: a constant, so recording it costs nothing.
func (c *Context) RuleWhy(label, why string) {
	c.add(Effect{Kind: FireRule, Rule: label, Why: why}, 0)
}

// Send sends m to node index to. The kernel assigns the id and sets From and To.
func (c *Context) Send(to int, m Message) {
	m.From, m.To = c.self, to
	c.add(Effect{Kind: Send, Msg: m}, to)
}

// SetTimer (re)arms the named timer to fire after the given virtual time.
func (c *Context) SetTimer(name string, after int) {
	c.add(Effect{Kind: SetTimer, Timer: name, After: after}, after)
}

// CancelTimer disarms the named timer; cancelling an unarmed one is harmless.
func (c *Context) CancelTimer(name string) {
	c.add(Effect{Kind: CancelTimer, Timer: name}, 0)
}

// Enter and Exit mark the critical section.
func (c *Context) Enter() { c.add(Effect{Kind: EnterCS}, 0) }
func (c *Context) Exit()  { c.add(Effect{Kind: ExitCS}, 0) }

// Leader records that this node now takes the node with this id as leader.
func (c *Context) Leader(id int) {
	c.add(Effect{Kind: DeclareLeader, Leader: id}, id)
}

// Fail records that this step could not be carried out: an algorithm written in a
// script (algorithms/starlarkalg) ran into an error or one of its bounds. The kernel then
// discards the step's effects and stops the run with err, so a student's bug is a
// failed run with a message, never a crash. Go algorithms never call it.
func (c *Context) Fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Call gives node nd, index i of a run of spec, one input through c, and checks what
// it did against the contract: a step that failed (Fail), or that sent a message to a
// node the run does not have or of the type reserved for application messages, is an
// error that stops the run, and none of its effects count. The kernel and the explorer
// (which keeps the result for every later step from the same state) call a node so.
func (c *Context) Call(spec *Spec, i int, nd Node, in *Input) error {
	c.Reset(i)
	nd.Step(c, in)
	if c.err != nil {
		return c.err
	}
	for _, d := range c.did {
		if d.Kind != Send {
			continue
		}
		e := &c.effects[d.Ref]
		if d.Arg < 0 || d.Arg >= len(c.ids) {
			return fmt.Errorf("%s: P%d sent %s to node index %d, which does not exist", spec.Slug, c.ids[i], e.Msg.Type, e.Msg.To)
		}
		if e.Msg.Type == AppMessage {
			// The kernel would take it for a tell and never deliver it to the algorithm.
			return fmt.Errorf("%s: P%d sent a message of type %s, which is reserved for application messages", spec.Slug, c.ids[i], AppMessage)
		}
	}
	return nil
}

// Err returns the error recorded by Fail since the last Reset, or nil.
func (c *Context) Err() error { return c.err }

// Effects returns what was recorded since the last Reset.
func (c *Context) Effects() []Effect { return c.effects }

// Reset clears the effects and points the context at another node.
func (c *Context) Reset(self int) {
	c.self = self
	c.err = nil
	clear(c.effects) // drop references held by old messages
	c.effects = c.effects[:0]
	c.did = c.did[:0]
}

// Sent returns the messages sent since the last Reset, for tests.
func (c *Context) Sent() []Message {
	return effectsOf(c, Send, func(e *Effect) Message { return e.Msg })
}

// Rules returns the labels fired since the last Reset, for tests.
func (c *Context) Rules() []string {
	return effectsOf(c, FireRule, func(e *Effect) string { return e.Rule })
}

// effectsOf picks one field of the effects of one kind since the last Reset.
func effectsOf[T any](c *Context, kind EffectKind, field func(*Effect) T) []T {
	var out []T
	for k := range c.effects {
		if c.effects[k].Kind == kind {
			out = append(out, field(&c.effects[k]))
		}
	}
	return out
}
