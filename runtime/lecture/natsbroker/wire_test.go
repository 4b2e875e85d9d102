package natsbroker

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
)

// A state too big for one message goes in parts and comes back whole, byte for byte.
func TestStateMessagesSplitAndJoin(t *testing.T) {
	cp := [][]byte{protocol.Stamp(10, []byte(`{"type":"hello"}`)),
		protocol.Stamp(10, []byte(`{"type":"snapshot","big":"`+strings.Repeat("x", 300)+`"}`))}
	var log [][]byte
	for i := range 20 {
		log = append(log, protocol.Stamp(uint64(11+i), frame(i)))
	}
	st := lecture.HubState{CPSeq: 10, Seq: 30, CP: cp, Log: log, Ended: true}
	msgs := stateMsgs("s", kindState, st, 100)
	if len(msgs) < 5 {
		t.Fatalf("%d parts for a state of about 1 KB in parts of 100 bytes", len(msgs))
	}
	var a assembler
	var got lecture.HubState
	for i, m := range msgs {
		s, done, err := a.add(m)
		if err != nil || done != (i == len(msgs)-1) {
			t.Fatalf("part %d: done %v, err %v", i, done, err)
		}
		got = s
	}
	if got.CPSeq != 10 || got.Seq != 30 || !got.Ended || len(got.CP) != 2 || len(got.Log) != 20 {
		t.Fatalf("got %+v", got)
	}
	for i := range cp {
		if !bytes.Equal(got.CP[i], cp[i]) {
			t.Fatalf("checkpoint frame %d: %s", i, got.CP[i])
		}
	}
	for i := range log {
		if !bytes.Equal(got.Log[i], log[i]) {
			t.Fatalf("log frame %d: %s", i, got.Log[i])
		}
	}

	// A lost part spoils the whole; the next state still comes through.
	if _, _, err := a.add(msgs[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.add(msgs[2]); !errors.Is(err, errBadState) {
		t.Fatalf("a missing part: %v", err)
	}
	a.reset()
	for i, m := range msgs {
		if _, done, err := a.add(m); err != nil || done != (i == len(msgs)-1) {
			t.Fatalf("after a loss, part %d: %v", i, err)
		}
	}
	// A log whose length does not match the numbers is refused.
	bad := stateMsgs("s", kindState, lecture.HubState{CPSeq: 10, Seq: 31, CP: cp, Log: log}, 1<<20)
	if _, _, err := a.add(bad[0]); !errors.Is(err, errBadState) {
		t.Fatalf("a short log: %v", err)
	}
}

func TestEmptyStateIsOneMessage(t *testing.T) {
	msgs := stateMsgs("s", kindCheckpoint, lecture.HubState{}, 1000)
	var a assembler
	st, done, err := a.add(msgs[0])
	if len(msgs) != 1 || !done || err != nil || len(st.CP)+len(st.Log) != 0 {
		t.Fatalf("%d messages, %+v, %v, %v", len(msgs), st, done, err)
	}
}

// The other server hands its caller the very error the presenter's server had, so the
// web layer can tell "ended" from "crowded"; others keep their text.
func TestRepliesKeepTheErrors(t *testing.T) {
	for _, e := range []error{lecture.ErrEnded, lecture.ErrCrowded, lecture.ErrAnswered, lecture.ErrNoQuestion, lecture.ErrBadChoice, lecture.ErrNoStream} {
		if got := errReply(e).err(); got != e {
			t.Errorf("%v came back as %v", e, got)
		}
	}
	other := fmt.Errorf("replay: %w", errors.New("boom"))
	if got := errReply(other).err(); got == nil || got.Error() != other.Error() {
		t.Errorf("got %v", got)
	}
	if (reply{}).err() != nil {
		t.Error("an empty reply is an error")
	}
}

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		in, says string
	}{
		{"nats://127.0.0.1:4222", ""},
		{"nats://a:4222,nats://b:4222", ""},
		{"tls://user:secret@nats.example:4222", ""},
		{"http://127.0.0.1:4222", "scheme"},
		{"127.0.0.1:4222", "not a NATS URL"},
		{"nats://", "not a NATS URL"},
		{"nats://host:4222/path", "not a NATS URL"},
		{"ftp://user:secret@host", "xxxxx"}, // the password is not shown
	} {
		err := CheckURL(c.in)
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says)):
			t.Errorf("%s: %v, want it to say %q", c.in, err, c.says)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the error shows the password: %v", c.in, err)
		}
	}
}

// A server that cannot be reached, or a URL that is wrong, is an error at once that
// says which.
func TestConnectFailsClearly(t *testing.T) {
	if _, err := Connect(Options{URL: "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Fatalf("bad URL: %v", err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", freePort(t))
	_, err := Connect(Options{URL: url})
	if err == nil || !strings.Contains(err.Error(), "cannot connect to NATS at "+url) {
		t.Fatalf("nobody there: %v", err)
	}
	if _, err := Connect(Options{URL: url, Prefix: "a.>"}); err == nil || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("bad prefix: %v", err)
	}
}

// A state message from the wire never panics the assembler, and what it accepts holds
// together: as many log frames as the numbers say, each within the bytes sent.
func FuzzStateMessage(f *testing.F) {
	for _, m := range stateMsgs("s", kindState, lecture.HubState{CPSeq: 2, Seq: 4, CP: [][]byte{[]byte(`{"lseq":2}`)},
		Log: [][]byte{[]byte(`{"lseq":3}`), []byte(`{"lseq":4}`)}}, 1<<20) {
		f.Add(m.Data, m.Header.Get(hPart), m.Header.Get(hMore), m.Header.Get(hCp), m.Header.Get(hCpSeq), m.Header.Get(hSeq))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, "0", "", "0", "0", "1")
	f.Fuzz(func(t *testing.T, data []byte, part, more, ncp, cpSeq, seq string) {
		m := nats.NewMsg("s")
		for k, v := range map[string]string{hPart: part, hMore: more, hCp: ncp, hCpSeq: cpSeq, hSeq: seq} {
			m.Header.Set(k, v)
		}
		m.Data = data
		var a assembler
		st, done, err := a.add(m)
		if err != nil || !done {
			return
		}
		if uint64(len(st.Log)) != st.Seq-st.CPSeq {
			t.Fatalf("accepted %d log frames for numbers %d..%d", len(st.Log), st.CPSeq, st.Seq)
		}
		total := 0
		for _, fr := range append(st.CP, st.Log...) {
			total += len(fr)
		}
		if total > len(data) {
			t.Fatalf("frames of %d bytes out of %d", total, len(data))
		}
	})
}
