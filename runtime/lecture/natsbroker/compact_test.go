package natsbroker

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/internal/testwait"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web"
)

// A lecture's compact stream (protocol 2) crosses the cluster as a stream of its own:
// its own subject and numbers, encoded once on the presenter's server, and on every
// other server one copy of each frame for all its followers.
func TestCompactStreamIsCarriedOnceForAllFollowersOfAServer(t *testing.T) {
	a, b, p1 := pair(t)
	cs, err := a.Open(lecture.CompactID(code))
	if err != nil {
		t.Fatal(err)
	}
	cs.Checkpoint([]byte(`[{"type":"table"}]`), []byte(`[{"type":"hello"}]`))
	p1.Publish(frame(100)) // the protocol-1 stream's numbers are not the compact one's
	for i := range 3 {
		cs.Publish(fmt.Appendf(nil, `[%d]`, i))
	}
	x, y := &sink{cap: 1000}, &sink{cap: 1000}
	for _, s := range []*sink{x, y} {
		sub, err := b.Follow(lecture.CompactID(code), 0, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Cancel)
	}
	for i := 3; i < 6; i++ {
		cs.Publish(fmt.Appendf(nil, `[%d]`, i))
	}
	// One wait each, up to the last frame: frames 4 to 6 may come with the catch-up's
	// last (a wait for frame 3 would then take them, and a second wait for 6 never end).
	fx, fy := x.until(t, 6), y.until(t, 6)
	want := []string{`[0,{"type":"table"}]`, `[0,{"type":"hello"}]`, `[1,0]`, `[2,1]`, `[3,2]`, `[4,3]`, `[5,4]`, `[6,5]`}
	if len(fx) != len(want) || len(fy) != len(want) {
		t.Fatalf("followers on B got %q and %q, want %q", fx, fy, want)
	}
	for i := range want {
		if string(fx[i]) != want[i] || string(fy[i]) != want[i] {
			t.Fatalf("frame %d on B: %s and %s, want %s", i, fx[i], fy[i], want[i])
		}
		// One copy of the frame on B, handed to both followers.
		if &fx[i][0] != &fy[i][0] {
			t.Fatalf("frame %d reached B's two followers as two copies", i)
		}
	}
	if n := p1.hub.Last(); n != 1 {
		t.Fatalf("the protocol-1 stream is at %d, want 1: the streams are numbered apart", n)
	}
}

// compactFollower is a student's page of protocol 2 on some server: it expands every
// frame as static/compact.js does, and checks the numbering across reconnections.
type compactFollower struct {
	t    *testing.T
	conn *websocket.Conn
	x    *protocol.Expander
	last uint64
	v1   []string // the protocol-1 frames it stands for, without their number
	raw  [][]byte // the compact frames as read
}

func newCompactFollower(t *testing.T) *compactFollower {
	return &compactFollower{t: t, x: protocol.NewExpander()}
}

// connect opens the socket on n, resuming after the last frame it had (if any).
func (c *compactFollower) connect(n *node, code string) {
	c.t.Helper()
	path := "/ws/lecture/" + code + "?proto=2"
	if c.last > 0 {
		path += fmt.Sprintf("&after=%d", c.last)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(n.ts.URL, "http")+path, http.Header{"Origin": {n.ts.URL}})
	if err != nil {
		c.t.Fatalf("dial %s: %v (%v)", path, err, resp)
	}
	c.t.Cleanup(func() { conn.Close() })
	c.conn = conn
}

// catchUp reads a checkpoint: the table, hello, snapshot and the lecture's state, all
// with one number.
func (c *compactFollower) catchUp() {
	c.t.Helper()
	var n [4]uint64
	for i := range n {
		n[i] = c.next()
	}
	if n[1] != n[0] || n[2] != n[0] || n[3] != n[0] || !strings.HasPrefix(c.v1[0], `"type":"hello"`) ||
		!strings.HasPrefix(c.v1[1], `"type":"snapshot"`) || !strings.HasPrefix(c.v1[2], `"type":"lecture"`) {
		c.t.Fatalf("a compact checkpoint: numbers %v, frames %q", n, c.v1)
	}
	c.last = n[0]
}

// next reads and expands one frame, and returns its number; the table of a checkpoint
// adds nothing to v1.
func (c *compactFollower) next() uint64 {
	c.t.Helper()
	_ = c.conn.SetReadDeadline(time.Now().Add(testwait.Limit))
	_, b, err := c.conn.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	if len(b) == 0 || b[0] != '[' {
		c.t.Fatalf("a follower of protocol 2 got a protocol-1 frame: %s", b)
	}
	n, v1, err := c.x.Expand(b)
	if err != nil {
		c.t.Fatalf("%s: %v", b, err)
	}
	c.raw = append(c.raw, b)
	if v1 != nil {
		c.v1 = append(c.v1, unstamped(v1))
	}
	return n
}

// take reads frames until the expanded ones number want more, each numbered one more
// than the last: a gap or a repeat fails here. It returns them.
func (c *compactFollower) take(want int) []string {
	c.t.Helper()
	from := len(c.v1)
	for len(c.v1)-from < want {
		n := c.next()
		if n != c.last+1 {
			c.t.Fatalf("compact frame %d after %d (a gap or a repeat): %s", n, c.last, c.raw[len(c.raw)-1])
		}
		c.last = n
	}
	return c.v1[from:]
}

// unstamped is a protocol-1 frame without its number: what both protocols carry alike.
func unstamped(f []byte) string {
	_, rest, _ := bytes.Cut(f, []byte(","))
	return string(rest)
}

func unstampedAll(fs []wsFrame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = unstamped([]byte(f.raw))
	}
	return out
}

func sameRun(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: frame %d:\n%s\nwant\n%s", what, i, got[i], want[i])
		}
	}
}

// A follower of protocol 2 on the server that does not run the lecture gets compact
// frames that stand for exactly what a protocol-1 follower on the presenter's server
// gets, every step in order; it resumes after a lost connection on either server with
// no gap and no repeat, its page's view carried over.
func TestCompactFollowerOnTheOtherServer(t *testing.T) {
	ns := startNATS(t)
	// No checkpoint refresh until frame 66 (2 + 64): a resume below that finds its
	// frames in the log whenever the refresh lands.
	opts := web.Options{Lecture: lecture.Options{Refresh: 64}}
	a, b := newNode(t, ns, opts), newNode(t, ns, opts)
	p := startLecture(t, a, "/play/token-ring?n=4")
	code := p.code

	onA := join(t, a, code, 0)
	onA.catchUp()
	cb := newCompactFollower(t)
	cb.connect(b, code)
	cb.catchUp()
	for p.followers != 2 { // the compact follower on B counts on A, as the cap needs
		p.pnext("lecture")
	}
	p.steps(20)
	want := unstampedAll(onA.take(20))
	got := cb.take(20)
	sameRun(t, "the compact follower on B against protocol 1 on A", got, want)
	compact := 0
	for _, r := range cb.raw {
		if !bytes.Contains(r[:min(len(r), 24)], []byte(`{"type":`)) {
			compact++
		}
	}
	if compact == 0 {
		t.Fatalf("every frame on B went whole: none was compact")
	}

	// The connection drops while the run goes on; the page comes back on A, then on B.
	for i, n := range []*node{a, b} {
		cb.conn.Close()
		p.steps(5)
		cb.connect(n, code)
		sameRun(t, fmt.Sprintf("resumed (%d) after %d", i, cb.last), cb.take(5), unstampedAll(onA.take(5)))
	}

	// Past the checkpoint refresh a late joiner on B starts from the refreshed
	// checkpoint, carried to B; it may come before the refresh lands, so try again.
	p.steps(40)
	sameRun(t, "the compact follower on B, past the refresh", cb.take(40), unstampedAll(onA.take(40)))
	var late *compactFollower
	testwait.For(t, "a late joiner on B starting from a refreshed checkpoint", func() bool {
		late = newCompactFollower(t)
		late.connect(b, code)
		late.catchUp()
		if late.last > 64 {
			return true
		}
		late.conn.Close()
		return false
	})
	// It reads the frames after that checkpoint as the first follower had them, then
	// the next steps alike.
	behind := int(cb.last - late.last)
	sameRun(t, "late joiner on B, its catch-up", late.take(behind), cb.v1[len(cb.v1)-behind:])
	p.steps(3)
	sameRun(t, "late joiner on B", late.take(3), cb.take(3))
}
