package web

import (
	"reflect"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// The act frame {"do":"tell","node":<id>,"to":<id>} decodes into the session's
// command; a tell without both ids, or a to on another action, names the field.
func TestParseActTell(t *testing.T) {
	got, ferr := parseFrame([]byte(`{"type":"act","do":"tell","node":3,"to":1,"ref":4}`))
	if ferr != nil {
		t.Fatalf("%s: %s", ferr.code, ferr.msg)
	}
	want := session.Command{Kind: session.Act, Ref: 4, Act: sim.ActionJSON{Do: "tell", Node: new(3), To: new(1)}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, tc := range []struct{ frame, code, field string }{
		{`{"type":"act","do":"tell","node":3}`, session.CodeBadField, "to:"},
		{`{"type":"act","do":"tell","to":3}`, session.CodeBadField, "node"},
		{`{"type":"act","do":"tell","node":3,"to":"P1"}`, session.CodeBadFrame, "to"},
		{`{"type":"act","do":"crash","node":3,"to":1}`, session.CodeBadField, "to:"},
		{`{"type":"act","do":"tell","node":3,"to":1,"groups":[[0]]}`, session.CodeBadField, "groups:"},
	} {
		_, ferr := parseFrame([]byte(tc.frame))
		if ferr == nil {
			t.Errorf("%s: accepted", tc.frame)
			continue
		}
		if ferr.code != tc.code || !strings.Contains(ferr.msg, tc.field) {
			t.Errorf("%s: %s %q, want %s naming %q", tc.frame, ferr.code, ferr.msg, tc.code, tc.field)
		}
	}
}

// Over a real socket: the tell reaches the run and comes back as the send of an APP
// message; a process the run does not have is refused by name.
func TestWSActTell(t *testing.T) {
	_, ts := newTestServer(t, Options{})
	c := dial(t, ts, openSession(t, ts, "/play/central?n=3"))
	c.next("snapshot")
	c.send(`{"type":"act","do":"tell","node":0,"to":2,"ref":1}`)
	f := c.next("events", "error")
	if f.Type != "events" || !strings.Contains(f.raw, `"type":"send","node":0,"msg":{"id":1,"type":"APP","from":0,"to":2}`) {
		t.Fatalf("tell: %s", f.raw)
	}
	c.send(`{"type":"act","do":"tell","node":0,"to":7,"ref":2}`)
	if f := c.next("error"); f.Code != session.CodeBadField || f.Ref != 2 || !strings.Contains(f.Error, "to: 7") {
		t.Fatalf("tell to a process that does not exist: %s", f.raw)
	}
}
