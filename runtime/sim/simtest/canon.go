package simtest

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// QuietCase is one case of CanonCommutes: a fixture already driven to some state, and
// an input that can still come once the workload is over (no Request).
type QuietCase struct {
	F  *Fixture
	In sim.Input
}

// CanonCommutes checks what the explorer's reductions of spec rest on (sim.Canon):
// once the workload is over, putting a state and an input in canonical form
// (Canon.Node, Canon.Msg, then the Horizon's cap at any horizon at or above every
// request timestamp they hold) and then stepping gives what stepping and then the
// canonical form give: the same state, rules, effects and messages. Each of the trials
// calls gen for a case.
func CanonCommutes(t *testing.T, spec *sim.Spec, trials int, gen func(rng *rand.Rand, trial int) QuietCase) {
	t.Helper()
	c := spec.Canon
	if c == nil {
		t.Fatalf("%s declares no canonical forms", spec.Slug)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range trials {
		q := gen(rng, trial)
		h := 0
		if c.Horizon != nil {
			h = max(c.Horizon.Node(q.F.Node), c.Horizon.Msg(&q.In.Msg)) + rng.IntN(3)
		}
		canonNode, canonMsg := storedForms(c, h)
		outcome := func() []string {
			out := []string{string(sim.EncodeState(canonNode(q.F.Node)))}
			out = append(out, q.F.Ctx.Rules()...)
			for _, e := range q.F.Ctx.Effects() {
				out = append(out, "effect "+strconv.Itoa(int(e.Kind)))
			}
			for _, m := range q.F.Ctx.Sent() {
				m = canonMsg(m)
				out = append(out, m.Type+"->"+strconv.Itoa(m.To)+"@"+strconv.Itoa(m.TS)+" "+strconv.Itoa(m.Arg)+" "+slicesString(m.Vec)+" "+slicesString(m.Queue))
			}
			return out
		}
		start := q.F.Node.Clone()

		q.F.Step(q.In) // step, then the canonical form
		want := outcome()

		q.F.Node = canonNode(start).Clone() // the canonical form, then step
		in := q.In
		in.Msg = canonMsg(in.Msg)
		q.F.Step(in)
		if got := outcome(); !slices.Equal(got, want) {
			t.Fatalf("trial %d: from %s with %+v at horizon %d:\n canonical form, then step: %q\n step, then canonical form: %q",
				trial, sim.EncodeState(start), q.In, h, got, want)
		}
	}
}

func slicesString(v []int) string {
	b := []byte{'['}
	for k, x := range v {
		if k > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return string(append(b, ']'))
}

// CommuteCase is one case of DeliveriesCommute: a fixture driven to some state, a
// delivery, another input that can still come once the workload is over, and what
// the explorer would know (Quiet.Horizon: -1 for none).
type CommuteCase struct {
	F       *Fixture
	Deliver sim.Message
	Other   sim.Input
	Quiet   sim.Quiet
}

// DeliveriesCommute checks spec's Canon.Commutes: whenever it says a delivery
// commutes, and the delivery changes nothing the properties see, the delivery sets
// and cancels no timer, and giving the node the delivery and then the other input
// (a delivery, a timer firing, leaving the CS) gives what the other input and then
// the delivery give, all in the form the explorer stores once
// quiet (Canon.Node and Canon.Msg, capped at the horizon when there is one), the
// state and messages included: the state, and the messages, entries and exits of
// the two steps together. It fails if no case of the trials was declared to commute.
func DeliveriesCommute(t *testing.T, spec *sim.Spec, trials int, gen func(rng *rand.Rand, trial int) CommuteCase) {
	t.Helper()
	c := spec.Canon
	if c == nil || c.Commutes == nil {
		t.Fatalf("%s declares no commuting deliveries", spec.Slug)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	declared := 0
	for trial := range trials {
		q := gen(rng, trial)
		h := q.Quiet.Horizon
		stored, storedMsg := storedForms(c, h)
		start := stored(q.F.Node).Clone()
		msg := storedMsg(q.Deliver)
		msg.To = q.F.Ctx.Self()
		if !c.Commutes(start, &msg, q.Quiet) {
			continue
		}
		q.F.Node = start.Clone()
		q.F.Step(sim.Input{Kind: sim.Deliver, Msg: msg})
		if slices.ContainsFunc(q.F.Ctx.Effects(), func(e sim.Effect) bool {
			return e.Kind == sim.EnterCS || e.Kind == sim.ExitCS || e.Kind == sim.DeclareLeader
		}) {
			continue // visible: the explorer never takes it alone
		}
		if slices.ContainsFunc(q.F.Ctx.Effects(), func(e sim.Effect) bool {
			return e.Kind == sim.SetTimer || e.Kind == sim.CancelTimer
		}) {
			t.Fatalf("trial %d: from %s, %+v is declared to commute but sets or cancels a timer, whose firing it would then not commute with",
				trial, sim.EncodeState(start), msg)
		}
		declared++
		other := q.Other
		other.Msg = storedMsg(other.Msg)
		deliver := sim.Input{Kind: sim.Deliver, Msg: msg}
		both := func(first, second sim.Input) []string {
			q.F.Node = start.Clone()
			var did []string
			for _, in := range []sim.Input{first, second} {
				q.F.Step(in)
				q.F.Node = stored(q.F.Node)
				for _, e := range q.F.Ctx.Effects() {
					if e.Kind == sim.EnterCS || e.Kind == sim.ExitCS {
						did = append(did, "effect "+strconv.Itoa(int(e.Kind)))
					}
				}
				for _, m := range q.F.Ctx.Sent() {
					m = storedMsg(m)
					did = append(did, m.Type+"->"+strconv.Itoa(m.To)+"@"+strconv.Itoa(m.TS)+" "+strconv.Itoa(m.Arg)+" "+slicesString(m.Vec)+" "+slicesString(m.Queue))
				}
			}
			slices.Sort(did)
			return append([]string{string(sim.EncodeState(q.F.Node))}, did...)
		}
		if a, b := both(deliver, other), both(other, deliver); !slices.Equal(a, b) {
			t.Fatalf("trial %d: from %s, %+v then %+v (horizon %d):\n %q\nthe other order:\n %q",
				trial, sim.EncodeState(start), msg, other, h, a, b)
		}
	}
	if declared == 0 {
		t.Fatal("no case was declared to commute: the generator tests nothing")
	}
}

// storedForms are the forms the explorer stores a node and a message in once quiet:
// Canon.Node and Canon.Msg, then capped at the horizon h when there is one (h >= 0).
func storedForms(c *sim.Canon, h int) (func(sim.Node) sim.Node, func(sim.Message) sim.Message) {
	capped := c.Horizon != nil && h >= 0
	node := func(nd sim.Node) sim.Node {
		if c.Node != nil {
			nd = c.Node(nd, true)
		}
		if capped {
			nd = c.Horizon.CapNode(nd, h)
		}
		return nd
	}
	msg := func(m sim.Message) sim.Message {
		m = m.Clone()
		if c.Msg != nil {
			c.Msg(&m, true)
		}
		if capped {
			c.Horizon.CapMsg(&m, h)
		}
		return m
	}
	return node, msg
}
