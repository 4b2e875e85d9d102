package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStampsOfObjectsAndArrays(t *testing.T) {
	for _, tt := range []struct {
		frame, stamped string
	}{
		{`{"type":"state"}`, `{"lseq":57,"type":"state"}`},
		{`[{"type":"state"}]`, `[57,{"type":"state"}]`},
		{`[[[3],[]]]`, `[57,[[3],[]]]`},
	} {
		got := string(Stamp(57, []byte(tt.frame)))
		if got != tt.stamped {
			t.Errorf("Stamp(57, %s) = %s, want %s", tt.frame, got, tt.stamped)
		}
		if n, ok := StampOf([]byte(got)); !ok || n != 57 {
			t.Errorf("StampOf(%s) = %d, %v", got, n, ok)
		}
	}
	if _, ok := StampOf([]byte(`{"type":"answered"}`)); ok {
		t.Error("a frame without a stamp has one")
	}
}

// One step of a run in its compact form, pinned: the forms docs/protocol.md describes.
func TestCompactFormsOfOneStep(t *testing.T) {
	snap := &Snapshot{Clock: Clock{Step: 4, T: 1, Seq: 37, Horizon: 4, Speed: 1},
		Nodes: []Node{{ID: 0, Alive: true, Leader: -1, State: json.RawMessage(`{"state":"REQUESTED","clock":1,"replied":[]}`)},
			{ID: 2, Alive: true, Leader: -1, State: json.RawMessage(`{"state":"RELEASED","clock":0,"replied":[]}`)}},
		InFlight: []InFlight{{Msg: json.RawMessage(`{"id":2,"type":"REQUEST","from":0,"to":2,"ts":1}`), Sent: 0, At: 1}},
		Lit:      []Lit{}, Recent: []json.RawMessage{}}
	step := &Events{Clock: Clock{Step: 5, T: 1, Seq: 40, Horizon: 5, Speed: 1}, Batches: []Batch{{Step: 5, T: 1,
		Events: json.RawMessage(`[{"seq":38,"t":1,"type":"deliver","node":2,"msg":{"id":2,"type":"REQUEST","from":0,"to":2,"ts":1}},` +
			`{"seq":39,"t":1,"type":"rule","node":2,"rule":"RH1","why":"idle"},` +
			`{"seq":40,"t":1,"type":"send","node":2,"msg":{"id":3,"type":"REPLY","from":2,"to":0,"ts":3}}]`),
		Nodes:  []Node{{ID: 2, Alive: true, Leader: -1, State: json.RawMessage(`{"state":"RELEASED","clock":3,"replied":[]}`)}},
		Arrive: Arrivals{{Msg: 3, At: 3}}}}}
	c, x := NewCompactor(), NewExpander()
	for _, f := range []Frame{snap, step} {
		v1 := f.AppendJSON(nil)
		stamped := Stamp(9, c.Encode(f, v1))
		if f == step {
			// The delivery of the newest message (offset 0), the rule and why, the
			// reply to 0 with its ts, the clock variable (place 1), arriving 2 later.
			if want := `[9,[[0,["RH1","idle"],[0,"REPLY",{"ts":3}]],[[2,[1,3]]],[2]]]`; string(stamped) != want {
				t.Fatalf("compact step %s, want %s", stamped, want)
			}
		}
		n, back, err := x.Expand(stamped)
		if err != nil || n != 9 || string(back) != string(Stamp(9, v1)) {
			t.Fatalf("%s expanded to %s (%v), want %s", stamped, back, err, Stamp(9, v1))
		}
	}
	// The strings are in the table now: a joiner gets them first.
	if tb := string(c.Table()); tb != `{"type":"table","strings":["RH1","idle","RH1\u0000idle","REPLY"],"payload":[["REPLY","ts"]]}` {
		t.Fatalf("table %s", tb)
	}
}

// Frames that do not fit the expander's view, or are not compact frames at all, are
// errors that say what is wrong, never a wrong frame.
func TestExpandRefusesWhatDoesNotFit(t *testing.T) {
	for _, tt := range []struct{ frame, err string }{
		{`{"lseq":1,"type":"state"}`, "an array [lseq"},
		{`[1]`, "an array [lseq"},
		{`[x,1]`, "an array [lseq"},
		{`[1,[[4],[]]]`, "not in flight"},
		{`[1,[[-3],[]]]`, "not in the compact table"},
		{`[1,[[[2]],[]]]`, "with none before it"},
		{`[1,[[],[[7,[0,1]]]]]`, "no view"},
		{`[1,[[],[],[3]]]`, "do not match"},
		{`[1,{"p":1}]`, "compact field p (playing)"},
	} {
		_, _, err := NewExpander().Expand([]byte(tt.frame))
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("Expand(%s): %v, want an error about %q", tt.frame, err, tt.err)
		}
	}
}
