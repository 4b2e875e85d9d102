package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// compactFixture is two curated runs' compact stream with the protocol-1 frames they
// stand for, written by runtime/lecture (TestCompactFixtureIsCurrent) for the browser's
// expander test.
const compactFixture = "../../static/test/testdata/compact-frames.json"

// fixtureStream is one run of the fixture as a follower from the start has it (the
// joiner's checkpoint left out): its protocol-1 frames, decoded, and its compact ones.
type fixtureStream struct {
	frames  []Frame
	v1      [][]byte // unstamped
	compact [][]byte // stamped, as the socket carries them
}

func readFixture(tb testing.TB) []fixtureStream {
	tb.Helper()
	raw, err := os.ReadFile(compactFixture)
	if err != nil {
		tb.Fatal(err)
	}
	var runs map[string][]struct{ Compact, V1 string }
	if err := json.Unmarshal(raw, &runs); err != nil {
		tb.Fatal(err)
	}
	var out []fixtureStream
	for _, name := range []string{"ricart-agrawala-concurrent", "token-ring-process-crash"} {
		var s fixtureStream
		joining := 0 // the joiner's checkpoint: the table, hello and snapshot
		for _, p := range runs[name] {
			if p.V1 == "" {
				joining = 3
			}
			if joining > 0 {
				joining--
				continue
			}
			v1, ok := unstamp([]byte(p.V1))
			if !ok {
				tb.Fatalf("%s: %.40s is not a stamped frame", name, p.V1)
			}
			f, err := Decode(v1)
			if err != nil {
				tb.Fatal(err)
			}
			s.frames, s.v1, s.compact = append(s.frames, f), append(s.v1, v1), append(s.compact, []byte(p.Compact))
		}
		if len(s.frames) < 20 {
			tb.Fatalf("%s: %d frames in the fixture", name, len(s.frames))
		}
		out = append(out, s)
	}
	return out
}

// unstamp takes the lseq out of a stamped protocol-1 frame: {"lseq":n,...} -> {...}.
func unstamp(b []byte) ([]byte, bool) {
	i := bytes.IndexByte(b, ',')
	if !bytes.HasPrefix(b, []byte(`{"lseq":`)) || i < 0 {
		return nil, false
	}
	return append([]byte{'{'}, b[i+1:]...), true
}

// BenchmarkCompactEncode is the lecture's cost of its compact stream: every frame of
// the fixture's runs through one Compactor (each events frame checked by expanding
// it), per frame.
func BenchmarkCompactEncode(b *testing.B) {
	perFrame(b, func(s *fixtureStream) {
		c := NewCompactor()
		for i, f := range s.frames {
			c.Encode(f, s.v1[i])
		}
	})
}

// BenchmarkCompactExpand is a follower's cost (a tool's: the page expands in
// static/compact.js): every compact frame of the fixture's runs expanded, per frame.
func BenchmarkCompactExpand(b *testing.B) {
	perFrame(b, func(s *fixtureStream) {
		x := NewExpander()
		for _, f := range s.compact {
			if _, _, err := x.Expand(f); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// perFrame runs pass over each stream of the fixture, from its start, once an
// iteration, and reports the time per frame.
func perFrame(b *testing.B, pass func(s *fixtureStream)) {
	runs := readFixture(b)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for i := range runs {
			pass(&runs[i])
			n += len(runs[i].frames)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}
