package protocol

import (
	"encoding/json"
	"strconv"
)

// The frames of lecture mode (docs/lecture.md). They are rare (a few per question), so
// encoding/json writes them; appendTyped puts "type" first, as every frame has it.

// Lecture is the lecture's state as its followers get it: live or ended, and the link
// to the run.
type Lecture struct {
	Code    string `json:"code"`
	Display string `json:"display"`
	State   string `json:"state"` // live, ended
	Link    string `json:"link,omitempty"`
	Reason  string `json:"reason,omitempty"` // why it ended
}

// PresenterLecture is the lecture's state as the presenter gets it: with the step the
// link stands for and the number of followers.
type PresenterLecture struct {
	Role      string `json:"role"` // always "presenter"
	Code      string `json:"code"`
	Display   string `json:"display"`
	State     string `json:"state"`
	Link      string `json:"link,omitempty"`
	LinkStep  int    `json:"linkStep"`
	Reason    string `json:"reason,omitempty"`
	Followers int    `json:"followers"`
}

// Question is the state of the question asked: open, revealed or withdrawn.
type Question struct {
	ID      int      `json:"id"`
	State   string   `json:"state"`
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Choices []string `json:"choices"`
	Step    int      `json:"step"`
	Reveal  *int     `json:"reveal,omitempty"` // the presenter's: the step that shows the answer
	Answer  *int     `json:"answer,omitempty"` // once revealed
	Tally   []int    `json:"tally,omitempty"`  // the presenter's, and everyone's once revealed
	Answers int      `json:"answers"`
	Reason  string   `json:"reason,omitempty"` // why it was withdrawn
}

// Questions answers the presenter's questions op: what can be asked at Step.
type Questions struct {
	Step  int      `json:"step"`
	Items []Prompt `json:"items"`
	Error string   `json:"error,omitempty"` // why there are none
	Ref   int64    `json:"ref,omitempty"`
}

// Prompt is a question as the presenter chooses it: never its answer.
type Prompt struct {
	Kind    string   `json:"kind"`
	Text    string   `json:"text"`
	Choices []string `json:"choices"`
	Step    int      `json:"step"`
}

// Answered acknowledges a follower's answer, to that follower alone.
type Answered struct {
	Question int   `json:"question"`
	Choice   int   `json:"choice"`
	Ref      int64 `json:"ref,omitempty"`
}

func (*Lecture) Type() string          { return "lecture" }
func (*PresenterLecture) Type() string { return "lecture" }
func (*Question) Type() string         { return "question" }
func (*Questions) Type() string        { return "questions" }
func (*Answered) Type() string         { return "answered" }

// AppendJSON implements Frame.
func (f *Lecture) AppendJSON(b []byte) []byte { return appendTyped(b, "lecture", f) }

// AppendJSON implements Frame.
func (f *PresenterLecture) AppendJSON(b []byte) []byte { return appendTyped(b, "lecture", f) }

// AppendJSON implements Frame.
func (f *Question) AppendJSON(b []byte) []byte { return appendTyped(b, "question", f) }

// AppendJSON implements Frame.
func (f *Questions) AppendJSON(b []byte) []byte {
	if f.Items == nil {
		g := *f
		g.Items = []Prompt{} // the page reads an empty list, not null
		f = &g
	}
	return appendTyped(b, "questions", f)
}

// AppendJSON implements Frame.
func (f *Answered) AppendJSON(b []byte) []byte { return appendTyped(b, "answered", f) }

// appendTyped writes {"type":typ, then v's fields. v is a struct of plain fields, which
// encoding/json cannot fail on.
func appendTyped(b []byte, typ string, v any) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		panic("protocol: " + err.Error())
	}
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, '"')
	if len(j) > 2 {
		b = append(b, ',')
	}
	return append(b, j[1:]...)
}

// A lecture's followers get every frame of its stream stamped with its number, "lseq":
// {"lseq":n, then the frame's own fields. It is written once for every follower (and
// every server of a cluster), so the stamp is a byte prefix rather than a field of each
// type.

// Stamp is frame (a JSON object) stamped with number n. A compact follower frame
// (compact.go) is a JSON array, and its stamp is its first element: [n, then the rest.
func Stamp(n uint64, frame []byte) []byte {
	b := make([]byte, 0, len(frame)+24)
	if len(frame) > 0 && frame[0] == '[' {
		b = append(b, '[')
		b = strconv.AppendUint(b, n, 10)
		if len(frame) > 2 {
			b = append(b, ',')
		}
		return append(b, frame[1:]...)
	}
	b = append(b, `{"lseq":`...)
	b = strconv.AppendUint(b, n, 10)
	if len(frame) > 2 {
		b = append(b, ',')
	}
	return append(b, frame[1:]...)
}

// StampOf reads the number a stamped frame carries.
func StampOf(stamped []byte) (uint64, bool) {
	const p = `{"lseq":`
	var rest []byte
	switch {
	case len(stamped) > 1 && stamped[0] == '[':
		rest = stamped[1:]
	case len(stamped) > len(p) && string(stamped[:len(p)]) == p:
		rest = stamped[len(p):]
	default:
		return 0, false
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	v, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	return v, err == nil
}
