package natsbroker

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web"
)

// Two playground servers behind one NATS, as docs/deploy.md deploys them: the lecture's
// run lives on A (the presenter's), followers connect to A or B.

type node struct {
	srv *web.Server
	ts  *httptest.Server
}

func newNode(t *testing.T, ns *natsServer, opts web.Options) *node {
	t.Helper()
	opts.Broker = connect(t, ns) // closed after the server: cleanups run last first
	n := &node{srv: web.New(opts)}
	n.ts = httptest.NewServer(n.srv)
	t.Cleanup(func() {
		n.srv.Close() // WebSocket handlers first: httptest does not track hijacked connections
		n.ts.Close()
	})
	return n
}

type page struct {
	status int
	body   string
	loc    string
}

// get fetches a page without following redirects.
func get(t *testing.T, u string) page {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{resp.StatusCode, string(b), resp.Header.Get("Location")}
}

// wsFrame is what these tests read of a frame.
type wsFrame struct {
	Seq       uint64 `json:"lseq"`
	Type      string
	Code      string
	Error     string
	Step      int
	State     string
	Role      string
	Link      string
	Followers int
	ID        int
	Items     []struct{ Kind, Text string }
	Tally     []int
	Answers   int
	Choice    int
	raw       string
}

type wsc struct {
	t    *testing.T
	conn *websocket.Conn
}

func dial(t *testing.T, n *node, path string) *wsc {
	t.Helper()
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(n.ts.URL, "http")+path, http.Header{"Origin": {n.ts.URL}})
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", path, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return &wsc{t: t, conn: conn}
}

func (c *wsc) send(frame string) {
	c.t.Helper()
	_ = c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if err := c.conn.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next frame; the deadline only turns a hang into a failure.
func (c *wsc) read() wsFrame {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var f wsFrame
	if err := json.Unmarshal(b, &f); err != nil {
		c.t.Fatalf("frame is not JSON: %s", b)
	}
	f.raw = string(b)
	return f
}

func (c *wsc) next(types ...string) wsFrame {
	c.t.Helper()
	for {
		f := c.read()
		for _, ty := range types {
			if f.Type == ty {
				return f
			}
		}
	}
}

// closed reads until the server closes the socket and returns the close code.
func (c *wsc) closed() int {
	c.t.Helper()
	for {
		_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
		_, _, err := c.conn.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			c.t.Fatalf("the socket ended without a close frame: %v", err)
		}
	}
}

type presenter struct {
	*wsc
	code      string
	followers int // as last told
}

var sessionRE = regexp.MustCompile(`data-session="([^"]+)"`)

// startLecture opens a run on n, starts a lecture from it and connects its presenter.
func startLecture(t *testing.T, n *node, path string) *presenter {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	br := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := br.Get(n.ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := sessionRE.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no session in %s (%d)", path, resp.StatusCode)
	}
	resp, err = br.PostForm(n.ts.URL+"/lecture", url.Values{"session": {string(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/lecture/present/") {
		t.Fatalf("POST /lecture: %d %q", resp.StatusCode, loc)
	}
	p := &presenter{wsc: dial(t, n, "/ws/present/"+strings.TrimPrefix(loc, "/lecture/present/"))}
	f := p.next("lecture")
	if f.Role != "presenter" || len(f.Code) != lecture.CodeLen {
		t.Fatalf("the presenter's lecture frame: %s", f.raw)
	}
	p.code = f.Code
	return p
}

// pnext reads the presenter's next frame of these types, noting the follower count.
func (p *presenter) pnext(types ...string) wsFrame {
	p.t.Helper()
	for {
		f := p.read()
		if f.Type == "lecture" {
			p.followers = f.Followers
		}
		for _, ty := range types {
			if f.Type == ty {
				return f
			}
		}
	}
}

// steps steps the run n times, each a frame for the followers.
func (p *presenter) steps(n int) {
	p.t.Helper()
	for range n {
		p.send(`{"type":"step"}`)
		p.pnext("events")
	}
}

// follower is one student's socket and every stamped frame it had, checked for order.
type follower struct {
	*wsc
	frames []wsFrame
	last   uint64
}

func join(t *testing.T, n *node, code string, after uint64) *follower {
	t.Helper()
	path := "/ws/lecture/" + code
	if after > 0 {
		path += fmt.Sprintf("?after=%d", after)
	}
	return &follower{wsc: dial(t, n, path), last: after}
}

// catchUp reads a checkpoint: hello, snapshot and the lecture's state, one number.
func (f *follower) catchUp() {
	f.t.Helper()
	h := f.read()
	s := f.read()
	l := f.read()
	if h.Type != "hello" || s.Type != "snapshot" || l.Type != "lecture" || s.Seq != h.Seq || l.Seq != h.Seq {
		f.t.Fatalf("a checkpoint:\n%s\n%s\n%s", h.raw, s.raw, l.raw)
	}
	f.frames = append(f.frames, h, s, l)
	f.last = h.Seq
}

// take reads n stamped frames, each numbered one more than the last: a gap or a
// repeat fails here. Frames without a number (acknowledgements) are passed over.
func (f *follower) take(n int) []wsFrame {
	f.t.Helper()
	var out []wsFrame
	for len(out) < n {
		x := f.read()
		if x.Seq == 0 {
			continue
		}
		if x.Seq != f.last+1 {
			f.t.Fatalf("frame %d after %d (a gap or a repeat): %s", x.Seq, f.last, x.raw)
		}
		f.last = x.Seq
		out = append(out, x)
	}
	f.frames = append(f.frames, out...)
	return out
}

func sameFrames(t *testing.T, what string, a, b []wsFrame) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d frames and %d", what, len(a), len(b))
	}
	for i := range a {
		if a[i].raw != b[i].raw {
			t.Fatalf("%s: frame %d differs:\n%s\n%s", what, i, a[i].raw, b[i].raw)
		}
	}
}

// The whole story on two servers: followers on both see the same frames in order, one
// on B resumes after a dropped connection and another joins late, answers from B reach
// the presenter's tally on A, forks and pages work on B, and the end on A reaches B.
func TestTwoServersOneLecture(t *testing.T) {
	ns := startNATS(t)
	opts := web.Options{Lecture: lecture.Options{Refresh: 16}}
	a, b := newNode(t, ns, opts), newNode(t, ns, opts)
	p := startLecture(t, a, "/play/token-ring?n=4")
	code := p.code

	// B knows the code: the join form, the follower's page, the QR code.
	if j := get(t, b.ts.URL+"/join?code="+url.QueryEscape(strings.ToLower(lecture.DisplayCode(code)))); j.status != http.StatusSeeOther || j.loc != "/l/"+code {
		t.Fatalf("join on B: %d %q", j.status, j.loc)
	}
	if pg := get(t, b.ts.URL+"/l/"+code); pg.status != http.StatusOK || !strings.Contains(pg.body, `data-ws="/ws/lecture/`+code+`?proto=2"`) {
		t.Fatalf("the follower's page on B: %d", pg.status)
	}
	if qr := get(t, b.ts.URL+"/l/"+code+"/qr.svg"); qr.status != http.StatusOK || !strings.Contains(qr.body, "<svg") {
		t.Fatalf("the QR code on B: %d", qr.status)
	}
	if no := get(t, b.ts.URL+"/l/AAAAAA"); no.status != http.StatusNotFound {
		t.Fatalf("an unknown code on B: %d", no.status)
	}

	onA, onB := join(t, a, code, 0), join(t, b, code, 0)
	onA.catchUp()
	onB.catchUp()
	for p.followers != 2 { // B's follower counts on A
		p.pnext("lecture")
	}
	p.steps(20)
	sameFrames(t, "followers on A and B", onA.take(20), onB.take(20))

	// B's only follower loses its connection while the run goes on, and comes back.
	onB.conn.Close()
	p.steps(5)
	back := join(t, b, code, onB.last)
	got := back.take(5)
	if got[0].Type != "events" {
		t.Fatalf("a follower resumed on B with %s", got[0].raw)
	}
	sameFrames(t, "resumed on B", onA.take(5), got)

	// Late joiners on A and B start from the same checkpoint, one refreshed (every 16
	// frames) on A and carried to B; they may pass each other with a refresh, so try
	// again until both had the same one.
	var la, lb *follower
	testwait.For(t, "late joiners on A and B starting from the same checkpoint", func() bool {
		la, lb = join(t, a, code, 0), join(t, b, code, 0)
		la.catchUp()
		lb.catchUp()
		la.take(int(onA.last - la.last))
		lb.take(int(onA.last - lb.last))
		if la.frames[0].Seq < 16 {
			t.Fatalf("a late joiner on A starts at %d: the checkpoint was not refreshed", la.frames[0].Seq)
		}
		la.conn.Close()
		lb.conn.Close()
		return la.frames[0].Seq == lb.frames[0].Seq
	})
	sameFrames(t, "late joiners on A and B", la.frames, lb.frames)

	// A fork from B is a share link to the run at that step, which B serves.
	fork := get(t, b.ts.URL+"/l/"+code+"/fork?step=3")
	if fork.status != http.StatusSeeOther || !strings.HasPrefix(fork.loc, "/r/") {
		t.Fatalf("fork on B: %d %q", fork.status, fork.loc)
	}
	if r := get(t, b.ts.URL+fork.loc); r.status != http.StatusOK {
		t.Fatalf("the fork's link on B: %d", r.status)
	}
	// A follower's panels on B read the run A shows: the same timeline on both.
	onAtl, onBtl := get(t, a.ts.URL+"/api/lectures/"+code+"/timeline"), get(t, b.ts.URL+"/api/lectures/"+code+"/timeline")
	if onBtl.status != http.StatusOK || onBtl.body != onAtl.body || !strings.Contains(onBtl.body, `"batches":[`) {
		t.Fatalf("the lecture's timeline: %d on A, %d on B (same: %v)", onAtl.status, onBtl.status, onAtl.body == onBtl.body)
	}

	// A question: answers from B and from A come in on A's tally.
	p.send(`{"type":"lecture","op":"questions"}`)
	qs := p.pnext("questions")
	if len(qs.Items) == 0 {
		t.Fatalf("no question to ask: %s", qs.raw)
	}
	p.send(`{"type":"lecture","op":"ask","question":0}`)
	p.pnext("question")
	qa, qb := onA.take(1)[0], back.take(1)[0]
	if qb.Type != "question" || qb.State != "open" || qa.raw != qb.raw {
		t.Fatalf("the question on A and B:\n%s\n%s", qa.raw, qb.raw)
	}
	back.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, qb.ID))
	if f := back.next("answered", "error"); f.Type != "answered" || f.Choice != 0 {
		t.Fatalf("an answer on B: %s", f.raw)
	}
	back.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":1}`, qb.ID))
	if f := back.next("answered", "error"); !strings.Contains(f.Error, "already answered") {
		t.Fatalf("a second answer on B: %s", f.raw)
	}
	onA.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":1}`, qa.ID))
	onA.next("answered")
	for {
		q := p.pnext("question")
		if q.Answers == 2 {
			if q.Tally[0] != 1 || q.Tally[1] != 1 {
				t.Fatalf("the tally: %s", q.raw)
			}
			break
		}
	}

	// The end on A reaches B: the ended state, then the close; B's pages say so.
	p.send(`{"type":"lecture","op":"end"}`)
	for _, f := range []*follower{onA, back} {
		for {
			x := f.take(1)[0]
			if x.Type == "lecture" && x.State == "ended" {
				break
			}
		}
		if e := f.next("error"); e.Code != "gone" {
			t.Fatalf("after the end: %s", e.raw)
		}
		if c := f.closed(); c != websocket.CloseNormalClosure {
			t.Fatalf("closed with %d", c)
		}
	}
	if pg := get(t, b.ts.URL+"/l/"+code); pg.status != http.StatusGone || !strings.Contains(pg.body, "has ended") {
		t.Fatalf("the follower's page on B after the end: %d", pg.status)
	}
	late := dial(t, b, "/ws/lecture/"+code)
	if f := late.read(); f.Type != "lecture" || f.State != "ended" || !strings.HasPrefix(f.Link, "/r/") {
		t.Fatalf("joining on B after the end: %s", f.raw)
	}
}

// When NATS goes down the followers on B are told and the presenter's own followers on
// A carry on; when it is back, B's follower resumes where it was.
func TestNATSDownAndBack(t *testing.T) {
	ns := startNATS(t)
	a, b := newNode(t, ns, web.Options{}), newNode(t, ns, web.Options{})
	p := startLecture(t, a, "/play/token-ring?n=4")
	onA, onB := join(t, a, p.code, 0), join(t, b, p.code, 0)
	onA.catchUp()
	onB.catchUp()
	p.steps(3)
	sameFrames(t, "before", onA.take(3), onB.take(3))

	ns.kill()
	if e := onB.next("error"); e.Code != "unreachable" || !strings.Contains(e.Error, "cannot be reached") {
		t.Fatalf("B's follower was told %s", e.raw)
	}
	if c := onB.closed(); c != websocket.CloseTryAgainLater {
		t.Fatalf("B's follower closed with %d", c)
	}
	p.steps(3)
	during := onA.take(3)
	if pg := get(t, b.ts.URL+"/l/"+p.code); pg.status != http.StatusServiceUnavailable || !strings.Contains(pg.body, "cannot be reached") {
		t.Fatalf("the follower's page on B without NATS: %d", pg.status)
	}
	refused := dial(t, b, "/ws/lecture/"+p.code)
	if e := refused.next("error"); e.Code != "unreachable" {
		t.Fatalf("B's socket without NATS: %s", e.raw)
	}

	ns.start()
	testwait.For(t, "B finds the lecture again", func() bool { return get(t, b.ts.URL+"/l/"+p.code).status == http.StatusOK })
	back := join(t, b, p.code, onB.last)
	sameFrames(t, "the frames of the outage", during, back.take(3))
	p.steps(1)
	sameFrames(t, "after", onA.take(1), back.take(1))
}

// A server that shuts down ends its lectures for their followers on every server.
func TestShutdownOfTheRunsServerEndsTheLectureEverywhere(t *testing.T) {
	ns := startNATS(t)
	a, b := newNode(t, ns, web.Options{}), newNode(t, ns, web.Options{})
	p := startLecture(t, a, "/play/bully")
	onB := join(t, b, p.code, 0)
	onB.catchUp()
	a.srv.Close()
	for {
		x := onB.take(1)[0]
		if x.Type == "lecture" && x.State == "ended" {
			break
		}
	}
	if e := onB.next("error"); e.Code != "gone" {
		t.Fatalf("after the shutdown: %s", e.raw)
	}
}
