package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

func intp(v int) *int { return &v }

// wireCases holds one value of every frame type with its exact bytes: the order of the
// fields is the contract the browser (and every follower of a lecture) reads.
var wireCases = []struct {
	key  string // as in frames
	f    Frame
	wire string
}{
	{"hello", &Hello{Proto: 1, Session: "Q-yp", Algorithm: "ricart-agrawala", Name: "",
		Scenario: json.RawMessage(`{"version":1,"algorithm":"ricart-agrawala","seed":1}`), IDs: []int{0, 1, 2},
		Network: Network{Delay: [2]int{1, 3}, Loss: 0.1}, Seed: 1, CS: 2, Rate: 2, MinSpeed: 0.25, MaxSpeed: 16,
		RecentMax: 100, MaxEvents: 250000},
		`{"type":"hello","proto":1,"session":"Q-yp","algorithm":"ricart-agrawala","name":"","scenario":{"version":1,"algorithm":"ricart-agrawala","seed":1},"ids":[0,1,2],"network":{"delay":[1,3],"fifo":false,"loss":0.1,"hold":false},"seed":1,"cs":2,"rate":2,"minSpeed":0.25,"maxSpeed":16,"recentMax":100,"maxEvents":250000}`},
	{"hello/source", &Hello{Proto: 1, Algorithm: "ricart-agrawala", Scenario: json.RawMessage(`{"version":1,"algorithm":"ricart-agrawala","source":"..."}`),
		IDs: []int{0}, Rules: []RuleText{
			{Label: "RH1", Notes: "000", Group: "Receiving REQUEST(Tj, j)", Lines: []string{"defer j"}, Says: "decides", Why: map[string]string{"held": "defers {from}"}},
			{Label: "AS-1", Group: "Asking", Lines: []string{}, Says: "asks"}},
		Vars: []VarText{{Name: "state", Doc: "RELEASED or HELD"}}},
		`{"type":"hello","proto":1,"session":"","algorithm":"ricart-agrawala","name":"","scenario":{"version":1,"algorithm":"ricart-agrawala","source":"..."},"ids":[0],"network":{"delay":[0,0],"fifo":false,"loss":0,"hold":false},"seed":0,"cs":0,"rate":0,"minSpeed":0,"maxSpeed":0,"recentMax":0,"maxEvents":0,` +
			`"rules":[{"label":"RH1","notes":"000","group":"Receiving REQUEST(Tj, j)","lines":["defer j"],"says":"decides","why":{"held":"defers {from}"}},{"label":"AS-1","group":"Asking","lines":[],"says":"asks"}],"vars":[{"name":"state","doc":"RELEASED or HELD"}]}`},
	{"hello/own", &Hello{Proto: 1, Algorithm: "central", Scenario: json.RawMessage(`{"version":1}`), IDs: []int{0}, Rules: []RuleText{{Label: "MY-1", Lines: []string{"ask"}, Says: "asks"}},
		Title: "My mutual exclusion", Own: "my-mutex"},
		`{"type":"hello","proto":1,"session":"","algorithm":"central","name":"","scenario":{"version":1},"ids":[0],"network":{"delay":[0,0],"fifo":false,"loss":0,"hold":false},"seed":0,"cs":0,"rate":0,"minSpeed":0,"maxSpeed":0,"recentMax":0,"maxEvents":0,` +
			`"rules":[{"label":"MY-1","group":"","lines":["ask"],"says":"asks"}],"title":"My mutual exclusion","own":"my-mutex"}`},
	{"state", &State{Clock{Step: 3, T: 2, Seq: -1, Horizon: 9, Playing: true, Speed: 0.25, Quiet: true, Interventions: 1, Stopped: "the run reached 250000 events", StoppedLine: 12}},
		`{"type":"state","step":3,"t":2,"seq":-1,"horizon":9,"playing":true,"speed":0.25,"quiet":true,"interventions":1,"stopped":"the run reached 250000 events","stoppedLine":12}`},
	{"events", &Events{Clock: Clock{Step: 12, T: 7, Seq: 42, Horizon: 12, Playing: true, Speed: 1, Interventions: 2},
		Batches: []Batch{
			{Step: 11, T: 6, Events: json.RawMessage(`[]`), Nodes: []Node{}, Arrive: Arrivals{}},
			{Step: 12, T: 7,
				Events: json.RawMessage(`[{"seq":41,"t":7,"type":"rule","node":2,"rule":"RH1"},{"seq":42,"t":7,"type":"send","node":2,"msg":{"id":13,"type":"REPLY","from":2,"to":1,"ts":8}}]`),
				Nodes:  []Node{{ID: 2, Alive: true, Leader: -1, State: json.RawMessage(`{"state":"RELEASED","clock":8}`)}},
				Arrive: Arrivals{{Msg: 13, At: 9}, {Msg: 11, At: -1}}, Network: &Network{Delay: [2]int{1, 5}, FIFO: true, Hold: true},
				Retime: Arrivals{{Msg: 11, At: -1}}},
		}},
		`{"type":"events","step":12,"t":7,"seq":42,"horizon":12,"playing":true,"speed":1,"quiet":false,"interventions":2,"batches":[` +
			`{"step":11,"t":6,"events":[],"nodes":[],"arrive":{}},` +
			`{"step":12,"t":7,"events":[{"seq":41,"t":7,"type":"rule","node":2,"rule":"RH1"},{"seq":42,"t":7,"type":"send","node":2,"msg":{"id":13,"type":"REPLY","from":2,"to":1,"ts":8}}],` +
			`"nodes":[{"id":2,"alive":true,"cs":false,"token":false,"leader":-1,"group":0,"state":{"state":"RELEASED","clock":8}}],` +
			`"arrive":{"13":9,"11":-1},"network":{"delay":[1,5],"fifo":true,"loss":0,"hold":true},"retime":{"11":-1}}]}`},
	{"snapshot", &Snapshot{Clock: Clock{Step: 12, T: 7, Seq: 42, Horizon: 30, Speed: 1, Interventions: 2},
		Network:  Network{Delay: [2]int{1, 3}},
		Nodes:    []Node{{ID: 0, Alive: true, CS: true, Leader: -1, State: json.RawMessage(`{}`), Rules: []string{"RA3", "RE1"}}, {ID: 1, Token: true, Leader: 1, Group: 1, State: json.RawMessage(`{}`), Rules: []string{}}},
		InFlight: []InFlight{{Msg: json.RawMessage(`{"id":13,"type":"REPLY","from":2,"to":1,"ts":8}`), Sent: 7, At: 9}},
		Lit:      []Lit{{Node: 2, Rule: "RH1"}},
		Recent:   []json.RawMessage{json.RawMessage(`{"seq":42,"t":7,"type":"request","node":0}`)}},
		`{"type":"snapshot","step":12,"t":7,"seq":42,"horizon":30,"playing":false,"speed":1,"quiet":false,"interventions":2,` +
			`"network":{"delay":[1,3],"fifo":false,"loss":0,"hold":false},` +
			`"nodes":[{"id":0,"alive":true,"cs":true,"token":false,"leader":-1,"group":0,"state":{},"rules":["RA3","RE1"]},{"id":1,"alive":false,"cs":false,"token":true,"leader":1,"group":1,"state":{},"rules":[]}],` +
			`"inflight":[{"msg":{"id":13,"type":"REPLY","from":2,"to":1,"ts":8},"sent":7,"at":9}],"lit":[{"node":2,"rule":"RH1"}],` +
			`"recent":[{"seq":42,"t":7,"type":"request","node":0}]}`},
	{"error", &Error{Code: CodeRefused, Error: `release: P1 is not in the CS <"quoted">`, Ref: 7, Line: 4},
		`{"type":"error","code":"refused","error":"release: P1 is not in the CS \u003c\"quoted\"\u003e","ref":7,"line":4}`},
	{"lecture", &Lecture{Code: "KXT49P", Display: "KXT 49P", State: "ended", Link: "/r/v1.x", Reason: "the presenter ended it"},
		`{"type":"lecture","code":"KXT49P","display":"KXT 49P","state":"ended","link":"/r/v1.x","reason":"the presenter ended it"}`},
	{"lecture/presenter", &PresenterLecture{Role: "presenter", Code: "KXT49P", Display: "KXT 49P", State: "live", Link: "/r/v1.x", LinkStep: 12, Followers: 42},
		`{"type":"lecture","role":"presenter","code":"KXT49P","display":"KXT 49P","state":"live","link":"/r/v1.x","linkStep":12,"followers":42}`},
	{"question", &Question{ID: 2, State: "revealed", Kind: "next-rule", Text: "Which rule does P3 fire next?", Choices: []string{"RA1", "RH1"},
		Step: 12, Reveal: intp(14), Answer: intp(1), Tally: []int{3, 9}, Answers: 12},
		`{"type":"question","id":2,"state":"revealed","kind":"next-rule","text":"Which rule does P3 fire next?","choices":["RA1","RH1"],"step":12,"reveal":14,"answer":1,"tally":[3,9],"answers":12}`},
	{"questions", &Questions{Step: 12, Items: []Prompt{{Kind: "next-cs", Text: "Who enters next?", Choices: []string{"P0", "P1"}, Step: 12}}, Ref: 3},
		`{"type":"questions","step":12,"items":[{"kind":"next-cs","text":"Who enters next?","choices":["P0","P1"],"step":12}],"ref":3}`},
	{"answered", &Answered{Question: 2, Choice: 1, Ref: 5},
		`{"type":"answered","question":2,"choice":1,"ref":5}`},
}

// Every frame type encodes to its exact bytes and decodes back to the same value.
func TestEveryFrameRoundTrips(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range wireCases {
		covered[c.key] = true
		t.Run(c.key, func(t *testing.T) {
			got := c.f.AppendJSON([]byte("prefix"))
			if !bytes.HasPrefix(got, []byte("prefix")) || string(got[6:]) != c.wire {
				t.Fatalf("encoded\n%s\nwant\n%s", got[6:], c.wire)
			}
			if !json.Valid(got[6:]) {
				t.Fatalf("not JSON: %s", got[6:])
			}
			back, err := Decode(Stamp(57, got[6:])) // as a follower gets it
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, c.f) {
				t.Fatalf("decoded %#v\nwant %#v", back, c.f)
			}
			if back.Type() != c.f.Type() || Encode(back).Frame != back {
				t.Fatalf("type %q, want %q", back.Type(), c.f.Type())
			}
		})
	}
	for key := range frames {
		if !covered[key] {
			t.Errorf("frame %q has no round-trip case", key)
		}
	}
}

// The forms that encode as something else than their zero: a hello without a scenario
// says null, questions without items an empty list, a question to followers before
// the reveal neither answer nor tally.
func TestFramesEncodeTheirEmptyForms(t *testing.T) {
	for _, c := range []struct {
		f    Frame
		want string
	}{
		{&Hello{}, `{"type":"hello","proto":0,"session":"","algorithm":"","name":"","scenario":null,"ids":[],"network":{"delay":[0,0],"fifo":false,"loss":0,"hold":false},"seed":0,"cs":0,"rate":0,"minSpeed":0,"maxSpeed":0,"recentMax":0,"maxEvents":0}`},
		{&Questions{Step: 3, Error: "nothing to predict"}, `{"type":"questions","step":3,"items":[],"error":"nothing to predict"}`},
		{&Question{ID: 1, State: "open", Choices: []string{"a"}}, `{"type":"question","id":1,"state":"open","kind":"","text":"","choices":["a"],"step":0,"answers":0}`},
		{&Error{Code: CodeGone, Error: "ended"}, `{"type":"error","code":"gone","error":"ended"}`},
		{&Events{Batches: []Batch{{}}}, `{"type":"events","step":0,"t":0,"seq":0,"horizon":0,"playing":false,"speed":0,"quiet":false,"interventions":0,"batches":[{"step":0,"t":0,"events":[],"nodes":[],"arrive":{}}]}`},
	} {
		if got := string(Encode(c.f).JSON); got != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.f, got, c.want)
		}
	}
}

func TestDecodeRefusesWhatIsNoFrame(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"type":"nope"}`, `{"type":"lecture","role":"janitor"}`, `{"type":"events","batches":[{"arrive":{"x":1}}]}`, `{"type":"events","batches":[{"arrive":[1]}]}`} {
		if f, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%s) = %#v, want an error", in, f)
		}
	}
}

// The client's commands, as a page encodes them, decode strictly to the same value.
func TestCommandsRoundTrip(t *testing.T) {
	one, f, tr := 1, 0.5, true
	msg := int64(13)
	for _, v := range []any{
		&Command{Type: "play"},
		&Command{Type: "seek", Step: &one, Ref: 4},
		&Command{Type: "speed", Speed: &f},
		&Command{Type: "reset", Scenario: json.RawMessage(`{"version":1,"algorithm":"central"}`)},
		&Command{Type: "act", ActionJSON: sim.ActionJSON{Do: "tell", Node: &one, To: &one}},
		&Command{Type: "act", ActionJSON: sim.ActionJSON{Do: "deliver", Msg: msg}},
		&Command{Type: "act", ActionJSON: sim.ActionJSON{Do: "partition", Groups: [][]int{{0, 1}, {2}}}},
		&Command{Type: "act", ActionJSON: sim.ActionJSON{Do: "network", Delay: sim.Delay{1, 5}, FIFO: &tr, Loss: &f, Hold: &tr}},
		&LectureCommand{Type: "lecture", Op: "answer", Question: &one, Choice: &one, Ref: 5},
		&LectureCommand{Type: "lecture", Op: "end"},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		back := reflect.New(reflect.TypeOf(v).Elem()).Interface()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(back, v) {
			t.Errorf("%s decoded to %#v, want %#v", b, back, v)
		}
	}
}

func TestStampPutsTheNumberFirst(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"events"}`, `{"lseq":7,"type":"events"}`},
		{`{}`, `{"lseq":7}`},
	} {
		if got := string(Stamp(7, []byte(c.in))); got != c.want {
			t.Errorf("Stamp(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestStampOfReadsTheStamp(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{string(Stamp(42, []byte(`{"type":"events"}`))), 42, true},
		{string(Stamp(7, []byte(`{}`))), 7, true},
		{`{"type":"events","lseq":3}`, 0, false},
		{`{"lseq":}`, 0, false},
		{``, 0, false},
	} {
		got, ok := StampOf([]byte(c.in))
		if got != c.want || ok != c.ok {
			t.Errorf("StampOf(%s) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
