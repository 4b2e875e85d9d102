package lecture

import (
	"bytes"
	"context"
	"reflect"
	"time"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/sim"
)

// Asking the followers: the questions the presenter may ask at the step shown, the one
// asked, the answers, and the reveal when the run reaches the step that shows it.

// Questions makes the questions that can be asked at the step on screen, keeps them
// for Ask, and returns them.
func (l *Lecture) Questions(ctx context.Context) ([]Question, int, error) {
	rec, err := l.sess.Recipe(ctx)
	if err != nil {
		return nil, 0, err
	}
	qs, err := Generate(rec)
	if err != nil {
		return nil, rec.Step, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.candidates, l.candStep, l.cand = qs, rec.Step, rec
	return qs, rec.Step, nil
}

// QuestionsFrame makes the questions for the step shown (Questions) and is the answer
// to the presenter's questions op: the list, or why there is none. ref is the op's.
func (l *Lecture) QuestionsFrame(ctx context.Context, ref int64) []byte {
	qs, step, err := l.Questions(ctx)
	f := protocol.Questions{Step: step, Items: make([]protocol.Prompt, len(qs)), Ref: ref}
	for i, q := range qs {
		f.Items[i] = protocol.Prompt{Kind: string(q.Kind), Text: q.Text, Choices: q.Choices, Step: q.Step}
	}
	switch {
	case err != nil:
		f.Error = err.Error()
	case len(qs) == 0:
		f.Error = "nothing to predict from this step: what happens next has no two plausible answers yet; step on and ask again"
	}
	return f.AppendJSON(nil)
}

// Ask puts candidate i of the latest Questions to the followers.
func (l *Lecture) Ask(i int) (Question, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return Question{}, ErrEnded
	}
	if l.q != nil && l.qState == "open" {
		return Question{}, ErrOpen
	}
	if i < 0 || i >= len(l.candidates) {
		return Question{}, ErrNoCandidate
	}
	if l.candStep != l.step {
		return Question{}, ErrStale
	}
	q := l.candidates[i]
	l.qid++
	l.q, l.qState, l.qWhy, l.qRec = &q, "open", "", l.cand
	l.answers = make(map[string]int)
	l.answersBy = make(map[string]int)
	l.tally = make([]int, len(q.Choices))
	l.revealing, l.stepping = false, false
	l.candidates = nil
	l.publishQuestion()
	return q, nil
}

// publishQuestion sends the question's state to followers (in the stream) and to the
// presenters (with the tally). l.mu is held.
func (l *Lecture) publishQuestion() {
	l.qFrame = l.questionFrame(false)
	l.publish(nil, l.qFrame)
	l.toPresenters(l.questionFrame(true))
	l.tallyDirty = false
}

// closeQuestion reveals or withdraws the open question. l.mu is held.
func (l *Lecture) closeQuestion(state, why string) {
	l.qState, l.qWhy = state, why
	l.publishQuestion()
}

// Withdraw takes the open question back.
func (l *Lecture) Withdraw(why string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" {
		return ErrNoQuestion
	}
	l.closeQuestion("withdrawn", why)
	return nil
}

// RunChanged tells the lecture that the presenter changed the run's future (an
// intervention): an open question's answer no longer holds.
func (l *Lecture) RunChanged() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q != nil && l.qState == "open" {
		l.closeQuestion("withdrawn", "the presenter changed the run, so the answer changed too")
	}
}

// Answer records follower fid's answer to question id, for client (an IPv4 address
// or an IPv6 /64). A follower answers once; a client gives at most its share of the
// answers to one question (places.go), and a refused answer costs it nothing.
func (l *Lecture) Answer(client, fid string, id, choice int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" || id != l.qid {
		return ErrNoQuestion
	}
	if choice < 0 || choice >= len(l.q.Choices) {
		return ErrBadChoice
	}
	if _, ok := l.answers[fid]; ok {
		return ErrAnswered
	}
	if l.answersBy[client] >= l.opts.FollowersPerClient {
		return ErrAnswerShare
	}
	if len(l.answers) >= 4*l.opts.MaxFollowers {
		return ErrCrowded // a bound on memory against many clients reconnecting without their cookies
	}
	l.answers[fid] = choice
	l.answersBy[client]++
	l.tally[choice]++
	if !l.tallyDirty {
		l.tallyDirty = true
		l.wake()
	}
	return nil
}

// Answered returns follower fid's answer to the current question, if any.
func (l *Lecture) Answered(fid string) (id, choice int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil {
		return 0, 0, false
	}
	c, ok := l.answers[fid]
	return l.qid, c, ok
}

// RevealTarget returns the open question's reveal step and the step shown: stepping
// the difference reveals it. It answers once per question, so that a second press
// while the run steps there does not step past the answer.
func (l *Lecture) RevealTarget() (reveal, step int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.q == nil || l.qState != "open" {
		return 0, 0, ErrNoQuestion
	}
	if l.stepping {
		return 0, 0, ErrStepping
	}
	l.stepping = true
	return l.q.Reveal, l.step, nil
}

// reveal shows the open question's answer now that the run has reached its step,
// unless the run the presenter made since is not the one the answer was computed on.
func (l *Lecture) reveal() {
	l.mu.Lock()
	q, id, from := l.q, l.qid, l.qRec
	open := q != nil && l.qState == "open"
	l.mu.Unlock()
	if !open {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	rec, err := l.sess.Recipe(ctx)
	cancel()
	same := err == nil && bytes.Equal(rec.Setup.Scenario, from.Setup.Scenario) &&
		sameUpTo(rec.Interventions, from.Interventions, q.Reveal)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revealing = false
	if l.q == nil || l.qid != id || l.qState != "open" {
		return
	}
	switch {
	case !same:
		l.closeQuestion("withdrawn", "the presenter changed the run, so the answer changed too")
	case l.step >= q.Reveal:
		l.closeQuestion("revealed", "")
	}
	// Otherwise the presenter stepped back meanwhile: the next frame at the step asks again.
}

// sameUpTo reports whether two intervention lists agree on every intervention that
// can affect the run up to step.
func sameUpTo(a, b []sim.Intervention, step int) bool {
	cut := func(x []sim.Intervention) []sim.Intervention {
		n := 0
		for n < len(x) && x[n].Step <= step {
			n++
		}
		return x[:n]
	}
	a, b = cut(a), cut(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}
