package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// Load compiles a source in a worker and returns a Spec whose nodes step there. Its
// errors are *starlarkalg.Error, as an in-process load's, so the editor places them;
// a load the sandbox had to stop says which bound it hit.
func (p *Pool) Load(slug, source string) (*sim.Spec, error) {
	prog := &remoteProgram{pool: p, key: programKey(slug, source), slug: slug, source: source}
	resp, err := p.call("", prog.loadRequest(), nil)
	if err != nil {
		return nil, &LoadError{Err: &starlarkalg.Error{Algorithm: slug, Msg: "loading the source: " + err.Error()}}
	}
	if resp.LoadErr != nil {
		return nil, resp.LoadErr
	}
	if resp.Spec == nil {
		return nil, &starlarkalg.Error{Algorithm: slug, Msg: "the sandbox answered without the source's declarations"}
	}
	spec := resp.Spec.spec()
	prog.token = resp.Spec.HoldsToken
	spec.New = prog.newNode
	if len(spec.Params) > 0 {
		parse, err := starlarkalg.ParamsParser(spec.Params)
		if err != nil {
			return nil, &starlarkalg.Error{Algorithm: slug, Msg: "params: " + err.Error()}
		}
		spec.ParseParams = func(raw []byte, ids []int) (any, error) {
			if _, err := parse(raw, ids); err != nil {
				return nil, err
			}
			return rawParams(slices.Clone(raw)), nil
		}
	}
	return spec, nil
}

// LoadError is a load the sandbox could not finish (its worker died or ran out of
// time): unlike the source's own errors it may not happen again, so it is not kept
// (Temporary).
type LoadError struct{ Err *starlarkalg.Error }

func (e *LoadError) Error() string   { return e.Err.Error() }
func (e *LoadError) Unwrap() error   { return e.Err }
func (e *LoadError) Temporary() bool { return true }

// programKey names a source in the workers.
func programKey(slug, source string) string {
	h := sha256.New()
	h.Write([]byte(slug))
	h.Write([]byte{0})
	h.Write([]byte(source))
	return hex.EncodeToString(h.Sum(nil))
}

// rawParams are a run's params as the scenario gave them (checked): a worker decodes
// them with the source's declarations.
type rawParams []byte

// remoteProgram is a source loaded in the workers.
type remoteProgram struct {
	pool   *Pool
	key    string
	slug   string
	source string
	token  bool
}

func (rp *remoteProgram) loadRequest() *request {
	return &request{Op: opLoad, Key: rp.key, Slug: rp.slug, Source: rp.source}
}

func (rp *remoteProgram) newNode(self int, setup *sim.Setup) sim.Node {
	raw, _ := setup.Params.(rawParams)
	n := &remoteNode{prog: rp, self: self, owner: setup.Owner, setup: setupWire{IDs: setup.IDs, Params: raw, MaxDelay: setup.MaxDelay}}
	if rp.token {
		return remoteTokenNode{n}
	}
	return n
}

// remoteNode is a process of a source: its state as the worker encoded it, and what
// the worker answered of it after its last step. The server keeps only this data; a
// clone shares it (a result is never changed, only replaced).
type remoteNode struct {
	prog  *remoteProgram
	self  int
	owner string // the client whose share of the workers its steps take
	setup setupWire
	res   *starlarkalg.Result // nil until the first state is made
}

// remoteTokenNode is a node of a source that defines holds_token (sim.TokenHolder).
type remoteTokenNode struct{ *remoteNode }

func (t remoteTokenNode) HoldsToken() bool { return t.result().Token }

// result is the node's current result, its first state made on first use.
func (n *remoteNode) result() *starlarkalg.Result {
	if n.res == nil {
		n.res = n.call(&request{Op: opInit}, "init")
	}
	return n.res
}

// call asks a worker and returns its result, a sandbox error as the result's error.
func (n *remoteNode) call(req *request, handler string) *starlarkalg.Result {
	req.Key, req.Self, req.Setup = n.prog.key, n.self, n.setup
	resp, err := n.prog.pool.call(n.owner, req, n.prog.loadRequest())
	if err == nil && resp.LoadErr != nil {
		err = resp.LoadErr
	}
	if err != nil {
		e := &starlarkalg.Error{Algorithm: n.prog.slug, Handler: handler, Node: n.setup.IDs[n.self], Msg: err.Error()}
		var se *starlarkalg.Error
		if errors.As(err, &se) {
			e = se
		}
		return &starlarkalg.Result{Err: e}
	}
	return &resp.Result
}

func (n *remoteNode) Step(ctx *sim.Context, in *sim.Input) {
	cur := n.result()
	if cur.Err != nil {
		ctx.Fail(cur.Err)
		return
	}
	up := make([]bool, ctx.N())
	for i := range up {
		up[i] = ctx.Up(i)
	}
	res := n.call(&request{Op: opStep, State: cur.State, Input: *in, Up: up}, handlerOf(in))
	if res.Err != nil {
		ctx.Fail(res.Err)
		return
	}
	for k := range res.Effects {
		e := &res.Effects[k]
		switch e.Kind {
		case sim.FireRule:
			ctx.RuleWhy(e.Rule, e.Why)
		case sim.Send:
			ctx.Send(e.Msg.To, e.Msg)
		case sim.SetTimer:
			ctx.SetTimer(e.Timer, e.After)
		case sim.CancelTimer:
			ctx.CancelTimer(e.Timer)
		case sim.EnterCS:
			ctx.Enter()
		case sim.ExitCS:
			ctx.Exit()
		case sim.DeclareLeader:
			ctx.Leader(e.Leader)
		}
	}
	res.Effects = nil
	n.res = res
}

// handlerOf names the handler an input goes to, for an error the sandbox reports.
func handlerOf(in *sim.Input) string {
	switch in.Kind {
	case sim.Init:
		return "on_start"
	case sim.Deliver:
		return "on_" + in.Msg.Type
	case sim.Timer:
		return "on_timer"
	}
	return "on_" + in.Kind.String()
}

func (n *remoteNode) Clone() sim.Node {
	c := *n
	if n.prog.token {
		return remoteTokenNode{&c}
	}
	return &c
}

func (n *remoteNode) Encode(w *sim.StateWriter) {
	res := n.result()
	if res.Err != nil {
		w.Str("error", res.Err.Error())
		return
	}
	w.Object(res.View)
}

func (n *remoteNode) WaitingFor() []int { return n.result().Waiting }

// Footprint is sim.Footprinter: what a session's kept clones cost.
func (n *remoteNode) Footprint() int {
	if n.res == nil {
		return 64
	}
	return 64 + len(n.res.State) + len(n.res.View) + 8*len(n.res.Waiting)
}
