package starlarkalg

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/teach-dist/playground/runtime/sim"
)

// stepCtx is ctx in a handler: sim.Context as Starlark sees it. In encode and
// waiting_for (view) it only answers questions: nothing may happen there.
type stepCtx struct {
	ctx      *sim.Context // nil in a view
	n        *node
	in       *sim.Input
	view     bool
	lastRule string
	effects  int
}

var ctxFields = []string{"self", "n", "self_id", "ids", "params", "max_delay",
	"id", "index", "up", "rule", "send", "set_timer", "cancel_timer", "enter", "exit", "leader"}

func (c *stepCtx) String() string        { return "ctx" }
func (c *stepCtx) Type() string          { return "ctx" }
func (c *stepCtx) Freeze()               {}
func (c *stepCtx) Truth() starlark.Bool  { return true }
func (c *stepCtx) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: ctx") }
func (c *stepCtx) AttrNames() []string   { return ctxFields }

// ctxMethods are the methods of ctx, built once and bound to each step's ctx.
var ctxMethods = map[string]*starlark.Builtin{}

func init() {
	for name, fn := range map[string]func(c *stepCtx, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error){
		"id": (*stepCtx).id, "index": (*stepCtx).index, "up": (*stepCtx).up, "rule": (*stepCtx).rule,
		"send": (*stepCtx).send, "set_timer": (*stepCtx).setTimer, "cancel_timer": (*stepCtx).cancelTimer,
		"enter": (*stepCtx).enter, "exit": (*stepCtx).exit, "leader": (*stepCtx).leader,
	} {
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
		return c.n.params(), nil
	case "max_delay":
		return starlark.MakeInt(c.n.setup.MaxDelay), nil
	}
	if b, ok := ctxMethods[name]; ok {
		return b.BindReceiver(c), nil
	}
	return nil, fmt.Errorf("ctx has no field %q (fields: %v)", name, ctxFields)
}

// node reads a node index argument.
func (c *stepCtx) nodeIndex(fn string, v starlark.Value) (int, error) {
	var i int
	if err := starlark.AsInt(v, &i); err != nil {
		return 0, fmt.Errorf("%s: want a node index, got %s", fn, v.Type())
	}
	if i < 0 || i >= len(c.n.setup.IDs) {
		return 0, fmt.Errorf("%s: node index %d out of range (0 to %d)", fn, i, len(c.n.setup.IDs)-1)
	}
	return i, nil
}

func (c *stepCtx) id(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs("ctx.id", args, kwargs, 1, &v); err != nil {
		return nil, err
	}
	i, err := c.nodeIndex("ctx.id", v)
	if err != nil {
		return nil, err
	}
	return starlark.MakeInt(c.n.setup.IDs[i]), nil
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
	var v starlark.Value
	if err := starlark.UnpackPositionalArgs("ctx.up", args, kwargs, 1, &v); err != nil {
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

func (c *stepCtx) rule(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var label, why string
	if err := starlark.UnpackArgs("ctx.rule", args, kwargs, "label", &label, "why?", &why); err != nil {
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

func (c *stepCtx) send(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var to starlark.Value
	var typ string
	var ts, arg int
	var vec, queue starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs("ctx.send", args, kwargs, "to", &to, "type", &typ,
		"ts?", &ts, "arg?", &arg, "vec?", &vec, "queue?", &queue); err != nil {
		return nil, err
	}
	if err := c.act("ctx.send"); err != nil {
		return nil, err
	}
	j, err := c.nodeIndex("ctx.send", to)
	if err != nil {
		return nil, err
	}
	if !c.n.p.messages[typ] {
		return nil, fmt.Errorf("ctx.send: %q is not one of the declared messages", typ)
	}
	m := sim.Message{Type: typ, TS: ts, Arg: arg}
	lim := c.n.p.limits.MessageInts
	for _, slot := range []struct {
		name string
		v    starlark.Value
		dst  *[]int
	}{{"vec", vec, &m.Vec}, {"queue", queue, &m.Queue}} {
		if slot.v == starlark.None {
			continue
		}
		ints, ok := intsOf(slot.v, lim)
		if !ok {
			return nil, fmt.Errorf("ctx.send: %s must be a list of at most %d ints", slot.name, lim)
		}
		*slot.dst = ints
	}
	c.ctx.Send(j, m)
	return starlark.None, nil
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
	if err := starlark.UnpackPositionalArgs("ctx.enter", args, kwargs, 0); err != nil {
		return nil, err
	}
	if err := c.act("ctx.enter"); err != nil {
		return nil, err
	}
	c.ctx.Enter()
	return starlark.None, nil
}

func (c *stepCtx) exit(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs("ctx.exit", args, kwargs, 0); err != nil {
		return nil, err
	}
	if err := c.act("ctx.exit"); err != nil {
		return nil, err
	}
	c.ctx.Exit()
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
