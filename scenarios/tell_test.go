package scenarios

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// The tell event: {"at":..,"do":"tell","node":<from id>,"to":<to id>} sends an
// application message. Ids, not indexes.
func TestTellEventDecodes(t *testing.T) {
	doc := `{"version":1,"algorithm":"central","nodes":3,"ids":[7,3,5],
		"events":[{"at":4,"do":"tell","node":3,"to":7},{"at":5,"do":"drop","type":"APP"}]}`
	sc, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := sc.Config()
	if err != nil {
		t.Fatal(err)
	}
	want := sim.Action{At: 4, Do: sim.ActTell, Node: 1, From: -1, To: 0}
	if got := cfg.Actions[0]; !reflect.DeepEqual(got, want) {
		t.Fatalf("action %+v, want %+v", got, want)
	}
	if got := cfg.Actions[1]; got.Do != sim.ActDrop || got.Type != sim.AppMessage {
		t.Fatalf("a drop filter on APP: %+v", got)
	}
}

func TestBadTellEventsNameTheField(t *testing.T) {
	tests := []struct{ event, want string }{
		{`{"at":1,"do":"tell","node":0}`, "events[1].to: tell needs the id of the process to tell"},
		{`{"at":1,"do":"tell","to":1}`, `events[1].node: "tell" needs a node`},
		{`{"at":1,"do":"tell","node":0,"to":9}`, "events[1].to: 9 is not a node id"},
		{`{"at":1,"do":"tell","node":9,"to":1}`, "events[1].node: 9 is not a node id"},
		{`{"at":1,"do":"tell","node":1,"to":1}`, "events[1].to: P1 would tell itself"},
		{`{"at":1,"do":"tell","node":0,"to":1,"msg":3}`, "events[1].msg: msg belongs to drop and deliver only"},
		{`{"at":1,"do":"tell","node":0,"to":1,"type":"APP"}`, "events[1].type: type belongs to drop only"},
		{`{"at":1,"do":"tell","node":0,"to":1,"delay":3}`, "events[1].delay: delay belongs to network only"},
		{`{"at":1,"do":"crash","node":0,"to":1}`, "events[1].to: to belongs to drop and tell only"},
		{`{"at":1,"do":"drop","type":"APPLE"}`, `events[1].type: "APPLE" is not a message of ricart-agrawala (allowed: REQUEST, REPLY, or APP`},
	}
	for _, tc := range tests {
		doc := `{"version":1,"algorithm":"ricart-agrawala","nodes":3,"events":[{"at":0,"do":"request","node":0},` + tc.event + `]}`
		_, err := Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.event, err, tc.want)
		}
	}
}

// A tell made live travels in a link as a scenario event with ids, and the decoded
// link replays to the same run, byte for byte.
func TestTellTravelsInALink(t *testing.T) {
	doc := `{"version":1,"algorithm":"central","nodes":3,"ids":[4,8,2],"seed":5,"network":{"delay":[1,4]},"cs":3,
		"events":[{"at":1,"do":"request","node":4},{"at":2,"do":"tell","node":8,"to":2}],"until":60}`
	menu := []sim.Action{
		{Do: sim.ActTell, Node: 0, To: 1, From: -1},
		{Do: sim.ActRequest, Node: 1, From: -1, To: -1},
		{Do: sim.ActTell, Node: 2, To: 0, From: -1},
		{Do: sim.ActDrop, From: -1, To: -1, Type: sim.AppMessage},
	}
	cfg, ivs, step := liveRun(t, doc, 6, menu)
	link, err := LinkFromRun([]byte(doc), cfg, ivs, step)
	if err != nil {
		t.Fatal(err)
	}
	e := link.Interventions[0].Event
	if e.Do != "tell" || e.Node == nil || *e.Node != 4 || e.To == nil || *e.To != 8 {
		t.Fatalf("the first tell in the link: %+v, want node 4 to 8 (ids)", e)
	}
	code, err := EncodeLink(link)
	if err != nil {
		t.Fatal(err)
	}
	if data := inflate(t, code); !bytes.Contains(data, []byte(`{"step":0,"do":"tell","node":4,"to":8}`)) {
		t.Fatalf("wire JSON %s", data)
	}
	back, err := DecodeLink(code)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, link) {
		t.Fatalf("decoded link differs:\n got %+v\nwant %+v", back, link)
	}
	cfg2, ivs2, err := back.Run()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ivs2, ivs) {
		t.Fatalf("interventions differ:\n got %+v\nwant %+v", ivs2, ivs)
	}
	want, got := replayTrace(t, cfg, ivs, step), replayTrace(t, cfg2, ivs2, back.Step)
	if !bytes.Equal(got, want) || bytes.Count(got, []byte(`"type":"APP"`)) < 4 {
		t.Fatalf("seed %d: the link's run differs from the original, or has too few APP events:\n%s", cfg.Seed, got)
	}
}
