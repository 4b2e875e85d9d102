package lecture

import "github.com/teach-dist/playground/runtime/protocol"

// What the lecture makes of its run's frames, and its own frames. The run's frames come
// as values with their encoding: the lecture reads their fields (which frame, the step,
// quiet) and hands the followers the very bytes the presenter got, but for hello, which
// loses the session id.

// tap is the lecture as a subscriber of the presenter's session.
type tap struct{ l *Lecture }

// Deliver implements session.Subscriber. It runs on the session's goroutine, so the
// frames come in the run's order; it never blocks on a follower.
func (t *tap) Deliver(f protocol.Encoded) bool {
	t.l.onFrame(f)
	return true
}

// Close implements session.Subscriber: the session ended.
func (t *tap) Close() { t.l.requestEnd("the presenter's run ended") }

// followerHello is hello as followers get it: without the session id, which is the
// capability to drive the run.
func followerHello(h *protocol.Hello) []byte {
	v := *h
	v.Session = ""
	return v.AppendJSON(nil)
}

func (l *Lecture) onFrame(f protocol.Encoded) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	switch v := f.Frame.(type) {
	case *protocol.Hello:
		l.hello = followerHello(v)
		l.publish(v, l.hello)
		if l.q != nil && l.qState == "open" {
			l.closeQuestion("withdrawn", "the presenter started the run again")
		}
		return
	case *protocol.Snapshot:
		l.publish(v, f.JSON)
		l.stepping = false // a seek: V may step to the answer again
		l.setStep(&v.Clock)
		l.checkpoint(v, f.JSON)
		return
	case *protocol.Events:
		l.publish(v, f.JSON)
		l.setStep(&v.Clock)
	case *protocol.State:
		l.publish(v, f.JSON)
		l.setStep(&v.Clock)
	default:
		l.publish(f.Frame, f.JSON)
	}
	if !l.cpAsked && l.stream.LogLen() >= l.opts.Refresh {
		l.cpAsked = true
		l.wake()
	}
}

// setStep follows the step on screen. At the open question's reveal step the lecture
// checks and reveals; so it does when the run goes quiet before that step, which the
// run the answer was computed on does not do: it was changed, and the check withdraws.
func (l *Lecture) setStep(c *protocol.Clock) {
	l.step = c.Step
	if l.q == nil || l.qState != "open" || l.revealing {
		return
	}
	if c.Step >= l.q.Reveal || c.Quiet {
		l.revealing = true
		l.wake()
	}
}

// publish sends one frame to the followers of both protocols: its protocol-1 bytes v1,
// and its compact form (f is nil for the lecture's own frames, which go whole). Each is
// encoded once for all the followers of its stream. l.mu is held.
func (l *Lecture) publish(f protocol.Frame, v1 []byte) {
	l.stream.Publish(v1)
	if l.compact != nil {
		l.compact.Publish(l.compactor.Encode(f, v1))
	}
}

// checkpoint sets what a new follower starts from: the run (hello, snapshot) and the
// lecture (its state, the latest question). l.mu is held.
func (l *Lecture) checkpoint(snap *protocol.Snapshot, snapshot []byte) {
	frames := [][]byte{l.hello, snapshot, l.stateFrame()}
	if l.qFrame != nil {
		frames = append(frames, l.qFrame)
	}
	l.stream.Checkpoint(frames...)
	if l.compact != nil {
		// A joiner starts from the snapshot: should its view differ from the one the
		// compact frames so far built, everyone starts over from the snapshot.
		if !l.compactor.Same(snap) {
			l.compact.Publish(l.compactor.Encode(snap, snapshot))
		}
		whole := [][]byte{protocol.Whole(l.compactor.Table())} // the strings a joiner has not seen
		for _, f := range frames {
			whole = append(whole, protocol.Whole(f))
		}
		l.compact.Checkpoint(whole...)
	}
	l.cpAsked = false
}

// onCheckpoint runs on the session's goroutine with a fresh hello and snapshot.
func (l *Lecture) onCheckpoint(hello, snapshot protocol.Encoded) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended {
		return
	}
	if h, ok := hello.Frame.(*protocol.Hello); ok {
		l.hello = followerHello(h)
	}
	if s, ok := snapshot.Frame.(*protocol.Snapshot); ok {
		l.checkpoint(s, snapshot.JSON)
	}
}

func (l *Lecture) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// stateFrame is the lecture frame followers receive: live or ended, and the link.
func (l *Lecture) stateFrame() []byte {
	f := protocol.Lecture{Code: l.code, Display: DisplayCode(l.code), State: "live", Link: l.link}
	if l.ended {
		f.State, f.Reason = "ended", l.why
	}
	return f.AppendJSON(nil)
}

// presenterFrame adds what only the presenter sees.
func (l *Lecture) presenterFrame() []byte {
	f := protocol.PresenterLecture{Role: "presenter", Code: l.code, Display: DisplayCode(l.code), State: "live",
		Link: l.link, LinkStep: l.linkStep, Followers: l.followers}
	if l.ended {
		f.State, f.Reason = "ended", l.why
	}
	return f.AppendJSON(nil)
}

func (l *Lecture) questionFrame(presenter bool) []byte {
	q := l.q
	f := protocol.Question{ID: l.qid, State: l.qState, Kind: string(q.Kind), Text: q.Text,
		Choices: q.Choices, Step: q.Step, Answers: len(l.answers), Reason: l.qWhy}
	if presenter || l.qState == "revealed" {
		f.Tally = l.tally
	}
	if presenter {
		f.Reveal = &q.Reveal
	}
	if l.qState == "revealed" {
		f.Answer = &q.Answer
	}
	return f.AppendJSON(nil)
}
