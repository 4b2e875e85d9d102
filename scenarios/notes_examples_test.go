package scenarios

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// The curated scenarios that reproduce the notes' worked examples and failure claims.
// Each test asserts what its scenario is there to show, so a
// change in an algorithm that stops a scenario from showing it fails here, not only in
// the golden trace.

// notesRun is one curated run, recorded, with every node's inspector state after
// each step.
type notesRun struct {
	name   string
	ids    []int
	events []sim.Event
	states [][]string // by seq: the state of each node (index order) after the step that emitted it
}

// runCurated runs the curated scenario name step by step.
func runCurated(t *testing.T, name string) *notesRun {
	t.Helper()
	sc, ok := Lookup(name)
	if !ok {
		t.Fatalf("no curated scenario %q", name)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	var rec sim.Recorder
	s, err := sim.New(cfg, rec.Sink())
	if err != nil {
		t.Fatal(err)
	}
	r := &notesRun{name: name, ids: cfg.IDs}
	snapshot := func() {
		st := make([]string, len(cfg.IDs))
		for i := range st {
			st[i] = string(sim.EncodeState(s.Node(i)))
		}
		for len(r.states) < len(rec.Events) {
			r.states = append(r.states, st)
		}
	}
	for more := true; more; {
		if more, err = s.Step(); err != nil {
			t.Fatalf("%s seed %d: %v", name, cfg.Seed, err)
		}
		snapshot()
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
	snapshot()
	r.events = rec.Events
	return r
}

func (r *notesRun) id(i int) int { return r.ids[i] }

// entries lists the ids that entered the CS, in order.
func (r *notesRun) entries() []int {
	out := []int{}
	for _, ev := range r.events {
		if ev.Type == sim.EvEnter {
			out = append(out, r.id(ev.Node))
		}
	}
	return out
}

// hops lists the messages of type typ with the given event type (send, deliver,
// drop) as "from>to", ids.
func (r *notesRun) hops(evType sim.EventType, typ string) []string {
	out := []string{}
	for _, ev := range r.events {
		if ev.Type == evType && ev.Msg.Type == typ {
			out = append(out, fmt.Sprintf("%d>%d", r.id(ev.Msg.From), r.id(ev.Msg.To)))
		}
	}
	return out
}

func (r *notesRun) count(evType sim.EventType, typ string) int { return len(r.hops(evType, typ)) }

// violations lists "property: detail" of every violation, in order.
func (r *notesRun) violations() []string {
	out := []string{}
	for _, ev := range r.events {
		if ev.Type == sim.EvViolation {
			out = append(out, ev.Property+": "+ev.Detail)
		}
	}
	return out
}

// whys lists the cases reported by rule label at node id, in order. Labels are
// compared without hyphens: the project's own labels may be written with
// one or without (LA1, LA-1), and that spelling must not break what these runs show.
func (r *notesRun) whys(id int, label string) []string {
	out := []string{}
	for _, ev := range r.events {
		if ev.Type == sim.EvRule && r.id(ev.Node) == id && sameLabel(ev.Rule, label) {
			out = append(out, ev.Why)
		}
	}
	return out
}

func sameLabel(a, b string) bool {
	return strings.ReplaceAll(a, "-", "") == strings.ReplaceAll(b, "-", "")
}

// totals is the run's end event.
func (r *notesRun) totals(t *testing.T) sim.Totals {
	t.Helper()
	last := r.events[len(r.events)-1]
	if last.Type != sim.EvEnd || last.Totals == nil {
		t.Fatalf("%s: the run has no end event", r.name)
	}
	return *last.Totals
}

// state decodes node id's inspector variables after the step of seq into v.
func (r *notesRun) state(t *testing.T, seq int64, id int, v any) {
	t.Helper()
	i := slices.Index(r.ids, id)
	if seq < 0 || seq >= int64(len(r.states)) || i < 0 {
		t.Fatalf("%s: no state of P%d at seq %d", r.name, id, seq)
	}
	if err := json.Unmarshal([]byte(r.states[seq][i]), v); err != nil {
		t.Fatalf("%s: state of P%d at seq %d: %v", r.name, id, seq, err)
	}
}

// seqOf returns the seq of the first event that matches, or fails.
func (r *notesRun) seqOf(t *testing.T, what string, match func(ev *sim.Event) bool) int64 {
	t.Helper()
	for k := range r.events {
		if match(&r.events[k]) {
			return r.events[k].Seq
		}
	}
	t.Fatalf("%s: no event where %s", r.name, what)
	return -1
}

func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %v, want %v", what, got, want)
	}
}

// The notes' worked examples: who enters in which order, which rule decides, what
// the messages carry and what they cost.
func TestNotesWorkedExamples(t *testing.T) {
	tests := []struct {
		name  string
		check func(t *testing.T, r *notesRun)
	}{
		{"ricart-agrawala-tanenbaum", func(t *testing.T, r *notesRun) {
			// 001/004: P0 and P2 ask at the same moment; P0 has the lower timestamp and wins.
			var stamps []string
			for _, ev := range r.events {
				if ev.Type == sim.EvSend && ev.Msg.Type == "REQUEST" && ev.T == 20 {
					stamps = append(stamps, fmt.Sprintf("P%d:%d", r.id(ev.Msg.From), ev.Msg.TS))
				}
			}
			wantEqual(t, "timestamps of the simultaneous requests", slices.Compact(stamps), []string{"P0:4", "P2:6"})
			wantEqual(t, "entries", r.entries(), []int{2, 0, 2})
			wantEqual(t, "P2's RH1 cases (on P0's older request it replies)", r.whys(2, "RH1"), []string{"younger"})
			wantEqual(t, "P0's RH1 cases (it defers P2's younger request)", r.whys(0, "RH1"), []string{"idle", "older"})
			wantEqual(t, "P1's RH1 cases (not interested: replies to everyone)", r.whys(1, "RH1"), []string{"idle", "idle", "idle"})
			var p0 struct{ Deferred []int }
			r.state(t, 48, 0, &p0)
			wantEqual(t, "P0's deferred requests as it enters", p0.Deferred, []int{2})
			exit := r.seqOf(t, "P0 leaves", func(ev *sim.Event) bool { return ev.Type == sim.EvExit && ev.Node == 0 })
			reply := r.seqOf(t, "P0 sends the deferred REPLY", func(ev *sim.Event) bool {
				return ev.Type == sim.EvSend && ev.Msg.Type == "REPLY" && ev.Msg.From == 0 && ev.Msg.To == 2 && ev.Seq > exit
			})
			if reply != exit+1 {
				t.Errorf("P0's deferred REPLY to P2 at seq %d, want just after it leaves (seq %d)", reply, exit)
			}
			tot := r.totals(t)
			wantEqual(t, "messages: 2(N-1) per entry", tot.Messages, tot.Entries*2*(3-1))
		}},
		{"lamport-normal-run", func(t *testing.T, r *notesRun) {
			// 002/004: 3(N-1) messages per entry: N-1 REQUEST, N-1 REPLY, N-1 RELEASE.
			wantEqual(t, "entries (ties broken by id)", r.entries(), []int{1, 3, 0})
			n, entries := len(r.ids), len(r.entries())
			for _, typ := range []string{"REQUEST", "REPLY", "RELEASE"} {
				wantEqual(t, typ+" messages", r.count(sim.EvSend, typ), entries*(n-1))
			}
			wantEqual(t, "messages: 3(N-1) per entry", r.totals(t).Messages, entries*3*(n-1))
			// P3 has a later-stamped message from everyone, but P1's request heads its queue.
			var p3 struct {
				State string
				Queue [][2]int
				Heard []int
			}
			r.state(t, 45, 3, &p3)
			wantEqual(t, "P3's state", p3.State, "REQUESTED")
			wantEqual(t, "P3's queue", p3.Queue, [][2]int{{1, 1}, {1, 3}})
			wantEqual(t, "ids P3 has heard from later than its request", p3.Heard, []int{0, 1, 2})
		}},
		{"bakery-same-ticket", func(t *testing.T, r *notesRun) {
			// 002: the doorway takes 1 + max; equal tickets are ordered by id.
			var p0, p1, p2 struct {
				Choosing bool
				Number   int
			}
			r.state(t, 24, 0, &p0)
			wantEqual(t, "P0's ticket out of the doorway", p0.Number, 1)
			r.state(t, 116, 1, &p1)
			r.state(t, 116, 2, &p2)
			wantEqual(t, "P1's and P2's tickets", []int{p1.Number, p2.Number}, []int{2, 2})
			wantEqual(t, "P1 out of the doorway", p1.Choosing, false)
			chose := func(id int) int64 {
				return r.seqOf(t, fmt.Sprintf("P%d takes its ticket", id), func(ev *sim.Event) bool {
					return ev.Type == sim.EvRule && sameLabel(ev.Rule, "BD3") && r.id(ev.Node) == id && ev.Seq > 30
				})
			}
			if chose(2) > chose(1) {
				t.Errorf("P2 should take its ticket before P1 does")
			}
			busy := r.seqOf(t, "P2 reads choosing[1] = true", func(ev *sim.Event) bool {
				return ev.Type == sim.EvDeliver && ev.Msg.Type == "CHOOSING" && ev.Msg.From == 1 && ev.Msg.To == 2 && ev.Msg.Arg == 1
			})
			if busy < chose(2) {
				t.Errorf("P2 read P1's choosing flag at seq %d, before its own ticket", busy)
			}
			wantEqual(t, "entries: the smaller id first among equal tickets", r.entries(), []int{0, 1, 2})
			wantEqual(t, "violations", r.violations(), []string{})
		}},
		{"suzuki-kasami-token-queue", func(t *testing.T, r *notesRun) {
			// The token carries LN and the queue Q; RN tells a new request from a served one.
			var tokens []string
			for _, ev := range r.events {
				if ev.Type == sim.EvSend && ev.Msg.Type == "TOKEN" {
					tokens = append(tokens, fmt.Sprintf("%d>%d LN%v Q%v", r.id(ev.Msg.From), r.id(ev.Msg.To), ev.Msg.Vec, ev.Msg.Queue))
				}
			}
			wantEqual(t, "tokens", tokens, []string{
				"0>2 LN[0 0 0 0 0] Q[]",
				"2>4 LN[0 0 1 0 0] Q[1]",
				"4>1 LN[0 0 1 0 1] Q[3]",
				"1>3 LN[0 1 1 0 1] Q[2]",
				"3>2 LN[0 1 1 1 1] Q[]",
			})
			var sns []int
			for _, ev := range r.events {
				if ev.Type == sim.EvSend && ev.Msg.Type == "REQUEST" && ev.Msg.From == 2 {
					sns = append(sns, ev.Msg.Arg)
				}
			}
			wantEqual(t, "P2's request numbers", slices.Compact(sns), []int{1, 2})
			var p0 struct{ RN []int }
			r.state(t, 104, 0, &p0)
			wantEqual(t, "P0's RN at the end", p0.RN, []int{0, 1, 2, 1, 1})
			wantEqual(t, "entries", r.entries(), []int{2, 4, 1, 3, 2})
			tot := r.totals(t)
			wantEqual(t, "messages: N per entry", tot.Messages, tot.Entries*len(r.ids))
		}},
		{"raymond-holder-pointers", func(t *testing.T, r *notesRun) {
			// The holder pointers follow the token; requests climb them, the token comes back down.
			holders := func(seq int64) []int {
				out := make([]int, len(r.ids))
				for i, id := range r.ids {
					var s struct{ Holder int }
					r.state(t, seq, id, &s)
					out[i] = s.Holder
				}
				return out
			}
			wantEqual(t, "holders as P3 enters", holders(38), []int{1, 3, 0, 3, 1, 2, 2})
			wantEqual(t, "holders as P5 enters", holders(86), []int{2, 0, 5, 1, 1, 5, 2})
			wantEqual(t, "REQUEST hops", r.hops(sim.EvSend, "REQUEST"), []string{"3>1", "1>0", "6>2", "5>2", "2>0", "0>1", "1>3", "2>6"})
			wantEqual(t, "PRIVILEGE hops", r.hops(sim.EvSend, "PRIVILEGE"), []string{"0>1", "1>3", "3>1", "1>0", "0>2", "2>6", "6>2", "2>5"})
			wantEqual(t, "entries", r.entries(), []int{3, 6, 5})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, runCurated(t, tc.name))
		})
	}
}

// The notes' failure claims, each a run that shows it: which message is lost where,
// who waits, and which monitor says so.
func TestNotesFailureClaims(t *testing.T) {
	tests := []struct {
		name     string
		entries  []int
		lost     []string // "TYPE from>to" dropped because the receiver crashed
		deadlock string   // the deadlock violation's detail; "" when progress must go on
		check    func(t *testing.T, r *notesRun)
	}{
		{
			// 003: "Deadlock if mutex-holder fails".
			name: "central-holder-crashes", entries: []int{0},
			deadlock: "nothing is in flight and no timer is armed, yet P1, P2 still wait for the CS",
			check: func(t *testing.T, r *notesRun) {
				var coord struct {
					Holder int
					Queue  []int
				}
				r.state(t, r.events[len(r.events)-1].Seq, 4, &coord)
				wantEqual(t, "the coordinator's holder and queue", []any{coord.Holder, coord.Queue}, []any{0, []int{2, 1}})
				wantEqual(t, "RELEASE messages", r.count(sim.EvSend, "RELEASE"), 0)
			},
		},
		{
			// 003: "Deadlock in voting-set if process crashes"; 002: "Crash in voting-set = deadlock".
			name: "maekawa-voting-set-crash", entries: []int{2},
			lost:     []string{"REQUEST 1>3"},
			deadlock: "nothing is in flight and no timer is armed, yet P1, P4 still wait for the CS",
			check: func(t *testing.T, r *notesRun) {
				// P4's set does not hold P3: it is blocked by P1's vote, which P1's stuck request keeps.
				wantEqual(t, "REQUEST hops", r.hops(sim.EvSend, "REQUEST"), []string{"1>2", "1>3", "2>4", "2>6", "4>1", "4>5"})
				wantEqual(t, "REPLY hops (none to P4 from P1)", r.hops(sim.EvSend, "REPLY"), []string{"4>2", "6>2", "2>1", "5>4"})
			},
		},
		{
			// 000/004: "If a process fails, no progress can be made until a reconfiguration ...".
			name: "token-ring-process-crash", entries: []int{1},
			lost:     []string{"TOKEN 2>3"},
			deadlock: "nothing is in flight and no timer is armed, yet P0, P4 still wait for the CS",
		},
		{
			// 000: "The failure of any process involved makes progress impossible ...".
			name: "ricart-agrawala-process-crash", entries: []int{},
			lost:     []string{"REQUEST 1>3", "REQUEST 0>3"},
			deadlock: "nothing is in flight and no timer is armed, yet P0, P1 still wait for the CS",
			check: func(t *testing.T, r *notesRun) {
				var p0, p1 struct {
					Replied  []int
					Deferred []int
				}
				end := r.events[len(r.events)-1].Seq
				r.state(t, end, 0, &p0)
				r.state(t, end, 1, &p1)
				wantEqual(t, "P0's replies (all but the crashed P3's)", p0.Replied, []int{1, 2})
				wantEqual(t, "P0 defers P1's younger request", p0.Deferred, []int{1})
				wantEqual(t, "P1's replies", p1.Replied, []int{2})
			},
		},
		{
			// 002: "if any process fails, no one can enter the CS" (Ricart-Agrawala, "like Lamport's algorithm").
			name: "lamport-process-crash", entries: []int{},
			lost:     []string{"REQUEST 1>3", "REQUEST 0>3"},
			deadlock: "nothing is in flight and no timer is armed, yet P0, P1 still wait for the CS",
		},
		{
			// 000: "... except the one which holds the token": the holder's crash loses the token.
			name: "ricart-agrawala-token-holder-crash", entries: []int{},
			lost:     []string{"REQUEST 2>1", "REQUEST 3>1"},
			deadlock: "nothing is in flight and no timer is armed, yet P2, P3 still wait for the CS",
			check: func(t *testing.T, r *notesRun) {
				wantEqual(t, "TOKEN messages", r.count(sim.EvSend, "TOKEN"), 0)
			},
		},
		{
			// 000: "If the process holding the token fails, a unique process has to be picked,
			// which will regenerate the token and pass it along the ring".
			name: "token-ring-holder-crash", entries: []int{0, 2},
			lost: []string{"ELECTION 3>4"},
			check: func(t *testing.T, r *notesRun) {
				var skipped, created []int
				for _, ev := range r.events {
					if ev.Type == sim.EvRule && ev.Rule == "TR-13" {
						skipped = append(skipped, r.id(ev.Node))
					}
					if ev.Type == sim.EvRule && ev.Rule == "TR-10" {
						created = append(created, r.id(ev.Node))
					}
				}
				wantEqual(t, "who skipped the crashed holder", skipped, []int{3})
				wantEqual(t, "who regenerated the token", created, []int{3})
			},
		},
		{
			// 002: "Temporary failures may lead to multiple tokens".
			name: "token-ring-two-tokens", entries: []int{0, 2},
			check: func(t *testing.T, r *notesRun) {
				created := r.seqOf(t, "a new token is created", func(ev *sim.Event) bool { return ev.Type == sim.EvRule && ev.Rule == "TR-10" })
				oldArrives := r.seqOf(t, "the old token arrives after the new one exists", func(ev *sim.Event) bool {
					return ev.Type == sim.EvDeliver && ev.Msg.Type == "TOKEN" && ev.Msg.Arg == 0 && ev.Seq > created
				})
				destroyed := r.seqOf(t, "the old token is destroyed", func(ev *sim.Event) bool { return ev.Type == sim.EvRule && ev.Rule == "TR-11" })
				if !(created < oldArrives && oldArrives < destroyed) {
					t.Errorf("new token at %d, old one delivered at %d and destroyed at %d: two tokens never lived at once", created, oldArrives, destroyed)
				}
			},
		},
		{
			// 000: "The failure of a process, except the one which holds the token, does not prevent progress."
			name: "ricart-agrawala-token-crash-tolerated", entries: []int{5, 2, 3, 1},
			lost: []string{"REQUEST 5>4", "REQUEST 2>4", "REQUEST 3>4", "REQUEST 1>4"},
			check: func(t *testing.T, r *notesRun) {
				wantEqual(t, "TOKEN hops (never to the crashed P4)", r.hops(sim.EvSend, "TOKEN"), []string{"1>5", "5>2", "2>3", "3>1"})
			},
		},
		{
			// ... and where that claim stops: the token goes to a crashed process whose request is pending.
			name: "ricart-agrawala-token-crash-deadlock", entries: []int{1},
			lost:     []string{"TOKEN 1>4", "REQUEST 2>4"},
			deadlock: "nothing is in flight and no timer is armed, yet P2, P5 still wait for the CS",
			check: func(t *testing.T, r *notesRun) {
				crash := r.seqOf(t, "P4 crashes", func(ev *sim.Event) bool { return ev.Type == sim.EvCrash })
				var p1 struct {
					Request []int
					Token   []int
				}
				r.state(t, crash, 1, &p1)
				if p1.Request[3] <= p1.Token[3] {
					t.Errorf("when P4 crashes, P1 has request %v and token %v: P4's request should be pending", p1.Request, p1.Token)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCurated(t, tc.name)
			wantEqual(t, "entries", r.entries(), tc.entries)
			var lost []string
			for _, ev := range r.events {
				if ev.Type == sim.EvDrop {
					if ev.Reason != "receiver crashed" {
						t.Errorf("a message dropped for another reason: %q", ev.Reason)
					}
					lost = append(lost, fmt.Sprintf("%s %d>%d", ev.Msg.Type, r.id(ev.Msg.From), r.id(ev.Msg.To)))
				}
			}
			if tc.lost == nil {
				tc.lost = []string{}
			}
			if lost == nil {
				lost = []string{}
			}
			wantEqual(t, "messages lost at the crashed process", lost, tc.lost)
			var deadlocks []string
			for _, v := range r.violations() {
				if d, ok := strings.CutPrefix(v, sim.PropDeadlock+": "); ok {
					deadlocks = append(deadlocks, d)
				} else if !strings.HasPrefix(v, sim.PropPending+": ") {
					t.Errorf("unexpected violation %s", v)
				}
			}
			switch {
			case tc.deadlock == "" && len(r.violations()) > 0:
				t.Errorf("the claim says progress goes on, yet %v", r.violations())
			case tc.deadlock != "":
				wantEqual(t, "deadlock reported", deadlocks, []string{tc.deadlock})
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// The notes' statement and its limit are shown side by side: each description names
// the other scenario, and neither speaks of the implementation.
func TestNotesClaimAndItsLimitPointAtEachOther(t *testing.T) {
	pair := [2]string{"ricart-agrawala-token-crash-tolerated", "ricart-agrawala-token-crash-deadlock"}
	for k, name := range pair {
		sc, ok := Lookup(name)
		if !ok {
			t.Fatalf("no curated scenario %q", name)
		}
		if other := pair[1-k]; !strings.Contains(sc.About, other) {
			t.Errorf("%s: the description does not point at %s", name, other)
		}
		if strings.Contains(sc.About, "params") {
			t.Errorf("%s: the description speaks of params", name)
		}
	}
}
