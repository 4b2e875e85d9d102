// Package protocol is the WebSocket protocol of docs/protocol.md as Go types: one type
// per frame, the server's frames each with the one encoder that makes their bytes, the
// client's commands as the shapes they are decoded into, and every error code and close
// reason. The session, the lecture and the web layer build and read these values; none
// of them writes or sniffs frame bytes by hand.
//
// Bytes on the wire are fixed (the browser reads them, and followers of a lecture on
// several servers must get the same ones): fields come in the order the types declare
// them, and the encoders here are the only place that order is written.
package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Proto is the version of the protocol, sent in hello.
const Proto = 1

// Frame is one frame the server sends.
type Frame interface {
	// Type is the frame's "type" field.
	Type() string
	// AppendJSON appends the frame's encoding: exactly what goes on the wire.
	AppendJSON(b []byte) []byte
}

// Encoded is a frame with its encoding, made once however many receive it. JSON is
// shared by every receiver and must not be modified; Frame is the value it encodes,
// for a receiver that reads fields (a lecture reads the step, the quiet flag, hello).
type Encoded struct {
	Frame Frame
	JSON  []byte
}

// Encode encodes f once.
func Encode(f Frame) Encoded { return Encoded{Frame: f, JSON: f.AppendJSON(nil)} }

// ErrorFrame is the encoding of an error frame: code (codes.go) and a message for
// people; ref is the client's ref (0: none).
func ErrorFrame(ref int64, code, msg string) []byte {
	return (&Error{Code: code, Error: msg, Ref: ref}).AppendJSON(nil)
}

// ErrorFrameAt is ErrorFrame for an error at a line of a scenario's source.
func ErrorFrameAt(ref int64, code, msg string, line int) []byte {
	return (&Error{Code: code, Error: msg, Ref: ref, Line: line}).AppendJSON(nil)
}

// frames makes an empty frame of each type, by its "type" (a presenter's lecture frame
// is "lecture" with "role":"presenter"): what Decode reads, and what the round-trip
// test covers.
var frames = map[string]func() Frame{
	"hello":             func() Frame { return &Hello{} },
	"state":             func() Frame { return &State{} },
	"events":            func() Frame { return &Events{} },
	"snapshot":          func() Frame { return &Snapshot{} },
	"error":             func() Frame { return &Error{} },
	"lecture":           func() Frame { return &Lecture{} },
	"lecture/presenter": func() Frame { return &PresenterLecture{} },
	"question":          func() Frame { return &Question{} },
	"questions":         func() Frame { return &Questions{} },
	"answered":          func() Frame { return &Answered{} },
}

// Decode reads a server frame back into its type (a lecture's "lseq" is ignored). The
// server never needs it; tests and tools that read what the server sent do.
func Decode(data []byte) (Frame, error) {
	var head struct {
		Type string `json:"type"`
		Role string `json:"role"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	key := head.Type
	if head.Role != "" {
		key += "/" + head.Role
	}
	mk, ok := frames[key]
	if !ok {
		if head.Type == "" {
			return nil, errors.New("protocol: a frame without a type")
		}
		return nil, fmt.Errorf("protocol: unknown frame type %q", key)
	}
	f := mk()
	if err := json.Unmarshal(data, f); err != nil {
		return nil, fmt.Errorf("protocol: %s frame: %w", head.Type, err)
	}
	return f, nil
}
