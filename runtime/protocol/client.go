package protocol

import (
	"encoding/json"

	"github.com/teach-dist/playground/runtime/sim"
)

// The client's frames: what a page sends. The server decodes them strictly (an unknown
// field is a bad-frame error), so these types list every field a command may carry.
// Pointers tell a field left out from a zero.

// Command is a command on a run's socket (/ws/{session}, and the presenter's):
// play, pause, step, back, seek, speed, reset, act.
type Command struct {
	Type     string          `json:"type"`
	Ref      int64           `json:"ref,omitempty"` // echoed in an error frame about it
	Step     *int            `json:"step,omitempty"`
	Speed    *float64        `json:"speed,omitempty"`
	Scenario json.RawMessage `json:"scenario,omitempty"` // reset: a scenario v1 document
	Curated  string          `json:"curated,omitempty"`  // reset: a curated scenario, by name
	At       *int            `json:"at,omitempty"`       // shadows the event's: an act happens now
	// act: the action as a scenario event writes it, decoded by the same code
	// (runtime/sim ActionJSON); the frame's own type shadows the event's message type.
	sim.ActionJSON
}

// LectureCommand is a lecture command, {"type":"lecture","op":...}: the presenter's
// questions, ask, reveal, withdraw, end, and a follower's answer.
type LectureCommand struct {
	Type     string `json:"type"` // "lecture"
	Ref      int64  `json:"ref,omitempty"`
	Op       string `json:"op"`
	Question *int   `json:"question,omitempty"` // ask: an index into the list; answer: the question's id
	Choice   *int   `json:"choice,omitempty"`   // answer: an index into its choices
}
