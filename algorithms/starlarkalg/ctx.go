package starlarkalg

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// stepCtx is ctx in a handler: sim.Context as Starlark sees it. In encode and
// waiting_for (view) it only answers questions: nothing may happen there.
type stepCtx struct {
	ctx      *sim.Context // nil in a view
	n        *node
	view     bool
	lastRule string
	effects  int
	methods  [len(methodNames)]starlark.Value // ctxMethods bound to this ctx, as methodNames
	sites    []*siteArgs                      // the call sites' argument buffers, a stack (sites.go)
	depth    int                              // how many of them are taken
}

// bind binds the methods once for the node's life.
func (c *stepCtx) bind() {
	for k, name := range methodNames {
		c.methods[k] = ctxMethods[name].BindReceiver(c)
	}
}

// methodNames are ctx's methods, in the order of stepCtx.methods.
var methodNames = [...]string{"id", "index", "up", "rule", "send", "set_timer", "cancel_timer", "enter", "exit", "leader"}

var ctxFields = append([]string{"self", "n", "self_id", "ids", "params", "max_delay"}, methodNames[:]...)

func (c *stepCtx) String() string        { return "ctx" }
func (c *stepCtx) Type() string          { return "ctx" }
func (c *stepCtx) Freeze()               {}
func (c *stepCtx) Truth() starlark.Bool  { return true }
func (c *stepCtx) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: ctx") }
func (c *stepCtx) AttrNames() []string   { return ctxFields }

// ctxMethods are the methods of ctx, built once and bound to each step's ctx.
var ctxMethods = map[string]*starlark.Builtin{}

// ctxFuncs are the Go functions of ctx's methods, which a call site calls directly.
var ctxFuncs = map[string]func(c *stepCtx, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error){
	"id": (*stepCtx).id, "index": (*stepCtx).index, "up": (*stepCtx).up, "rule": (*stepCtx).rule,
	"send": (*stepCtx).send, "set_timer": (*stepCtx).setTimer, "cancel_timer": (*stepCtx).cancelTimer,
	"enter": (*stepCtx).enter, "exit": (*stepCtx).exit, "leader": (*stepCtx).leader,
}

func init() {
	for name, fn := range ctxFuncs {
		ctxMethods[name] = starlark.NewBuiltin("ctx."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return fn(b.Receiver().(*stepCtx), args, kwargs)
		})
	}
}

func (c *stepCtx) Attr(name string) (starlark.Value, error) {
	ids := c.n.setup.IDs
	switch name {
	case "self":
		return starlark.MakeInt(c.n.self), nil
	case "n":
		return starlark.MakeInt(len(ids)), nil
	case "self_id":
		return starlark.MakeInt(ids[c.n.self]), nil
	case "ids":
		return intTuple(ids), nil
	case "params":
		return c.n.pv, nil
	case "max_delay":
		return starlark.MakeInt(c.n.setup.MaxDelay), nil
	// The methods, by a switch rather than a map: ctx.rule and ctx.send are read in
	// nearly every step.
	case "id":
		return c.methods[0], nil
	case "index":
		return c.methods[1], nil
	case "up":
		return c.methods[2], nil
	case "rule":
		return c.methods[3], nil
	case "send":
		return c.methods[4], nil
	case "set_timer":
		return c.methods[5], nil
	case "cancel_timer":
		return c.methods[6], nil
	case "enter":
		return c.methods[7], nil
	case "exit":
		return c.methods[8], nil
	case "leader":
		return c.methods[9], nil
	}
	return nil, fmt.Errorf("ctx has no field %q (fields: %v)", name, ctxFields)
}

// node reads a node index argument.
func (c *stepCtx) nodeIndex(fn string, v starlark.Value) (int, error) {
	i, ok := smallInt(v)
	if !ok {
		if err := starlark.AsInt(v, &i); err != nil {
			return 0, fmt.Errorf("%s: want a node index, got %s", fn, v.Type())
		}
	}
	if i < 0 || i >= len(c.n.setup.IDs) {
		return 0, fmt.Errorf("%s: node index %d out of range (0 to %d)", fn, i, len(c.n.setup.IDs)-1)
	}
	return i, nil
}

func (c *stepCtx) id(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := oneArg("ctx.id", args, kwargs)
	if err != nil {
		return nil, err
	}
	i, err := c.nodeIndex("ctx.id", v)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt(c.n.setup.IDs[i]), nil
}

// oneArg is the one positional argument of a call; starlark.UnpackPositionalArgs
// would allocate a variable for it, and ctx.id runs in every Ricart-Agrawala step that
// compares requests.
func oneArg(fn string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		return args[0], nil
	}
	var v starlark.Value
	return v, starlark.UnpackPositionalArgs(fn, args, kwargs, 1, &v) // its error
}

// index returns the index of the node with an id, or None.
func (c *stepCtx) index(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id int
	if err := starlark.UnpackPositionalArgs("ctx.index", args, kwargs, 1, &id); err != nil {
		return nil, err
	}
	for i, v := range c.n.setup.IDs {
		if v == id {
			return starlark.MakeInt(i), nil
		}
	}
	return starlark.None, nil
}

// up is the perfect failure detector of sim.Context.Up; in a view everybody is up.
func (c *stepCtx) up(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v, err := oneArg("ctx.up", args, kwargs)
	if err != nil {
		return nil, err
	}
	i, err := c.nodeIndex("ctx.up", v)
	if err != nil {
		return nil, err
	}
	return starlark.Bool(c.ctx == nil || c.ctx.Up(i)), nil
}

// act checks that an effect may happen: not in a view, within the effects bound.
func (c *stepCtx) act(fn string) error {
	if c.view {
		return fmt.Errorf("%s: not allowed here (encode and waiting_for only look)", fn)
	}
	c.effects++
	if c.effects > c.n.p.limits.Effects {
		return fmt.Errorf("%s: more than %d effects in one step", fn, c.n.p.limits.Effects)
	}
	return nil
}

// unpack places positional then keyword arguments into out by the names of a
// builtin's parameters (the first required of them must be given). It is
// starlark.UnpackArgs without its per-argument allocations: rule and send run in
// every step of every algorithm.
func unpack(fn string, args starlark.Tuple, kwargs []starlark.Tuple, names []string, required int, out []starlark.Value) error {
	if err := positional(fn, args, names, out); err != nil {
		return err
	}
	for _, kv := range kwargs {
		key, _ := starlark.AsString(kv[0])
		if err := keyword(fn, key, kv[1], names, out); err != nil {
			return err
		}
	}
	return present(fn, names, required, out)
}

// unpackKeys is unpack for a call $kw rewrote (kwcall.go): the keywords' names are
// keys, separated by spaces, their values vals.
func unpackKeys(fn string, args starlark.Tuple, keys string, vals []starlark.Value, names []string, required int, out []starlark.Value) error {
	if err := positional(fn, args, names, out); err != nil {
		return err
	}
	for _, v := range vals {
		var key string
		key, keys, _ = strings.Cut(keys, " ")
		if err := keyword(fn, key, v, names, out); err != nil {
			return err
		}
	}
	return present(fn, names, required, out)
}

func positional(fn string, args starlark.Tuple, names []string, out []starlark.Value) error {
	if len(args) > len(names) {
		return fmt.Errorf("%s: got %d arguments, want at most %d", fn, len(args), len(names))
	}
	copy(out, args)
	return nil
}

func keyword(fn, key string, v starlark.Value, names []string, out []starlark.Value) error {
	k := slices.Index(names, key)
	if k < 0 {
		return fmt.Errorf("%s: unexpected keyword argument %q (allowed: %s)", fn, key, strings.Join(names, ", "))
	}
	if out[k] != nil {
		return fmt.Errorf("%s: got multiple values for %s", fn, key)
	}
	out[k] = v
	return nil
}

func present(fn string, names []string, required int, out []starlark.Value) error {
	for k := 0; k < required; k++ {
		if out[k] == nil {
			return fmt.Errorf("%s: missing argument %s", fn, names[k])
		}
	}
	return nil
}

// str and integer read an unpacked argument (nil: left out).
func str(fn, name string, v starlark.Value) (string, error) {
	if v == nil {
		return "", nil
	}
	s, ok := v.(starlark.String)
	if !ok {
		return "", fmt.Errorf("%s: %s must be a string, got %s", fn, name, v.Type())
	}
	return string(s), nil
}

func integer(fn, name string, v starlark.Value) (int, error) {
	if v == nil {
		return 0, nil
	}
	n, ok := smallInt(v)
	if ok {
		return n, nil
	}
	if err := starlark.AsInt(v, &n); err != nil {
		return 0, fmt.Errorf("%s: %s must be an int, got %s", fn, name, v.Type())
	}
	return n, nil
}

// smallInt is v as an int when it is a Starlark int that fits, without AsInt's
// conversions through an interface: ctx.send reads two ints in every step.
func smallInt(v starlark.Value) (int, bool) {
	x, ok := v.(starlark.Int)
	if !ok {
		return 0, false
	}
	n, ok := x.Int64()
	if !ok || n < math.MinInt || n > math.MaxInt {
		return 0, false
	}
	return int(n), true
}

var ruleArgs = []string{"label", "why"}

func (c *stepCtx) rule(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a [2]starlark.Value
	if err := unpack("ctx.rule", args, kwargs, ruleArgs, 1, a[:]); err != nil {
		return nil, err
	}
	return c.ruleOf(&a)
}

// ruleOf is ctx.rule with its arguments in place (label, why).
func (c *stepCtx) ruleOf(a *[2]starlark.Value) (starlark.Value, error) {
	label, err := str("ctx.rule", "label", a[0])
	if err != nil {
		return nil, err
	}
	why, err := str("ctx.rule", "why", a[1])
	if err != nil {
		return nil, err
	}
	if err := c.act("ctx.rule"); err != nil {
		return nil, err
	}
	if !c.n.p.rules[label] {
		return nil, fmt.Errorf("ctx.rule: %q is not one of the declared rules", label)
	}
	c.lastRule = label
	if why == "" {
		c.ctx.Rule(label)
	} else {
		c.ctx.RuleWhy(label, why)
	}
	return starlark.None, nil
}

var sendArgs = []string{"to", "type", "ts", "arg", "vec", "queue"}

func (c *stepCtx) send(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a [6]starlark.Value
	if err := unpack("ctx.send", args, kwargs, sendArgs, 2, a[:]); err != nil {
		return nil, err
	}
	return c.sendOf(&a)
}

// sendOf is ctx.send with its arguments in place (to, type, ts, arg, vec, queue).
func (c *stepCtx) sendOf(a *[6]starlark.Value) (starlark.Value, error) {
	if err := c.act("ctx.send"); err != nil {
		return nil, err
	}
	j, err := c.nodeIndex("ctx.send", a[0])
	if err != nil {
		return nil, err
	}
	typ, err := str("ctx.send", "type", a[1])
	if err != nil {
		return nil, err
	}
	if !c.n.p.messages[typ] {
		return nil, fmt.Errorf("ctx.send: %q is not one of the declared messages", typ)
	}
	m := sim.Message{Type: typ}
	if m.TS, err = integer("ctx.send", "ts", a[2]); err != nil {
		return nil, err
	}
	if m.Arg, err = integer("ctx.send", "arg", a[3]); err != nil {
		return nil, err
	}
	if m.Vec, err = c.ints("vec", a[4]); err != nil {
		return nil, err
	}
	if m.Queue, err = c.ints("queue", a[5]); err != nil {
		return nil, err
	}
	c.ctx.Send(j, m)
	return starlark.None, nil
}

// ints reads a message's list slot: nil or None leaves it out.
func (c *stepCtx) ints(name string, v starlark.Value) ([]int, error) {
	if v == nil || v == starlark.None {
		return nil, nil
	}
	lim := c.n.p.limits.MessageInts
	out, ok := intsOf(v, lim)
	if !ok {
		return nil, fmt.Errorf("ctx.send: %s must be a list of at most %d ints", name, lim)
	}
	return out, nil
}

func (c *stepCtx) setTimer(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	var after int
	if err := starlark.UnpackArgs("ctx.set_timer", args, kwargs, "name", &name, "after", &after); err != nil {
		return nil, err
	}
	if err := c.act("ctx.set_timer"); err != nil {
		return nil, err
	}
	if err := c.timerName("ctx.set_timer", name); err != nil {
		return nil, err
	}
	if after < 0 || after > sim.MaxTime {
		return nil, fmt.Errorf("ctx.set_timer: after %d is out of range (0 to %d)", after, sim.MaxTime)
	}
	c.ctx.SetTimer(name, after)
	return starlark.None, nil
}

func (c *stepCtx) timerName(fn, name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%s: a timer's name has 1 to 64 characters", fn)
	}
	return nil
}

func (c *stepCtx) cancelTimer(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs("ctx.cancel_timer", args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	if err := c.act("ctx.cancel_timer"); err != nil {
		return nil, err
	}
	if err := c.timerName("ctx.cancel_timer", name); err != nil {
		return nil, err
	}
	c.ctx.CancelTimer(name)
	return starlark.None, nil
}

func (c *stepCtx) enter(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return c.bare("ctx.enter", args, kwargs, c.ctx.Enter)
}

func (c *stepCtx) exit(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return c.bare("ctx.exit", args, kwargs, c.ctx.Exit)
}

// bare is an action of ctx that takes no argument (fn is its name): do carries it out
// once the step may act.
func (c *stepCtx) bare(fn string, args starlark.Tuple, kwargs []starlark.Tuple, do func()) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(fn, args, kwargs, 0); err != nil {
		return nil, err
	}
	if err := c.act(fn); err != nil {
		return nil, err
	}
	do()
	return starlark.None, nil
}

func (c *stepCtx) leader(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var id int
	if err := starlark.UnpackPositionalArgs("ctx.leader", args, kwargs, 1, &id); err != nil {
		return nil, err
	}
	if err := c.act("ctx.leader"); err != nil {
		return nil, err
	}
	c.ctx.Leader(id)
	return starlark.None, nil
}
