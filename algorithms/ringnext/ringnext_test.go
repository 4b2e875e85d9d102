package ringnext

import (
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// settings stands for a ring election's params: its own field, then the link's.
type settings struct {
	Extra string `param:"extra"`
	Ring  Params
}

var fields = append([]sim.Param{{Name: "extra", Kind: sim.ParamChoice, Choices: []string{"x"}}}, Fields...)

func TestFieldsDecode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Params
		wantErr string
	}{
		{"", Params{}, ""},
		{" null ", Params{}, ""},
		{"{}", Params{}, ""},
		{`{"ack": true}`, Params{Ack: true}, ""},
		{`{"ack": true, "ackTimeout": 3, "extra": "x"}`, Params{Ack: true, AckTimeout: 3}, ""},
		{`{"skip": "ack", "restart": true}`, Params{Skip: "ack", Restart: true}, ""},
		{`{"ackTimeout": 3}`, Params{}, `params.ackTimeout: only used with "skip": "ack"`},
		{`{"skip": "detector", "ackTimeout": 3}`, Params{}, `params.ackTimeout: only used with "skip": "ack"`},
		{`{"ack": true, "ackTimeout": -1}`, Params{}, "params.ackTimeout: must be a positive integer"},
		{`{"ack": null}`, Params{}, ""},
		{`{"ack": "on"}`, Params{}, "params.ack: got string, want true or false"},
		{`{"nope": 1}`, Params{}, "params.nope: unknown field (allowed: extra, skip, ack, ackTimeout, restart, check)"},
	} {
		got, err := params.Parse([]byte(tc.in), nil, fields, settings{})
		if tc.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got.Ring != tc.want {
			t.Errorf("%s: %+v err=%v, want %+v", tc.in, got.Ring, err, tc.want)
		}
	}
}

func TestTimeoutCoversARoundTrip(t *testing.T) {
	for _, tc := range []struct {
		p        Params
		maxDelay int
		want     int
	}{{Params{Ack: true}, 0, 1}, {Params{Ack: true}, 3, 7}, {Params{Ack: true, AckTimeout: 2}, 3, 2}} {
		if got := Timeout(tc.p, tc.maxDelay); got != tc.want {
			t.Errorf("Timeout(%+v, %d) = %d, want %d", tc.p, tc.maxDelay, got, tc.want)
		}
	}
}

func TestSuccessorWrapsRound(t *testing.T) {
	if got := []int{Successor(0, 3), Successor(1, 3), Successor(2, 3)}; !slices.Equal(got, []int{1, 2, 0}) {
		t.Errorf("successors %v", got)
	}
}

// Without acknowledgements the link is a plain send to the successor: nothing kept,
// nothing to encode, no rule.
func TestLinkWithoutAcks(t *testing.T) {
	l := NewLink(Params{}, 3, func(*sim.Message) int { return -1 })
	ctx := sim.NewContext(2, []int{10, 20, 30})
	l.Send(ctx, sim.Message{Type: "X", Vec: []int{1}})
	if got := ctx.Sent(); len(got) != 1 || got[0].To != 0 || len(ctx.Effects()) != 1 {
		t.Fatalf("effects %+v, want one send to index 0", ctx.Effects())
	}
	m := sim.Message{Type: "X", From: 1}
	if !l.Receive(ctx, &m) || len(ctx.Effects()) != 1 {
		t.Fatalf("a ring message must go on to the algorithm, unacknowledged")
	}
	if got := string(sim.EncodeState(nodeOf(&l))); got != "{}" {
		t.Errorf("encoded %s, want nothing", got)
	}
}

// The link's copy of a message is its own: changing the caller's slice afterwards does
// not change what a time-out re-sends, and a clone keeps its own copy too.
func TestLinkKeepsItsOwnCopies(t *testing.T) {
	l := NewLink(Params{Ack: true}, 1, func(*sim.Message) int { return -1 })
	ctx := sim.NewContext(0, []int{10, 20, 30})
	vec := []int{7}
	l.Send(ctx, sim.Message{Type: "X", Vec: vec})
	c := l.Clone()
	vec[0] = 99
	l.pending[0].Vec[0] = 55
	ctx.Reset(0)
	c.Timer(ctx, TimerAck)
	if got := ctx.Sent(); len(got) != 1 || got[0].To != 2 || !slices.Equal(got[0].Vec, []int{7}) {
		t.Fatalf("clone re-sent %+v, want X[7] to index 2", got)
	}
}

// nodeOf wraps a link so EncodeState can write it.
type linkNode struct{ l *Link }

func (n linkNode) Step(*sim.Context, *sim.Input) {}
func (n linkNode) Clone() sim.Node               { return n }
func (n linkNode) Encode(w *sim.StateWriter)     { n.l.Encode(w, []int{10, 20, 30}) }
func nodeOf(l *Link) sim.Node                    { return linkNode{l} }

// A participant waits for the outcome: joining (re)starts the restart time-out,
// leaving stops it, and the time-out tells a participant that its election died; with
// no restart (0) no timer is ever set.
func TestParticipationWaitsForTheOutcome(t *testing.T) {
	effects := func(ctx *sim.Context) []sim.Effect {
		out := slices.Clone(ctx.Effects())
		ctx.Reset(0)
		return out
	}
	ctx := sim.NewContext(0, []int{10, 20, 30})
	p := NewParticipation(40)
	p.Join(ctx)
	if got := effects(ctx); !p.Participant || len(got) != 1 || got[0].Kind != sim.SetTimer || got[0].Timer != TimerRestart || got[0].After != 40 {
		t.Fatalf("join: participant=%v effects %+v, want the restart time-out set to 40", p.Participant, got)
	}
	if restart, died := p.Expired("ack"); restart || died || !p.Participant {
		t.Fatalf("another timer: restart=%v died=%v participant=%v", restart, died, p.Participant)
	}
	if restart, died := p.Expired(TimerRestart); !restart || !died || p.Participant {
		t.Fatalf("the time-out of a participant: restart=%v died=%v participant=%v, want the election dead", restart, died, p.Participant)
	}
	if restart, died := p.Expired(TimerRestart); !restart || died {
		t.Fatalf("a stale time-out: restart=%v died=%v, want it ignored", restart, died)
	}
	p.Join(ctx)
	effects(ctx)
	p.Leave(ctx)
	if got := effects(ctx); p.Participant || len(got) != 1 || got[0].Kind != sim.CancelTimer || got[0].Timer != TimerRestart {
		t.Fatalf("leave: participant=%v effects %+v, want the time-out cancelled", p.Participant, got)
	}
	never := NewParticipation(0)
	never.Join(ctx)
	never.Leave(ctx)
	if got := effects(ctx); len(got) != 0 {
		t.Fatalf("no restart: effects %+v, want none", got)
	}
}
