package heartbeat

import (
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

func timersSet(ctx *sim.Context) []string {
	var out []string
	for _, e := range ctx.Effects() {
		switch e.Kind {
		case sim.SetTimer:
			out = append(out, "set "+e.Timer)
		case sim.CancelTimer:
			out = append(out, "cancel "+e.Timer)
		}
	}
	return out
}

func sentTo(ctx *sim.Context) []int {
	var out []int
	for _, m := range ctx.Sent() {
		if m.Type != Msg {
			panic("not a heartbeat")
		}
		out = append(out, m.To)
	}
	return out
}

// on beats every T = 5 and assumes D = 7: a watcher waits T+D = 12.
var on = Params{Period: 5, Delay: 7}

const maxDelay = 3 // the network's, unused by on

func TestFD1_TheWatchedProcessBeatsEveryPeriod(t *testing.T) {
	ctx := sim.NewContext(2, []int{0, 1, 2, 3})
	d := New(on, maxDelay)
	d.Lead(ctx)
	if got := ctx.Rules(); !slices.Equal(got, []string{"FD-1"}) {
		t.Fatalf("rules %v", got)
	}
	if got := sentTo(ctx); !slices.Equal(got, []int{0, 1, 3}) {
		t.Fatalf("heartbeats to %v, want every other process", got)
	}
	if got := timersSet(ctx); !slices.Equal(got, []string{"set heartbeat"}) {
		t.Fatalf("timers %v", got)
	}
	ctx.Reset(2)
	if mine, suspect := d.Timer(ctx, TimerBeat); !mine || suspect {
		t.Fatalf("beat timer: mine %v suspect %v", mine, suspect)
	}
	if got := sentTo(ctx); len(got) != 3 {
		t.Fatalf("second beat sent %v", got)
	}
	ctx.Reset(2)
	d.StopLeading(ctx)
	if got := timersSet(ctx); !slices.Equal(got, []string{"cancel heartbeat"}) {
		t.Fatalf("stop: %v", got)
	}
	ctx.Reset(2)
	d.Timer(ctx, TimerBeat) // a stale beat after stopping sends nothing
	if len(ctx.Sent()) != 0 || len(ctx.Rules()) != 0 {
		t.Fatalf("stale beat acted: %v %v", ctx.Sent(), ctx.Rules())
	}
}

func TestFD2_AHeartbeatFromTheWatchedRestartsTheTimeout(t *testing.T) {
	ctx := sim.NewContext(0, []int{0, 1, 2})
	d := New(on, maxDelay)
	d.Watch(ctx, 2)
	if got := timersSet(ctx); !slices.Equal(got, []string{"set suspect"}) {
		t.Fatalf("watch: %v", got)
	}
	ctx.Reset(0)
	d.Heard(ctx, 2)
	if got := ctx.Rules(); !slices.Equal(got, []string{"FD-2"}) {
		t.Fatalf("rules %v", got)
	}
	if e := ctx.Effects()[1]; e.Kind != sim.SetTimer || e.Timer != TimerSuspect || e.After != 12 {
		t.Fatalf("effect %+v, want the suspect timer re-armed for 12", e)
	}
	ctx.Reset(0)
	d.Heard(ctx, 1) // someone else's heartbeat proves nothing about the watched one
	if len(ctx.Effects()) != 0 {
		t.Fatalf("heartbeat from an unwatched process acted: %+v", ctx.Effects())
	}
}

func TestFD3_SilenceForATimeoutRaisesSuspicion(t *testing.T) {
	ctx := sim.NewContext(0, []int{0, 1, 2})
	d := New(on, maxDelay)
	d.Watch(ctx, 2)
	ctx.Reset(0)
	mine, suspect := d.Timer(ctx, TimerSuspect)
	if !mine || !suspect {
		t.Fatalf("mine %v suspect %v", mine, suspect)
	}
	if got := ctx.Rules(); !slices.Equal(got, []string{"FD-3"}) {
		t.Fatalf("rules %v", got)
	}
	if d.Watched() != -1 {
		t.Fatalf("still watching %d after suspecting it", d.Watched())
	}
	ctx.Reset(0)
	if _, suspect := d.Timer(ctx, TimerSuspect); suspect {
		t.Fatal("suspected twice")
	}
	if mine, _ := d.Timer(ctx, "answer"); mine {
		t.Fatal("claimed another timer")
	}
}

func TestOffDoesNothing(t *testing.T) {
	ctx := sim.NewContext(0, []int{0, 1})
	d := New(Params{}, maxDelay)
	d.Lead(ctx)
	d.Watch(ctx, 1)
	if len(ctx.Effects()) != 0 {
		t.Fatalf("detector off acted: %+v", ctx.Effects())
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		p    Params
		says string
	}{
		{Params{}, ""},
		{Params{Period: 5, Timeout: 12}, ""},
		{Params{Period: -1}, "hb.period"},
		{Params{Period: 5, Delay: 2}, ""},
		{Params{Period: 5}, ""}, // D left out: the network's largest delay
		{Params{Period: 5, Delay: -1}, "hb.delay"},
		{Params{Period: 5, Delay: 2, Timeout: 9}, "hb.timeout: replaces T+D"},
		{Params{Timeout: 3}, "hb.period: the detector is off"},
		{Params{Delay: 3}, "hb.period: the detector is off"},
	}
	for _, tc := range tests {
		err := tc.p.Validate("hb")
		if tc.says == "" && err != nil {
			t.Errorf("%+v: %v", tc.p, err)
		}
		if tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)) {
			t.Errorf("%+v: error %v, want it to say %q", tc.p, err, tc.says)
		}
	}
}

// 003: "declared dead if not observed in last T+D". D left out is the network's
// largest delay (the synchronous case); an explicit timeout replaces T+D whole.
func TestSilenceIsTPlusD(t *testing.T) {
	tests := []struct {
		p        Params
		maxDelay int
		want     int
	}{
		{Params{Period: 6}, 3, 9},
		{Params{Period: 6, Delay: 1}, 5, 7},
		{Params{Period: 4, Delay: 8}, 3, 12},
		{Params{Period: 6, Timeout: 3}, 3, 3},
	}
	for _, tc := range tests {
		if got := tc.p.Silence(tc.maxDelay); got != tc.want {
			t.Errorf("%+v with delays up to %d: silence %d, want %d", tc.p, tc.maxDelay, got, tc.want)
		}
		d := New(tc.p, tc.maxDelay)
		ctx := sim.NewContext(0, []int{0, 1})
		d.Watch(ctx, 1)
		if e := ctx.Effects(); len(e) != 1 || e[0].Timer != TimerSuspect || e[0].After != tc.want {
			t.Errorf("%+v: watching set %+v, want the suspect timer for %d", tc.p, e, tc.want)
		}
	}
}
