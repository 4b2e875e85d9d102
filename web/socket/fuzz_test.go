package socket

import (
	"testing"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
)

// Fuzzed like every parser that reads what a visitor sends (docs/operations.md,
// "Fuzzing"); the seed corpus is testdata/fuzz/FuzzParseFrame.

// FuzzParseFrame: a WebSocket frame from a client never panics the parser, and gives
// either a command or an error frame with a code from docs/protocol.md.
func FuzzParseFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"play"}`, `{"type":"seek","step":42,"ref":3}`, `{"type":"speed","speed":16}`,
		`{"type":"act","do":"request","node":3,"ref":7}`, `{"type":"act","do":"partition","groups":[[0,1],[2]]}`,
		`{"type":"act","do":"network","hold":true,"fifo":false,"delay":[1,5],"loss":0.1}`,
		`{"type":"act","do":"deliver","msg":12}`, `{"type":"reset","scenario":{"version":1,"algorithm":"bully","nodes":3}}`,
		`{"type":"nope"}`, `{"type":"act","do":"crash"}`, `[]`, `{"type":"play"}{}`,
	} {
		f.Add([]byte(s))
	}
	codes := map[string]bool{protocol.CodeBadFrame: true, protocol.CodeUnknownType: true, protocol.CodeBadField: true, protocol.CodeBadScenario: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd, ferr := ParseFrame(data)
		if ferr != nil {
			if !codes[ferr.code] || ferr.msg == "" {
				t.Fatalf("error %q %q is not a protocol error", ferr.code, ferr.msg)
			}
			return
		}
		if cmd.Kind == 0 {
			t.Fatalf("a command without a kind from %q", data)
		}
		if cmd.Kind == session.Reset && cmd.Setup != nil && cmd.Setup.Config.Spec == nil {
			t.Fatal("a reset to a setup without an algorithm")
		}
	})
}
