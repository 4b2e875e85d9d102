package lecture

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
)

// frameRecorder keeps a session's frames in order, with the checkpoints asked for between
// them (a checkpoint is a hello and a snapshot with no frame of its own).
type frameRecorder struct{ c chan sessionFrame }

type sessionFrame struct {
	frame      protocol.Encoded
	checkpoint *protocol.Snapshot
	hello      []byte
	done       bool
}

func (r *frameRecorder) Deliver(f protocol.Encoded) bool { r.c <- sessionFrame{frame: f}; return true }
func (r *frameRecorder) Close()                          {}

// runFrames steps a curated run to its end (at most limit steps), steps back once on
// the way (a snapshot in the stream) and asks for a checkpoint after every step.
func runFrames(t *testing.T, name string, limit int) []sessionFrame {
	t.Helper()
	sc, ok := scenarios.Lookup(name)
	if !ok {
		t.Fatalf("no curated scenario %s", name)
	}
	raw, _ := json.Marshal(sc)
	m := session.NewManager(4, session.Options{})
	t.Cleanup(m.Close)
	sess, err := m.Start(setup(t, string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	r := &frameRecorder{c: make(chan sessionFrame, 64*limit)}
	if err := sess.Attach(r); err != nil {
		t.Fatal(err)
	}
	mark := func(last bool) {
		if err := sess.Checkpoint(func(h, s protocol.Encoded) {
			r.c <- sessionFrame{checkpoint: s.Frame.(*protocol.Snapshot), hello: followerHello(h.Frame.(*protocol.Hello)), done: last}
		}); err != nil {
			t.Fatal(err)
		}
	}
	for k := range limit {
		cmd := session.Command{Kind: session.Step}
		if k == limit/2 {
			cmd.Kind = session.Back
		}
		if err := sess.Do(r, cmd); err != nil {
			t.Fatal(err)
		}
		mark(k == limit-1)
	}
	var out []sessionFrame
	testwait.For(t, "the run's frames", func() bool {
		for len(r.c) > 0 {
			x := <-r.c
			out = append(out, x)
			if x.done {
				return true
			}
		}
		return false
	})
	return out
}

// Every frame of several curated runs comes back from its compact form exactly as
// protocol 1 wrote it, for a follower that followed from the start and for one that
// joined at a checkpoint half way; at every checkpoint a joiner's view is the view of
// the followers already there; and the events frames are at least three times smaller (RA N=8 is measured by cmd/lectureload).
func TestCompactFramesExpandToTheProtocol1Frames(t *testing.T) {
	for _, name := range []string{"ricart-agrawala-concurrent", "ricart-agrawala-process-crash", "token-ring-process-crash",
		"bully-partition", "maekawa-deadlock", "suzuki-kasami-token-queue", "raymond-holder-pointers", "lamport-non-fifo"} {
		t.Run(name, func(t *testing.T) {
			frames := runFrames(t, name, 80)
			c := protocol.NewCompactor()
			x := protocol.NewExpander()
			var joiner *protocol.Expander
			var v1Bytes, compactBytes, events, compacted int
			n := uint64(0)
			for i, r := range frames {
				if r.checkpoint != nil {
					if !c.Same(r.checkpoint) {
						t.Fatalf("after frame %d a follower joining at the checkpoint would not have the view of the others", i)
					}
					if joiner == nil && i > len(frames)/2 {
						joiner = protocol.NewExpander()
						if _, v1, err := joiner.Expand(protocol.Stamp(n, protocol.Whole(c.Table()))); err != nil || v1 != nil {
							t.Fatalf("the table: %s, %v", v1, err)
						}
						for _, f := range [][]byte{r.hello, r.checkpoint.AppendJSON(nil)} {
							if _, _, err := joiner.Expand(protocol.Stamp(n, c.Encode(mustDecode(t, f), f))); err != nil {
								t.Fatal(err)
							}
						}
						// The joiner's frames went through the compactor of its own
						// stream: what c makes next must not depend on them.
						c2 := protocol.NewCompactor()
						for _, f := range frames[:i+1] {
							if f.frame.Frame != nil {
								c2.Encode(f.frame.Frame, f.frame.JSON)
							}
						}
						c = c2
					}
					continue
				}
				n++
				v1 := r.frame.JSON
				if h, ok := r.frame.Frame.(*protocol.Hello); ok {
					v1 = followerHello(h)
				}
				stamped := protocol.Stamp(n, c.Encode(r.frame.Frame, v1))
				for who, e := range map[string]*protocol.Expander{"follower": x, "joiner": joiner} {
					if e == nil {
						continue
					}
					got, back, err := e.Expand(stamped)
					if err != nil {
						t.Fatalf("%s, frame %d %s: %v", who, i, stamped, err)
					}
					if want := protocol.Stamp(n, v1); got != n || !bytes.Equal(back, want) {
						t.Fatalf("%s, frame %d came back as\n%s\nwant\n%s\n(compact %s)", who, i, back, want, stamped)
					}
				}
				if _, ok := r.frame.Frame.(*protocol.Events); ok {
					events++
					v1Bytes += len(protocol.Stamp(n, v1))
					compactBytes += len(stamped)
					if !bytes.HasPrefix(stamped[bytes.IndexByte(stamped, ',')+1:], []byte(`{"type"`)) {
						compacted++
					}
				}
			}
			if joiner == nil || events < 5 {
				t.Fatalf("the run made %d events frames and no joiner: too short to test", events)
			}
			if compacted != events {
				t.Errorf("%d of %d events frames went whole", events-compacted, events)
			}
			t.Logf("%d events frames: %d bytes in protocol 1, %d compact (%.1fx)", events, v1Bytes, compactBytes, float64(v1Bytes)/float64(compactBytes))
			if compactBytes*3 > v1Bytes {
				t.Errorf("compact events frames are %d bytes against %d: not even three times smaller", compactBytes, v1Bytes)
			}
		})
	}
}

func mustDecode(t *testing.T, b []byte) protocol.Frame {
	t.Helper()
	f, err := protocol.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

var updateFixture = flag.Bool("update", false, "rewrite static/test/testdata/compact-frames.json")

// compactFixture is where the browser's expander test (static/test/compact.test.js)
// reads compact frames with the protocol-1 frames they stand for.
const compactFixture = "../../static/test/testdata/compact-frames.json"

// The browser's expander reads the frames this compactor writes: the fixture is two
// curated runs' compact stream, a joiner's included, each frame with the protocol-1
// frame it expands to. The test fails when the fixture is not what the compactor
// makes now (go test ./runtime/lecture -run CompactFixture -update rewrites it).
func TestCompactFixtureIsCurrent(t *testing.T) {
	type pair struct {
		Compact string `json:"compact"`
		V1      string `json:"v1"` // empty for the table
	}
	runs := map[string][]pair{}
	for _, name := range []string{"ricart-agrawala-concurrent", "token-ring-process-crash"} {
		frames := runFrames(t, name, 60)
		c := protocol.NewCompactor()
		var out []pair
		n := uint64(0)
		joined := false
		for i, r := range frames {
			if r.checkpoint != nil {
				if !joined && i > len(frames)/3 {
					// The joiner's checkpoint as the compact stream has it.
					joined = true
					out = append(out, pair{Compact: string(protocol.Stamp(n, protocol.Whole(c.Table())))})
					for _, f := range [][]byte{r.hello, r.checkpoint.AppendJSON(nil)} {
						out = append(out, pair{Compact: string(protocol.Stamp(n, protocol.Whole(f))), V1: string(protocol.Stamp(n, f))})
					}
				}
				continue
			}
			n++
			v1 := r.frame.JSON
			if h, ok := r.frame.Frame.(*protocol.Hello); ok {
				v1 = followerHello(h)
			}
			out = append(out, pair{Compact: string(protocol.Stamp(n, c.Encode(r.frame.Frame, v1))), V1: string(protocol.Stamp(n, v1))})
		}
		runs[name] = out
	}
	got, err := json.MarshalIndent(runs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateFixture {
		if err := os.WriteFile(compactFixture, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(compactFixture)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not what the compactor writes now: rerun with -update", compactFixture)
	}
}
