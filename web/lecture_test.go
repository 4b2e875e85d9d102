package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/scenarios"
)

// lecFrame is what lecture tests read of a frame.
type lecFrame struct {
	Seq       uint64 `json:"lseq"`
	Type      string
	Code      string
	Error     string
	Session   string
	Step      int
	State     string
	Role      string
	Link      string
	Followers int
	Reason    string
	// question
	ID      int
	Kind    string
	Text    string
	Choices []string
	Answer  *int
	Reveal  *int
	Tally   []int
	Answers int
	// questions
	Items []struct {
		Kind    string
		Text    string
		Choices []string
		Step    int
	}
	// answered
	Question int
	Choice   int
	Batches  []struct{ Events []json.RawMessage }
	raw      string
}

func (c *wsClient) lnext(types ...string) lecFrame {
	c.t.Helper()
	f := c.next(types...)
	var lf lecFrame
	if err := json.Unmarshal([]byte(f.raw), &lf); err != nil {
		c.t.Fatalf("frame %s: %v", f.raw, err)
	}
	lf.raw = f.raw
	return lf
}

// readAny returns the next frame, whatever its type.
func (c *wsClient) readAny() lecFrame {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var lf lecFrame
	if err := json.Unmarshal(b, &lf); err != nil {
		c.t.Fatalf("frame is not JSON: %s", b)
	}
	lf.raw = string(b)
	return lf
}

func dialPath(t *testing.T, ts *httptest.Server, path string, jar http.CookieJar) *wsClient {
	t.Helper()
	h := http.Header{"Origin": {ts.URL}}
	if jar != nil {
		u, _ := url.Parse(ts.URL)
		for _, c := range jar.Cookies(u) {
			h.Add("Cookie", c.Name+"="+c.Value)
		}
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+path, h)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", path, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsClient{t: t, conn: conn}
}

// noRedirect is a client that shows redirects instead of following them.
func noRedirect(t *testing.T) *http.Client {
	t.Helper()
	c := browser(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

type lectureRig struct {
	srv       *Server
	ts        *httptest.Server
	session   string
	token     string
	code      string
	presenter *wsClient
	followers int // as the presenter was last told
}

// startLecture opens a run at path, starts a lecture from it and connects its presenter.
func startLecture(t *testing.T, opts Options, path string) *lectureRig {
	t.Helper()
	srv, ts := newTestServer(t, opts)
	br := noRedirect(t)
	id := sessionOf(t, get(t, br, ts.URL+path))
	resp, err := br.PostForm(ts.URL+"/lecture", url.Values{"session": {id}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/lecture/present/") {
		t.Fatalf("POST /lecture: %d %q", resp.StatusCode, loc)
	}
	rig := &lectureRig{srv: srv, ts: ts, session: id, token: strings.TrimPrefix(loc, "/lecture/present/")}
	rig.presenter = dialPath(t, ts, "/ws/present/"+rig.token, nil)
	rig.presenter.next("hello")
	rig.presenter.next("snapshot")
	lf := rig.presenter.lnext("lecture")
	if lf.Role != "presenter" || len(lf.Code) != lecture.CodeLen {
		t.Fatalf("presenter's lecture frame: %s", lf.raw)
	}
	rig.code = lf.Code
	return rig
}

func (rig *lectureRig) follow(t *testing.T, after uint64) *wsClient {
	t.Helper()
	path := "/ws/lecture/" + rig.code
	if after > 0 {
		path += fmt.Sprintf("?after=%d", after)
	}
	return dialPath(t, rig.ts, path, nil)
}

// pnext reads the presenter's next frame of these types; the lecture frames it passes
// on the way still count for the follower figure.
func (rig *lectureRig) pnext(t *testing.T, types ...string) lecFrame {
	t.Helper()
	for {
		f := rig.presenter.readAny()
		if f.Type == "lecture" {
			rig.followers = f.Followers
		}
		for _, ty := range types {
			if f.Type == ty {
				return f
			}
		}
	}
}

// waitFollowers waits until the presenter is told there are n followers.
func (rig *lectureRig) waitFollowers(t *testing.T, n int) {
	t.Helper()
	for rig.followers != n {
		rig.pnext(t, "lecture")
	}
}

// stream is what one follower received: every frame, checked for order on the way.
type stream struct {
	t      *testing.T
	c      *wsClient
	frames []lecFrame
	last   uint64
}

func newStream(t *testing.T, c *wsClient) *stream { return &stream{t: t, c: c} }

// catchUp reads the frames that bring a new follower up to date: a checkpoint (hello,
// snapshot, lecture state, the latest question) all stamped with one number, or the
// frames after the number it resumed from.
func (s *stream) catchUp() lecFrame {
	s.t.Helper()
	f := s.c.readAny()
	if f.Type != "hello" {
		s.t.Fatalf("a new follower's first frame: %s", f.raw)
	}
	if f.Session != "" {
		s.t.Fatalf("a follower was told the presenter's session id: %s", f.raw)
	}
	snap := s.c.readAny()
	if snap.Type != "snapshot" || snap.Seq != f.Seq {
		s.t.Fatalf("after hello %d: %s", f.Seq, snap.raw)
	}
	st := s.c.readAny()
	if st.Type != "lecture" || st.Seq != f.Seq {
		s.t.Fatalf("after the snapshot: %s", st.raw)
	}
	s.last = f.Seq
	s.frames = append(s.frames, f, snap, st)
	return snap
}

// take reads n frames that follow the last one, each numbered exactly one more.
func (s *stream) take(n int) []lecFrame {
	s.t.Helper()
	var out []lecFrame
	for len(out) < n {
		f := s.c.readAny()
		if f.Seq == 0 {
			continue // not part of the stream (an answer's acknowledgement)
		}
		if f.Seq != s.last+1 {
			s.t.Fatalf("frame %d after %d (a gap or a duplicate): %s", f.Seq, s.last, f.raw)
		}
		s.last = f.Seq
		out = append(out, f)
	}
	s.frames = append(s.frames, out...)
	return out
}

// drive sends the presenter's commands; each yields exactly one frame for followers.
// It returns the presenter's last one.
func (rig *lectureRig) drive(t *testing.T, cmds ...string) lecFrame {
	t.Helper()
	var f lecFrame
	for _, c := range cmds {
		rig.presenter.send(c)
		f = rig.pnext(t, "events", "state", "snapshot")
	}
	return f
}

func steps(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = `{"type":"step"}`
	}
	return out
}

// Forty students follow one run: each sees the presenter's frames, the same bytes in
// the same order, numbered without a gap.
func TestLectureFollowersSeeThePresentersRun(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/token-ring?n=4")
	const n = 40
	followers := make([]*stream, n)
	for i := range followers {
		followers[i] = newStream(t, rig.follow(t, 0))
		if snap := followers[i].catchUp(); snap.Step != 0 {
			t.Fatalf("follower %d starts at step %d", i, snap.Step)
		}
	}
	rig.waitFollowers(t, n)
	cmds := append([]string{`{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":1}`}, steps(30)...)
	last := rig.drive(t, cmds...)
	var want []string
	for i, f := range followers {
		got := f.take(len(cmds))
		if i == 0 {
			for _, x := range got {
				want = append(want, x.raw)
			}
			if got[len(got)-1].Step != last.Step || last.Step != 30 {
				t.Fatalf("the last frame is at step %d, the presenter's at %d, want 30", got[len(got)-1].Step, last.Step)
			}
			continue
		}
		for k, x := range got {
			if x.raw != want[k] {
				t.Fatalf("follower %d frame %d differs:\n%s\n%s", i, k, x.raw, want[k])
			}
		}
	}
	if !strings.Contains(want[2], `"type":"rule"`) {
		t.Fatalf("a step's frame carries no rule: %s", want[2])
	}
}

// A late joiner and a follower that lost its connection catch up at once: the joiner
// from a recent checkpoint, the other from exactly the frame after the last it saw.
func TestLectureLateJoinAndReconnectWithoutGapOrDuplicate(t *testing.T) {
	rig := startLecture(t, Options{Lecture: lecture.Options{Refresh: 24}}, "/play/token-ring?n=5")
	early := newStream(t, rig.follow(t, 0))
	early.catchUp()
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	rig.drive(t, steps(10)...)
	early.take(12)

	// The connection drops; meanwhile the run goes on.
	early.c.conn.Close()
	rig.drive(t, steps(5)...)
	back := &stream{t: t, c: rig.follow(t, early.last), last: early.last}
	got := back.take(5) // from exactly the next frame: a gap or a repeat fails here
	if got[0].Type != "events" {
		t.Fatalf("a resumed follower got %s first", got[0].raw)
	}

	// Forty frames later the checkpoint has been refreshed (every 24 frames): a late
	// joiner replays only the frames since then, and one that resumes from too far
	// back starts from it too.
	rig.drive(t, steps(40)...)
	back.take(40)
	// The checkpoint is refreshed off the presenter's path: wait until it has been.
	l, ok := rig.srv.lectures.ByCode(rig.code)
	if !ok {
		t.Fatal("the lecture is gone")
	}
	testwait.For(t, "the lecture's checkpoint catching up with the run", func() bool { return l.CatchUpLen() < 24 })
	late := newStream(t, rig.follow(t, 0))
	snap := late.catchUp()
	behind := back.last - late.last
	if snap.Step < 20 || behind > 30 {
		t.Fatalf("a late joiner starts at step %d, %d frames behind (checkpoint every 24 frames)", snap.Step, behind)
	}
	late.take(int(behind))
	old := newStream(t, rig.follow(t, 3))
	old.catchUp()
	old.take(int(back.last - old.last))

	rig.drive(t, steps(3)...)
	a, b, c := back.take(3), late.take(3), old.take(3)
	for i := range a {
		if a[i].raw != b[i].raw || a[i].raw != c[i].raw {
			t.Fatalf("after catching up, followers differ at frame %d:\n%s\n%s\n%s", i, a[i].raw, b[i].raw, c[i].raw)
		}
	}
}

// A follower that stops reading is dropped when its queue fills; the others receive
// every frame, and the presenter's count goes down by one.
func TestLectureSlowFollowerIsDroppedOthersCarryOn(t *testing.T) {
	rig := startLecture(t, Options{SendQueue: 4, WriteWait: 300 * time.Millisecond, Lecture: lecture.Options{Refresh: 4}},
		"/play/ricart-agrawala?n=128")
	slow := rig.follow(t, 0)
	fast := newStream(t, rig.follow(t, 0))
	fast.catchUp()
	rig.waitFollowers(t, 2)
	// Each seek sends every follower a snapshot of 128 processes (about 17 KB): a
	// thousand overflow any socket buffer of a follower that never reads.
	for range 1000 {
		rig.drive(t, `{"type":"seek","step":0}`)
		fast.take(1)
	}
	rig.waitFollowers(t, 1)
	slow.ended()
	// Snapshots replace each other in its queue, so it is dropped at the write
	// deadline rather than by a full queue: counted all the same.
	if m := get(t, browser(t), rig.ts.URL+"/metrics"); !strings.Contains(m.body, "\nplayground_slow_clients_dropped_total 1\n") {
		t.Fatalf("the dropped follower is not counted:\n%s", m.body)
	}
	rig.drive(t, `{"type":"act","do":"request","node":0}`)
	if f := fast.take(1)[0]; f.Type != "events" {
		t.Fatalf("after the drop: %s", f.raw)
	}
}

// A follower cannot drive: every command of the playground is refused with a reason,
// and the run does not move.
func TestLectureFollowerCannotDrive(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=3")
	f := newStream(t, rig.follow(t, 0))
	f.catchUp()
	for _, cmd := range []string{
		`{"type":"step","ref":1}`, `{"type":"play","ref":2}`, `{"type":"seek","step":0,"ref":3}`,
		`{"type":"act","do":"request","node":0,"ref":4}`, `{"type":"reset","ref":5}`, `{"type":"speed","speed":2,"ref":6}`,
	} {
		f.c.send(cmd)
		e := f.c.lnext("error")
		if !strings.Contains(e.raw, `"code":"read-only"`) || !strings.Contains(e.Error, "only the presenter") {
			t.Fatalf("%s: %s", cmd, e.raw)
		}
	}
	f.c.send(`{"type":"lecture","op":"end"}`)
	if e := f.c.lnext("error"); !strings.Contains(e.raw, `"code":"bad-field"`) {
		t.Fatalf("a follower ending the lecture: %s", e.raw)
	}
	f.c.send(`{"type":"lecture","op":"answer","question":1,"choice":0,"ref":9}`)
	if e := f.c.lnext("error"); !strings.Contains(e.Error, "no open question") {
		t.Fatalf("an answer without a question: %s", e.raw)
	}
	// The presenter's run did not move: the next step is step 1.
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"step"}`)
	if got := f.take(2); got[1].Step != 1 {
		t.Fatalf("after refused commands the run is at step %d: %s", got[1].Step, got[1].raw)
	}
}

// A forged presenter token gets a clear refusal, on the page and on the socket; the
// lecture goes on.
func TestLectureForgedPresenterToken(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/bully")
	forged := strings.ToUpper(rig.token[:1]) + rig.token[1:]
	if forged == rig.token {
		forged = "x" + rig.token[1:]
	}
	p := get(t, browser(t), rig.ts.URL+"/lecture/present/"+forged)
	if p.status != http.StatusForbidden || !strings.Contains(p.body, "presenter link is not valid") {
		t.Fatalf("forged token page: %d", p.status)
	}
	c := dialPath(t, rig.ts, "/ws/present/"+forged, nil)
	if e := c.lnext("error"); !strings.Contains(e.raw, `"code":"not-presenter"`) {
		t.Fatalf("forged token socket: %s", e.raw)
	}
	c.ended()
	rig.drive(t, `{"type":"act","do":"elect","node":0}`)
}

// A wrong code gets the join form again with the reason; the socket says so too.
func TestLectureWrongCode(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/bully")
	br := noRedirect(t)
	cases := []struct {
		path   string
		status int
		says   string
	}{
		{"/join?code=" + url.QueryEscape("not a code"), http.StatusNotFound, "is not a lecture code"},
		{"/join?code=AAAAAA", http.StatusNotFound, "No lecture has the code AAA AAA"},
		{"/l/AAAAAA", http.StatusNotFound, "No lecture has the code"},
		{"/l/0000", http.StatusNotFound, "is not a lecture code"},
		{"/join", http.StatusOK, "Lecture code"},
	}
	for _, c := range cases {
		p := get(t, br, rig.ts.URL+c.path)
		if p.status != c.status || !strings.Contains(p.body, c.says) {
			t.Errorf("%s: %d, want %d with %q", c.path, p.status, c.status, c.says)
		}
	}
	typed := strings.ToLower(rig.code[:3]) + "-" + rig.code[3:]
	resp, err := br.Get(rig.ts.URL + "/join?code=" + url.QueryEscape(typed))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusSeeOther || loc != "/l/"+rig.code {
		t.Fatalf("joining with %q: %d %q", typed, resp.StatusCode, loc)
	}
	c := dialPath(t, rig.ts, "/ws/lecture/AAAAAA", nil)
	if e := c.lnext("error"); !strings.Contains(e.raw, `"code":"no-lecture"`) {
		t.Fatalf("wrong code socket: %s", e.raw)
	}
	c.ended()
}

// Ending a lecture tells every follower, with the link to the run; who comes later
// reads that it ended and gets the link too.
func TestLectureEnded(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=3")
	f := newStream(t, rig.follow(t, 0))
	f.catchUp()
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"step"}`, `{"type":"step"}`)
	f.take(3)
	rig.presenter.send(`{"type":"lecture","op":"end"}`)
	end := f.take(1)[0]
	if end.Type != "lecture" || end.State != "ended" || !strings.HasPrefix(end.Link, "/r/") {
		t.Fatalf("the end: %s", end.raw)
	}
	link, err := scenarios.DecodeLink(strings.TrimPrefix(end.Link, "/r/"))
	if err != nil || link.Step != 2 || len(link.Interventions) != 1 {
		t.Fatalf("the link %s: %+v, %v", end.Link, link, err)
	}
	if e := f.c.lnext("error"); !strings.Contains(e.raw, `"code":"gone"`) {
		t.Fatalf("after the end: %s", e.raw)
	}
	f.c.ended()
	for _, path := range []string{"/l/" + rig.code, "/lecture/present/" + rig.token} {
		p := get(t, browser(t), rig.ts.URL+path)
		if p.status != http.StatusGone || !strings.Contains(p.body, "has ended") || !strings.Contains(p.body, end.Link) {
			t.Fatalf("%s after the end: %d", path, p.status)
		}
	}
	late := dialPath(t, rig.ts, "/ws/lecture/"+rig.code, nil)
	if s := late.lnext("lecture"); s.State != "ended" || s.Link != end.Link {
		t.Fatalf("a follower after the end: %s", s.raw)
	}
	late.lnext("error")
	late.ended()
}

// A lecture whose presenter stays away ends by itself.
func TestLectureEndsWhenIdle(t *testing.T) {
	rig := startLecture(t, Options{Lecture: lecture.Options{Idle: 300 * time.Millisecond}}, "/play/bully")
	f := newStream(t, rig.follow(t, 0))
	f.catchUp()
	rig.presenter.conn.Close()
	end := f.take(1)[0]
	if end.State != "ended" || !strings.Contains(end.Reason, "away") {
		t.Fatalf("idle end: %s", end.raw)
	}
}

// Fork: the lecture's run at the follower's step, as a share link.
func TestLectureForkOpensTheRunAtTheStep(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=3")
	rig.drive(t, `{"type":"act","do":"request","node":1}`)
	rig.drive(t, steps(4)...)
	resp, err := noRedirect(t).Get(rig.ts.URL + "/l/" + rig.code + "/fork?step=3")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	link, err := scenarios.DecodeLink(strings.TrimPrefix(loc, "/r/"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || link.Step != 3 || len(link.Interventions) != 1 {
		t.Fatalf("fork: %d %q %+v %v", resp.StatusCode, loc, link, err)
	}
	qr := get(t, browser(t), rig.ts.URL+"/l/"+rig.code+"/qr.svg")
	if qr.status != http.StatusOK || qr.header.Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(qr.body, "<svg") {
		t.Fatalf("qr: %d %s", qr.status, qr.header.Get("Content-Type"))
	}
}

// Questions over the sockets: the presenter gets the list, asks one; each follower
// answers once; the presenter sees the tally; stepping to the answer reveals it to
// everyone, and it is what the run did.
func TestLectureQuestionAnsweredTalliedRevealed(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	const n = 6
	var fs []*stream
	var jars []http.CookieJar
	for range n {
		br := browser(t)
		if p := get(t, br, rig.ts.URL+"/l/"+rig.code); p.status != http.StatusOK || !strings.Contains(p.body, `data-ws="/ws/lecture/`+rig.code+`?proto=2"`) {
			t.Fatalf("follower page: %d", p.status)
		}
		jars = append(jars, br.Jar)
		s := newStream(t, dialPath(t, rig.ts, "/ws/lecture/"+rig.code, br.Jar))
		s.catchUp()
		fs = append(fs, s)
	}
	for _, s := range fs {
		s.take(2)
	}
	rig.presenter.send(`{"type":"lecture","op":"questions"}`)
	qs := rig.pnext(t, "questions")
	k := -1
	for i, it := range qs.Items {
		if it.Kind == string(lecture.NextRule) {
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("no next-rule question: %s", qs.raw)
	}
	rig.presenter.send(fmt.Sprintf(`{"type":"lecture","op":"ask","question":%d}`, k))
	asked := rig.pnext(t, "question")
	if asked.State != "open" || asked.Reveal == nil || asked.Answer != nil {
		t.Fatalf("asked: %s", asked.raw)
	}
	for i, s := range fs {
		q := s.take(1)[0]
		if q.Type != "question" || q.State != "open" || q.Answer != nil || q.Tally != nil || q.Text != asked.Text {
			t.Fatalf("follower sees %s", q.raw)
		}
		s.c.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":%d}`, q.ID, i%2))
		if a := s.c.lnext("answered"); a.Choice != i%2 {
			t.Fatalf("answer: %s", a.raw)
		}
		s.c.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":1}`, q.ID))
		if e := s.c.lnext("error"); !strings.Contains(e.Error, "already answered") {
			t.Fatalf("a second answer: %s", e.raw)
		}
	}
	// Coming back with the same cookie, a follower is reminded of its answer.
	again := dialPath(t, rig.ts, "/ws/lecture/"+rig.code, jars[1])
	if a := again.lnext("answered"); a.Question != asked.ID || a.Choice != 1 {
		t.Fatalf("reminder: %s", a.raw)
	}
	for {
		q := rig.pnext(t, "question")
		if q.Answers == n {
			if q.Tally[0] != n/2 || q.Tally[1] != n/2 {
				t.Fatalf("tally: %s", q.raw)
			}
			break
		}
	}
	// Reveal by stepping: the run goes to the step that shows the answer; the events
	// on the way say which rule fired first at that process.
	rig.presenter.send(`{"type":"lecture","op":"reveal"}`)
	var seen []json.RawMessage
	var revealed lecFrame
	for revealed.Type == "" {
		f := fs[0].take(1)[0]
		switch f.Type {
		case "events":
			for _, b := range f.Batches {
				seen = append(seen, b.Events...)
			}
		case "question":
			revealed = f
		}
	}
	for _, s := range fs[1:] {
		for {
			if f := s.take(1)[0]; f.Type == "question" {
				if f.raw != revealed.raw {
					t.Fatalf("followers see different reveals:\n%s\n%s", f.raw, revealed.raw)
				}
				break
			}
		}
	}
	if revealed.State != "revealed" || revealed.Answer == nil || len(revealed.Tally) != len(revealed.Choices) {
		t.Fatalf("reveal: %s", revealed.raw)
	}
	node := strings.TrimPrefix(strings.Fields(revealed.Text)[3], "P")
	first := ""
	for _, ev := range seen {
		var e struct {
			Type string
			Node int
			Rule string
		}
		_ = json.Unmarshal(ev, &e)
		if e.Type == "rule" && fmt.Sprint(e.Node) == node {
			first = e.Rule
			break
		}
	}
	if got := revealed.Choices[*revealed.Answer]; got != first {
		t.Fatalf("the revealed answer is %s, the run fired %s first at P%s (%s)", got, first, node, revealed.Text)
	}
}

// Many students joining and leaving at once: every follower's handler ends with the
// server, nothing leaks (goleak in TestMain).
func TestLectureManyFollowersConcurrently(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	var wg sync.WaitGroup
	const n = 100
	errs := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := http.Header{"Origin": {rig.ts.URL}}
			conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(rig.ts.URL, "http")+"/ws/lecture/"+rig.code, h)
			if err != nil {
				errs <- err.Error()
				return
			}
			defer conn.Close()
			_ = conn.SetReadDeadline(time.Now().Add(testwait.Limit))
			for {
				_, b, err := conn.ReadMessage()
				if err != nil {
					errs <- err.Error()
					return
				}
				if strings.Contains(string(b), `"type":"lecture"`) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
