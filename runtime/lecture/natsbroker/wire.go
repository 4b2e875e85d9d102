package natsbroker

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/runtime/lecture"
)

// What goes over NATS (docs/deploy.md, "On the wire"). For a lecture with code C:
//
//	PREFIX.C.frames     the presenter's server publishes: each stamped frame as it is,
//	                    no header; checkpoints (Pg-Kind: cp), heartbeats (hb) and the
//	                    end (end), each with the number of the last frame (Pg-Seq).
//	PREFIX.C.rpc.OP     the presenter's server answers: info, admit, answer, answered,
//	                    place (a follower's place, for its client), fork (JSON), sync
//	                    (the checkpoint and log, as a state message); count and places
//	                    (published by the other servers every heartbeat: their followers,
//	                    and the places their followers hold by client).
//	PREFIX.C.p2.frames  the same for the lecture's compact stream (protocol 2), with its
//	PREFIX.C.p2.rpc.OP  own numbers: sync and count only.
//
// A state message (a checkpoint, or the answer to sync) carries frames, each a uvarint
// length and the bytes, split in parts that fit the server's max_payload.

const (
	hKind  = "Pg-Kind"
	hSeq   = "Pg-Seq"    // the last frame's number
	hCpSeq = "Pg-Cp-Seq" // the checkpoint's number
	hCp    = "Pg-Cp"     // how many of the frames are the checkpoint's
	hEnded = "Pg-Ended"
	hPart  = "Pg-Part" // 0, 1, ... of a state message
	hMore  = "Pg-More" // another part follows
	hError = "Pg-Error"

	kindCheckpoint = "cp"
	kindBeat       = "hb"
	kindEnd        = "end"
	kindState      = "state"
)

func headerSeq(m *nats.Msg, key string) uint64 {
	if m.Header == nil {
		return 0
	}
	n, _ := strconv.ParseUint(m.Header.Get(key), 10, 64)
	return n
}

// stateMsgs splits st into messages of at most limit bytes of frames each (a single
// larger frame gets a message of its own), all with kind and st's numbers.
func stateMsgs(subject, kind string, st lecture.HubState, limit int) []*nats.Msg {
	var msgs []*nats.Msg
	var body []byte
	flush := func(more bool) {
		m := nats.NewMsg(subject)
		m.Header.Set(hKind, kind)
		m.Header.Set(hSeq, strconv.FormatUint(st.Seq, 10))
		m.Header.Set(hCpSeq, strconv.FormatUint(st.CPSeq, 10))
		m.Header.Set(hCp, strconv.Itoa(len(st.CP)))
		m.Header.Set(hPart, strconv.Itoa(len(msgs)))
		if st.Ended {
			m.Header.Set(hEnded, "1")
		}
		if more {
			m.Header.Set(hMore, "1")
		}
		m.Data = body
		msgs = append(msgs, m)
		body = nil
	}
	add := func(f []byte) {
		if len(body) > 0 && len(body)+len(f)+binary.MaxVarintLen64 > limit {
			flush(true)
		}
		body = binary.AppendUvarint(body, uint64(len(f)))
		body = append(body, f...)
	}
	for _, f := range st.CP {
		add(f)
	}
	for _, f := range st.Log {
		add(f)
	}
	flush(false)
	return msgs
}

var errBadState = errors.New("natsbroker: a state message is broken or incomplete")

// assembler puts the parts of a state message back together.
type assembler struct {
	next int // the part expected next; 0 when none is under way
	buf  []byte
}

func (a *assembler) reset() { a.next, a.buf = 0, nil }

// add takes one part; done is true with the whole state after the last part.
func (a *assembler) add(m *nats.Msg) (st lecture.HubState, done bool, err error) {
	part, err := strconv.Atoi(m.Header.Get(hPart))
	if err != nil || part != a.next {
		a.reset()
		return lecture.HubState{}, false, errBadState
	}
	a.buf = append(a.buf, m.Data...)
	a.next++
	if m.Header.Get(hMore) != "" {
		return lecture.HubState{}, false, nil
	}
	defer a.reset()
	st = lecture.HubState{Seq: headerSeq(m, hSeq), CPSeq: headerSeq(m, hCpSeq), Ended: m.Header.Get(hEnded) != ""}
	ncp, err := strconv.Atoi(m.Header.Get(hCp))
	if err != nil || ncp < 0 {
		return lecture.HubState{}, false, errBadState
	}
	var frames [][]byte
	for b := a.buf; len(b) > 0; {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return lecture.HubState{}, false, errBadState
		}
		frames = append(frames, b[k:k+int(n)])
		b = b[k+int(n):]
	}
	if ncp > len(frames) || st.CPSeq > st.Seq || uint64(len(frames)-ncp) != st.Seq-st.CPSeq {
		return lecture.HubState{}, false, errBadState
	}
	st.CP, st.Log = frames[:ncp], frames[ncp:]
	return st, true, nil
}

// The replies of the presenter's server carry errors by name, so that the other server
// hands its caller the same sentinel error (the web layer tells them apart).
var errNames = map[string]error{
	"ended":         lecture.ErrEnded,
	"crowded":       lecture.ErrCrowded,
	"no-stream":     lecture.ErrNoStream,
	"no-question":   lecture.ErrNoQuestion,
	"answered":      lecture.ErrAnswered,
	"bad-choice":    lecture.ErrBadChoice,
	"behind":        lecture.ErrBehind,
	"question-open": lecture.ErrQuestionOpen,
	"place-share":   lecture.ErrPlaceShare,
	"answer-share":  lecture.ErrAnswerShare,
}

// request is what another server asks of the presenter's server.
type request struct {
	Fid      string `json:"fid,omitempty"`
	Question int    `json:"question,omitempty"`
	Choice   int    `json:"choice,omitempty"`
	Step     int    `json:"step,omitempty"`
	Node     string `json:"node,omitempty"` // count, place: the server that counts
	N        int    `json:"n,omitempty"`    // count: its followers
	// Client is the follower's client (an IPv4 address or an IPv6 /64): answer, place.
	Client string `json:"client,omitempty"`
	// Places (places) are the places this server's followers hold, by client.
	Places map[string]int `json:"places,omitempty"`
}

// reply is every answer of the presenter's server.
type reply struct {
	Err string `json:"err,omitempty"` // a known error's name (errNames)
	Msg string `json:"msg,omitempty"` // any error's text

	Algorithm string `json:"algorithm,omitempty"` // info
	Ended     bool   `json:"ended,omitempty"`
	Why       string `json:"why,omitempty"`
	Link      string `json:"link,omitempty"`    // info, fork
	State     string `json:"state,omitempty"`   // info: the lecture frame, as followers get it
	Compact   bool   `json:"compact,omitempty"` // info: the lecture has a compact stream (protocol 2)

	Question int  `json:"question,omitempty"` // answered
	Choice   int  `json:"choice,omitempty"`
	OK       bool `json:"ok,omitempty"`
}

func errReply(err error) reply {
	for name, e := range errNames {
		if errors.Is(err, e) {
			return reply{Err: name, Msg: err.Error()}
		}
	}
	return reply{Msg: err.Error()}
}

// err is the error the reply carries, nil when none.
func (r reply) err() error {
	if e, ok := errNames[r.Err]; ok {
		return e
	}
	if r.Msg != "" || r.Err != "" {
		return errors.New(r.Msg)
	}
	return nil
}
