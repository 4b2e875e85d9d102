package web

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web/ratelimit"
)

// Behind the test's trusted proxy (loopback), X-Forwarded-For says which client a
// request is: two networks from one machine.
func viaProxy(t *testing.T) func(http.Handler) http.Handler {
	t.Helper()
	mw, err := ratelimit.ClientIP("127.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// dialAs opens a follower's socket from client addr; its first frame tells whether
// it got a place (hello) or was refused (error).
func dialAs(t *testing.T, rig *lectureRig, addr string) (*wsClient, lecFrame) {
	t.Helper()
	h := http.Header{"Origin": {rig.ts.URL}, "X-Forwarded-For": {addr}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(rig.ts.URL, "http")+"/ws/lecture/"+rig.code, h)
	if err != nil {
		t.Fatalf("dial as %s: %v (%v)", addr, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	c := &wsClient{t: t, conn: conn}
	return c, c.readAny()
}

// One client holds at most its share of a lecture's places; another client still
// joins, and so do IPv6 clients of another /64 (one /64 is one client).
func TestLectureFollowerPlacesPerClient(t *testing.T) {
	rig := startLecture(t, Options{ClientIP: viaProxy(t), Lecture: lecture.Options{MaxFollowers: 20, FollowersPerClient: 3}},
		"/play/ricart-agrawala?n=3")
	tests := []struct {
		addr string
		busy bool
	}{
		{"10.0.0.1", false}, {"10.0.0.1", false}, {"10.0.0.1", false},
		{"10.0.0.1", true},  // over its share
		{"10.0.0.2", false}, // another address
		{"2001:db8:1:2::a", false}, {"2001:db8:1:2::b", false}, {"2001:db8:1:2:ffff::c", false},
		{"2001:db8:1:2::d", true},  // the same /64
		{"2001:db8:1:3::a", false}, // another /64
	}
	for k, tt := range tests {
		_, f := dialAs(t, rig, tt.addr)
		if busy := f.Type == "error" && strings.Contains(f.Error, "share"); busy != tt.busy || (!busy && f.Type != "hello") {
			t.Fatalf("follower %d from %s: %s; want busy %v", k, tt.addr, f.raw, tt.busy)
		}
	}
	if m := get(t, browser(t), rig.ts.URL+"/metrics"); !strings.Contains(m.body, `playground_capacity_refusals_total{cap="followers-per-client"} 2`) {
		t.Fatalf("refusals not counted:\n%s", m.body)
	}
}

// openQuestion asks the first question the presenter is offered and returns its id.
func openQuestion(t *testing.T, rig *lectureRig) int {
	t.Helper()
	rig.presenter.send(`{"type":"lecture","op":"questions"}`)
	if qs := rig.pnext(t, "questions"); len(qs.Items) == 0 {
		t.Fatalf("no questions: %s", qs.raw)
	}
	rig.presenter.send(`{"type":"lecture","op":"ask","question":0}`)
	q := rig.pnext(t, "question")
	if q.State != "open" {
		t.Fatalf("asked: %s", q.raw)
	}
	return q.ID
}

// answerAs connects a new follower (a new follower id: no cookie) from addr and
// answers question id; it returns the error, or "" when the answer counted. A place
// freed by a follower that left may take a moment to be given back.
func answerAs(t *testing.T, rig *lectureRig, addr string, id int) string {
	t.Helper()
	var c *wsClient
	testwait.For(t, "a place for "+addr, func() bool {
		var f lecFrame
		c, f = dialAs(t, rig, addr)
		if f.Type != "hello" {
			c.conn.Close()
			return false
		}
		return true
	})
	c.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, id))
	f := c.lnext("answered", "error")
	c.conn.Close()
	return f.Error
}

// Reconnecting without the cookie makes a new follower, but the answers one client
// gives to a question are bounded by its share all the same.
func TestLectureAnswersPerClient(t *testing.T) {
	rig := startLecture(t, Options{ClientIP: viaProxy(t), Lecture: lecture.Options{MaxFollowers: 20, FollowersPerClient: 2}},
		"/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	id := openQuestion(t, rig)
	for k, want := range []string{"", "", "share of the tally", "share of the tally"} {
		if got := answerAs(t, rig, "10.0.0.1", id); (want == "" && got != "") || !strings.Contains(got, want) {
			t.Fatalf("answer %d from 10.0.0.1: %q, want %q", k, got, want)
		}
	}
	if got := answerAs(t, rig, "10.0.0.2", id); got != "" {
		t.Fatalf("another address: %q", got)
	}
}

// While a question is open there is no fork (it could be stepped to the answer);
// after the answer is revealed, forks open again.
func TestLectureNoForkWhileAQuestionIsOpen(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	fork := func() int {
		resp, err := noRedirect(t).Get(rig.ts.URL + "/l/" + rig.code + "/fork")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := fork(); s != http.StatusSeeOther {
		t.Fatalf("fork before the question: %d", s)
	}
	openQuestion(t, rig)
	if s := fork(); s != http.StatusConflict {
		t.Fatalf("fork while the question is open: %d, want 409", s)
	}
	rig.presenter.send(`{"type":"lecture","op":"reveal"}`)
	for q := rig.pnext(t, "question"); q.State != "revealed"; q = rig.pnext(t, "question") {
	}
	if s := fork(); s != http.StatusSeeOther {
		t.Fatalf("fork after the reveal: %d", s)
	}
}

// Wrong join codes are limited from the first one: past the burst every lookup of
// that client is refused (a right code too), on every door (join form, follower
// page, QR code, socket); another client is not.
func TestLectureJoinCodeGuessesAreLimited(t *testing.T) {
	rig := startLecture(t, Options{ClientIP: viaProxy(t), Limits: ratelimit.Limits{JoinGuesses: slow(3)}}, "/play/ricart-agrawala?n=3")
	wrong := "WWWWWW"
	if wrong == rig.code {
		wrong = "XXXXXX"
	}
	getAs := func(addr, path string) int {
		req, _ := http.NewRequest(http.MethodGet, rig.ts.URL+path, nil)
		req.Header.Set("X-Forwarded-For", addr)
		resp, err := noRedirect(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		addr, path string
		want       int
	}{
		{"10.0.0.1", "/l/" + wrong, http.StatusNotFound},
		{"10.0.0.1", "/join?code=" + wrong, http.StatusNotFound},
		{"10.0.0.1", "/l/" + wrong + "/qr.svg", http.StatusNotFound},
		{"10.0.0.1", "/l/" + wrong, http.StatusTooManyRequests},
		{"10.0.0.1", "/l/" + rig.code, http.StatusTooManyRequests}, // out of guesses: no lookup at all
		{"10.0.0.1", "/l/" + rig.code + "/qr.svg", http.StatusTooManyRequests},
		{"10.0.0.2", "/l/" + rig.code, http.StatusOK},
		{"10.0.0.2", "/l/" + rig.code, http.StatusOK}, // a right code costs nothing
		{"10.0.0.2", "/l/" + wrong, http.StatusNotFound},
	}
	for _, tt := range tests {
		if got := getAs(tt.addr, tt.path); got != tt.want {
			t.Fatalf("%s %s: %d, want %d", tt.addr, tt.path, got, tt.want)
		}
	}
	if _, f := dialAs(t, rig, "10.0.0.1"); f.Type != "error" || !strings.Contains(f.Error, "do not exist") {
		t.Fatalf("socket out of guesses: %s", f.raw)
	}
	if m := get(t, browser(t), rig.ts.URL+"/metrics"); !strings.Contains(m.body, `playground_rate_limited_total{limit="join-guesses"} 4`) {
		t.Fatalf("refusals not counted:\n%s", m.body)
	}
}

// An answer with a key given twice is refused, not read as its last value.
func TestLectureAnswerWithADuplicateKeyIsRefused(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	id := openQuestion(t, rig)
	f := rig.follow(t, 0)
	f.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0,"choice":1}`, id))
	if e := f.lnext("answered", "error"); e.Type != "error" {
		t.Fatalf("answered: %s", e.raw)
	}
	f.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":1}`, id))
	if a := f.lnext("answered", "error"); a.Type != "answered" || a.Choice != 1 {
		t.Fatalf("the follower's one answer: %s", a.raw)
	}
}

// The lecture's read-only API is a door too: probing codes through it costs join
// guesses, and a client out of them is refused there as everywhere.
func TestLectureAPIProbesCostJoinGuesses(t *testing.T) {
	rig := startLecture(t, Options{ClientIP: viaProxy(t), Limits: ratelimit.Limits{JoinGuesses: slow(3)}}, "/play/ricart-agrawala?n=3")
	wrong := "WWWWWW"
	if wrong == rig.code {
		wrong = "XXXXXX"
	}
	getAs := func(addr, path string) int {
		req, _ := http.NewRequest(http.MethodGet, rig.ts.URL+path, nil)
		req.Header.Set("X-Forwarded-For", addr)
		resp, err := noRedirect(t).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		addr, path string
		want       int
	}{
		{"10.0.0.1", "/api/lectures/" + wrong + "/trace", http.StatusNotFound},
		{"10.0.0.1", "/api/lectures/" + wrong + "/shiviz", http.StatusNotFound},
		{"10.0.0.1", "/api/lectures/" + wrong + "/timeline", http.StatusNotFound},
		{"10.0.0.1", "/api/lectures/" + wrong + "/metrics", http.StatusTooManyRequests},
		{"10.0.0.1", "/api/lectures/" + rig.code + "/trace", http.StatusTooManyRequests}, // out of guesses
		{"10.0.0.2", "/api/lectures/" + rig.code + "/trace", http.StatusOK},
		{"10.0.0.2", "/api/lectures/" + rig.code + "/trace", http.StatusOK}, // a right code costs nothing
	}
	for _, tt := range tests {
		if got := getAs(tt.addr, tt.path); got != tt.want {
			t.Fatalf("%s %s: %d, want %d", tt.addr, tt.path, got, tt.want)
		}
	}
}

// The shares do not break a lecture hall behind one NAT: with serve's default limits,
// 300 students from one address all get a place and all their answers count, and
// another address still joins.
func TestLectureHallBehindOneAddressFitsTheDefaults(t *testing.T) {
	rig := startLecture(t, Options{ClientIP: viaProxy(t), Limits: ratelimit.DefaultLimits()}, "/play/ricart-agrawala?n=4")
	rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
	id := openQuestion(t, rig)
	const hall = 300
	for k := range hall {
		c, f := dialAs(t, rig, "10.1.2.3")
		if f.Type != "hello" {
			t.Fatalf("student %d of the hall: %s", k, f.raw)
		}
		c.send(fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, id))
		if f := c.lnext("answered", "error"); f.Type != "answered" {
			t.Fatalf("student %d's answer: %s", k, f.raw)
		}
	}
	if _, f := dialAs(t, rig, "10.9.9.9"); f.Type != "hello" {
		t.Fatalf("another address after the hall: %s", f.raw)
	}
}

// The answer share cannot be gamed over the socket: answers naming another question
// between real ones (which once started every client's count again), and bad choices
// by the thousand from one socket (which once used the address's share up), leave one
// address at most its share of the tally, and its share intact for its real answers.
func TestLectureAnswerShareSurvivesTricks(t *testing.T) {
	const share = 3
	tests := []struct {
		name  string
		trick func(id, i int) []string // the frames the trick sends before real answer i
		want  int                      // real answers counted
	}{
		{"answers to another question between real ones", func(id, i int) []string {
			return []string{fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":0}`, id+1+i)}
		}, share},
		{"2000 bad choices first", func(id, i int) []string {
			if i > 0 {
				return nil
			}
			out := make([]string, 2000)
			for k := range out {
				out[k] = fmt.Sprintf(`{"type":"lecture","op":"answer","question":%d,"choice":%d}`, id, 50+k)
			}
			return out
		}, share},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rig := startLecture(t, Options{ClientIP: viaProxy(t), Lecture: lecture.Options{MaxFollowers: 50, FollowersPerClient: share}},
				"/play/ricart-agrawala?n=4")
			rig.drive(t, `{"type":"act","do":"request","node":0}`, `{"type":"act","do":"request","node":2}`)
			id := openQuestion(t, rig)
			tricks, _ := dialAs(t, rig, "10.0.0.1") // one socket that only plays tricks
			counted := 0
			for i := range 3 * share {
				for _, frame := range tt.trick(id, i) {
					tricks.send(frame)
					if f := tricks.lnext("answered", "error"); f.Type != "error" {
						t.Fatalf("a trick was taken: %s", f.raw)
					}
				}
				if answerAs(t, rig, "10.0.0.1", id) == "" {
					counted++
				}
			}
			if counted != tt.want {
				t.Errorf("10.0.0.1 had %d answers counted, its share is %d", counted, share)
			}
			if got := answerAs(t, rig, "10.0.0.2", id); got != "" {
				t.Errorf("another address: %q", got)
			}
		})
	}
}
