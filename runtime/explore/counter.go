package explore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// A counterexample is the path the search found, turned into a scenario the kernel
// replays: hold mode, so messages wait until a `deliver` event picks them; `cs` 0, so
// a process leaves the CS on a `release` event; a `fire` event for each time-out; the
// workload events as they happened. The kernel numbers messages as it sends them, so
// the ids of the deliver events come from replaying the path through the kernel and
// matching each delivery to the held message with the same content.

// pstep is one step of a path, in the terms the kernel needs.
type pstep struct {
	kind    tkind
	msg     sim.Message // deliver, lose, drop: what travels (ids are indexes)
	node    int         // timer, release, event
	timer   string
	act     sim.Action // event
	skip    bool       // an event the kernel skips (it no longer applied)
	quiet   bool       // no workload was left (msg is then in that canonical form)
	horizon int        // the horizon msg is capped at (sim.Horizon), -1 for none
	at      int        // the time it happens (timed searches)
	tick    int32      // tick: how long
	words   string
}

// chain lists the states from the initial one to k.
func (x *search) chain(k uint32) []uint32 {
	var out []uint32
	for ; k != noParent; k = x.st.parent(k) {
		out = append(out, k)
	}
	slices.Reverse(out)
	return out
}

// replayPath redoes the search along states (consecutive ones joined by a transition)
// and then, if via >= 0, that transition out of the last one.
func (x *search) replayPath(states []uint32, via int) ([]pstep, error) {
	m := x.m
	cur, nxt := newState(m), newState(m)
	var out []pstep
	x.initial(cur, &out)
	first, err := x.keyOf(int(states[0]))
	if err != nil {
		return nil, err
	}
	if key := m.encode(nil, cur); !bytes.Equal(key, first) {
		return nil, errors.New("explore: the path does not start at the initial state")
	}
	clock := 0
	take := func(t trans) {
		p := x.describe(cur, t)
		p.at = clock
		nxt.copyFrom(cur)
		x.apply(nxt, t)
		if t.kind == tTick {
			p.tick = x.tick
			p.words = fmt.Sprintf("time passes: %d", x.tick)
			clock += int(x.tick)
		}
		out = append(out, p)
		cur, nxt = nxt, cur
	}
	var key []byte
	for j := 1; j < len(states); j++ {
		want, err := x.keyOf(int(states[j]))
		if err != nil {
			return nil, err
		}
		trs := x.enumerate(cur, nil)
		found := false
		for _, t := range trs {
			nxt.copyFrom(cur)
			x.apply(nxt, t)
			key = m.encode(key[:0], nxt)
			if bytes.Equal(key, want) {
				take(t)
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("explore: no transition joins states %d and %d of the path", states[j-1], states[j])
		}
	}
	if via >= 0 {
		trs := x.enumerate(cur, nil)
		take(trs[via])
	}
	return out, nil
}

// describe says what t will do from s, before it is applied.
func (x *search) describe(s *state, t trans) pstep {
	p := pstep{kind: t.kind, node: -1, quiet: x.canon != nil && x.quiet(s), horizon: x.horizon(s)}
	switch t.kind {
	case tDeliver, tLose, tDrop:
		k := t.a
		if t.kind == tDrop {
			k = t.b
		}
		info := x.it.message(s.msgs[k].msg)
		p.msg = info.m.Clone()
		verb := map[tkind]string{tDeliver: "deliver", tLose: "lose", tDrop: "drop"}[t.kind]
		p.words = verb + " " + x.msgWords(&p.msg)
	case tTimer:
		tm := s.timers[t.a]
		p.node, p.timer = int(tm.node), x.it.timerName(uint32(tm.name))
		p.words = fmt.Sprintf("%s's timer %q fires", x.m.name(p.node), p.timer)
	case tRelease:
		p.node = int(t.a)
		p.words = fmt.Sprintf("%s leaves the CS", x.m.name(p.node))
	case tEvent:
		p.act = x.m.events[t.a].act
		p.node = p.act.Node
		p.skip = !x.applies(s, &p.act) || p.act.Do == sim.ActDrop
		p.words = x.eventWords(&p.act)
		if p.skip && p.act.Do != sim.ActDrop {
			p.words += " (does not apply now: skipped)"
		}
	}
	return p
}

func (x *search) msgWords(msg *sim.Message) string {
	var payload []string
	if mt := x.m.spec.MessageType(msg.Type); mt != nil {
		for _, f := range []struct {
			name string
			v    string
		}{{mt.TS, fmt.Sprint(msg.TS)}, {mt.Arg, fmt.Sprint(msg.Arg)}, {mt.Vec, fmt.Sprint(msg.Vec)}, {mt.Queue, fmt.Sprint(msg.Queue)}} {
			if f.name != "" {
				payload = append(payload, f.name+" "+f.v)
			}
		}
	}
	s := fmt.Sprintf("%s %s -> %s", msg.Type, x.m.name(msg.From), x.m.name(msg.To))
	if len(payload) > 0 {
		s += " (" + strings.Join(payload, ", ") + ")"
	}
	return s
}

func (x *search) eventWords(a *sim.Action) string {
	switch a.Do {
	case sim.ActRequest:
		return x.m.name(a.Node) + " asks for the CS"
	case sim.ActRelease:
		return x.m.name(a.Node) + " leaves the CS"
	case sim.ActElect:
		return x.m.name(a.Node) + " calls an election"
	case sim.ActCrash:
		return x.m.name(a.Node) + " crashes"
	case sim.ActRecover:
		return x.m.name(a.Node) + " recovers"
	case sim.ActPartition:
		return "the network splits"
	case sim.ActHeal:
		return "the partition heals"
	case sim.ActDrop:
		return "a drop event may now lose a message"
	}
	return a.Do.String()
}

// kernelConfig is the configuration a counterexample runs in: hold mode, nothing lost
// at random, a process stays in the CS until a release event, no scheduled events.
func (x *search) kernelConfig() sim.Config {
	cfg := x.m.cfg
	cfg.Network.Hold, cfg.Network.Loss, cfg.CS, cfg.Actions = true, 0, 0, nil
	return cfg
}

// kernelEvents turns a path into scenario events by carrying it out on a live kernel
// run in hold mode; spread puts the untimed steps one time unit apart (so the pending
// monitor can see time pass), otherwise everything happens at time 0.
func (x *search) kernelEvents(path []pstep, spread bool) ([]scenarios.Event, []int, error) {
	s, err := sim.New(x.kernelConfig(), nil)
	if err != nil {
		return nil, nil, err
	}
	ids := x.m.ids
	var evs []scenarios.Event
	var index []int // path step of each event
	t := 0
	for j := range path {
		p := &path[j]
		switch {
		case x.m.timed:
			t = p.at
		case spread:
			t = j + 1
		}
		var a sim.Action
		switch p.kind {
		case tTick:
			continue
		case tDeliver, tLose, tDrop:
			held, ok := x.held(s, p)
			if !ok {
				return nil, nil, fmt.Errorf("explore: step %d (%s): no such message is held in the kernel", j+1, p.words)
			}
			id := held.ID
			// A reduced search knows the message in canonical form: say what the
			// kernel sends.
			verb, _, _ := strings.Cut(p.words, " ")
			p.words = verb + " " + x.msgWords(held)
			a = sim.Action{Do: sim.ActDeliver, Msg: id, From: -1, To: -1}
			if p.kind != tDeliver {
				a.Do = sim.ActDrop
			}
		case tTimer:
			a = sim.Action{Do: sim.ActFire, Node: p.node, Timer: p.timer, From: -1, To: -1}
		case tRelease:
			a = sim.Action{Do: sim.ActRelease, Node: p.node, From: -1, To: -1}
		case tEvent:
			if p.skip {
				continue
			}
			a = p.act
			a.At = 0
		}
		if err := s.Apply(a); err != nil {
			return nil, nil, fmt.Errorf("explore: step %d (%s) does not replay in the kernel: %w", j+1, p.words, err)
		}
		a.At = t
		e, err := sim.ActionJSONOf(&a, ids)
		if err != nil {
			return nil, nil, fmt.Errorf("explore: step %d (%s): %w", j+1, p.words, err)
		}
		evs = append(evs, e)
		index = append(index, j)
	}
	return evs, index, nil
}

// held finds the oldest held message that path step p delivers (or loses).
func (x *search) held(s *sim.Sim, p *pstep) (*sim.Message, bool) {
	for _, f := range s.InFlight() {
		if x.sameMessage(&f.Msg, p) {
			h := f.Msg
			return &h, true
		}
	}
	return nil, false
}

// counterexample builds the scenario of a violation, replays it through the kernel to
// find the step where the monitors report it, and makes its link.
func (x *search) counterexample(sc *scenarios.Scenario, out outcome) (*Counterexample, int, error) {
	states := out.states
	if states == nil {
		states = x.chain(out.last)
	}
	path, err := x.replayPath(states, out.via)
	if err != nil {
		return nil, 0, err
	}
	if out.repeat > 0 {
		// A lasso: the cycle goes round a few more times, so the kernel's pending
		// monitor sees the request wait.
		cyc := path[len(path)-out.repeat:]
		for r := 0; r < 2; r++ {
			path = append(path, cyc...)
		}
	}
	lasso := out.repeat > 0
	spread := lasso && !x.m.timed
	evs, index, err := x.kernelEvents(path, spread)
	if err != nil {
		return nil, 0, err
	}
	cx := x.scenarioOf(sc, out.found, evs, len(path))
	if lasso {
		x.pendingLimit(cx, path, evs, index, out.waiter)
	}
	c := &Counterexample{Scenario: cx}
	for _, p := range path {
		c.Path = append(c.Path, p.words)
	}
	kernelProp := out.found.property
	if out.kernel != "" {
		kernelProp = out.kernel
	}
	c.Step, c.Replayed, err = replayScenario(cx, kernelProp)
	if err != nil {
		return nil, 0, err
	}
	if link, err := (scenarios.Link{Scenario: cx, Step: c.Step}).Path(); err == nil {
		c.Link = link
	}
	return c, len(path), nil
}

// scenarioOf is the counterexample scenario: the original's algorithm, ids, params and
// delays, in hold mode, with the path as its events.
func (x *search) scenarioOf(sc *scenarios.Scenario, f *finding, evs []scenarios.Event, steps int) *scenarios.Scenario {
	fifo, hold, zero := x.m.fifo, true, 0
	fires := ""
	if slices.ContainsFunc(evs, func(e scenarios.Event) bool { return e.Do == "fire" }) {
		fires = "; fire events place the time-outs"
	}
	until := 1
	for _, e := range evs {
		until = max(until, e.At+1)
	}
	cx := &scenarios.Scenario{
		Version:   scenarios.Version,
		Algorithm: x.m.spec.Slug,
		Title:     "Counterexample: " + PropertyWords(f.property) + " broken",
		About: fmt.Sprintf("Found by playground explore: a shortest run (%d steps) that breaks %s: %s. "+
			"Messages are held (hold mode) and the deliver events pick them in the order the search found%s.",
			steps, PropertyWords(f.property), f.detail, fires),
		Nodes:   x.m.n,
		IDs:     slices.Clone(x.m.ids),
		Seed:    sc.Seed,
		Network: &scenarios.Network{Delay: scenarios.Delay{int(x.m.dmin), int(x.m.dmax)}, FIFO: &fifo, Hold: hold},
		CS:      &zero,
		Params:  slices.Clone(sc.Params),
		Events:  evs,
		Until:   until,
		Source:  sc.Source, // the rules the search ran, when they are a student's
	}
	if sc.Monitors != nil {
		mon := *sc.Monitors
		cx.Monitors = &mon
	}
	if len(bytes.TrimSpace(cx.Params)) == 0 || string(bytes.TrimSpace(cx.Params)) == "null" {
		cx.Params = nil
	} else {
		var buf bytes.Buffer
		if json.Compact(&buf, cx.Params) == nil {
			cx.Params = buf.Bytes()
		}
	}
	return cx
}

// pendingLimit sets the pending monitor's limit so that the kernel reports the
// request that the lasso keeps waiting: from its request to the end of the run.
func (x *search) pendingLimit(cx *scenarios.Scenario, path []pstep, evs []scenarios.Event, index []int, waiter int) {
	asked := 0
	for k, j := range index {
		p := &path[j]
		if p.kind == tEvent && p.act.Do == sim.ActRequest && p.act.Node == waiter {
			asked = evs[k].At
		}
	}
	last := cx.Until - 1
	cx.Monitors = &scenarios.Monitors{Pending: max(1, last-asked)}
}

// replayScenario runs the counterexample through the kernel and returns the step at
// which the monitors report the property (or the last step, and false).
func replayScenario(cx *scenarios.Scenario, property string) (int, bool, error) {
	doc, err := json.Marshal(cx)
	if err != nil {
		return 0, false, err
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return 0, false, fmt.Errorf("explore: the counterexample is not a valid scenario: %w", err)
	}
	cfg, err := sc.Config()
	if err != nil {
		return 0, false, err
	}
	seen := false
	s, err := sim.New(cfg, func(ev *sim.Event) {
		if ev.Type == sim.EvViolation && ev.Property == property {
			seen = true
		}
	})
	if err != nil {
		return 0, false, err
	}
	for !seen {
		ok, err := s.Step()
		if err != nil {
			return 0, false, err
		}
		if !ok {
			break
		}
	}
	if !seen {
		if err := s.Run(); err != nil {
			return 0, false, err
		}
	}
	return s.Steps(), seen, nil
}
