package lecturehttp

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web/socket"
)

// A follower's socket: the broker's frames out, answers in; nothing that drives.

// follower is a WebSocket client as a lecture follower.
type follower struct{ *socket.Client }

// Send implements lecture.Follower: the broker's frames are stamped once for every
// follower of the stream, so they are framed once too (socket.Client.SendShared).
func (f follower) Send(frame []byte) bool { return f.SendShared(frame) }

// Close implements lecture.Follower.
func (f follower) Close(why lecture.Reason) {
	switch why {
	case lecture.Ended:
		// Tell the page not to reconnect: the lecture frame before this said why.
		f.Send(protocol.ErrorFrame(0, protocol.CodeGone, "the lecture has ended"))
		f.CloseWith(websocket.CloseNormalClosure, protocol.CloseLectureEnded, true)
		return
	case lecture.Unreachable:
		// The page says why and reconnects after its last frame, resuming once it can.
		f.Send(protocol.ErrorFrame(0, protocol.CodeUnreachable, lecture.ErrUnreachable.Error()))
		f.CloseWith(websocket.CloseTryAgainLater, protocol.CloseUnreachable, true)
		return
	}
	f.CloseWith(websocket.CloseTryAgainLater, protocol.CloseSlow, false)
}

// FollowerSocket serves /ws/lecture/{code}: the handshake here, then the follower on a
// goroutine of its own (Hub.Go), so that net/http's per-request state is not held for
// the lecture's length by each of thousands of followers.
func (h *Handlers) FollowerSocket(w http.ResponseWriter, r *http.Request) {
	done := h.Hub.Track()
	if c, serve := h.followerHandshake(w, r); serve != nil {
		h.Hub.Go(c, done, serve)
		return
	}
	done()
}

// followerHandshake checks what a follower's socket asked for, takes its place, and
// returns its client and what serves it; nil when it was refused (and told why).
func (h *Handlers) followerHandshake(w http.ResponseWriter, r *http.Request) (*socket.Client, func()) {
	conn, ok := h.Hub.Upgrade(w, r)
	if !ok {
		return nil, nil
	}
	typed := chi.URLParam(r, "code")
	var l lecture.Followed
	err := lecture.ErrNoStream
	if code, valid := lecture.NormalizeCode(typed); valid {
		l, err = h.join(r, code)
	}
	if errors.Is(err, errGuessing) {
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeRateLimited, err.Error()))
		return nil, nil
	}
	if errors.Is(err, lecture.ErrUnreachable) {
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeUnreachable, err.Error()))
		return nil, nil
	}
	if err != nil {
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeNoLecture, fmt.Sprintf("no lecture has the code %q; check it against the projector", typed)))
		return nil, nil
	}
	var after uint64
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeBadField, fmt.Sprintf("after: %q is not a sequence number", v)))
			return nil, nil
		}
		after = n
	}
	compact := false
	switch v := r.URL.Query().Get("proto"); v {
	case "", "1":
	case "2":
		compact = true
	default:
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeBadField, fmt.Sprintf(
			"proto: %q is not a version of the follower frames this server speaks (1, or 2 for compact frames)", v)))
		return nil, nil
	}
	fid := randomID() // without the page's cookie (a script), each connection is its own follower
	if c, err := r.Cookie(followerCookie); err == nil && c.Value != "" {
		fid = c.Value
	}
	// A bounded kernel buffer per follower: a student who stops reading fills it (and
	// then the queue) within seconds instead of minutes, and hundreds of followers
	// cannot pin megabytes each of the server's memory in socket buffers.
	if tc, ok := conn.UnderlyingConn().(interface{ SetWriteBuffer(int) error }); ok {
		_ = tc.SetWriteBuffer(followerSocketBuffer)
	}
	client := ClientKey(r)
	release, err := l.TakePlace(client) // counted on the lecture's own server, for the whole cluster
	switch {
	case errors.Is(err, lecture.ErrPlaceShare):
		h.Metrics.Refused("followers-per-client")
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeBusy, fmt.Sprintf(
			"your network already holds %d places in this lecture, its share; the others are kept for the rest of the room", h.Share)))
		return nil, nil
	case errors.Is(err, lecture.ErrEnded), errors.Is(err, lecture.ErrNoStream):
		release = func() {} // it ended meanwhile: the follower is told so below
	case err != nil:
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeUnreachable, lecture.ErrUnreachable.Error()))
		return nil, nil
	}
	queue := max(h.Hub.Options().SendQueue, 4*h.refresh()+16)
	c := h.Hub.NewClient(r, conn, queue)
	return c, func() {
		defer release()
		h.serveFollower(conn, c, l, compact, after, fid, client)
	}
}

// serveFollower is the life of a follower's socket: it follows the lecture's stream
// (compact frames if asked for), answers questions, and lets go of the stream at the end.
func (h *Handlers) serveFollower(conn *websocket.Conn, c *socket.Client, l lecture.Followed, compact bool, after uint64, fid, client string) {
	c.Start()
	defer c.Stop()
	sub, err := follow(l, compact, after, follower{c})
	switch {
	case errors.Is(err, lecture.ErrEnded):
		c.Send(l.StateFrame())
		follower{c}.Close(lecture.Ended)
		return
	case errors.Is(err, lecture.ErrCrowded):
		h.Metrics.Refused("followers")
		c.Send(protocol.ErrorFrame(0, protocol.CodeBusy, err.Error()))
		c.CloseWith(websocket.CloseTryAgainLater, protocol.CodeBusy, true)
		return
	case errors.Is(err, lecture.ErrUnreachable):
		follower{c}.Close(lecture.Unreachable)
		return
	case err != nil:
		return // too slow to take its catch-up: already closed
	}
	defer sub.Cancel()
	defer h.Metrics.FollowerJoined()()
	if id, choice, ok := l.Answered(fid); ok {
		c.Send((&protocol.Answered{Question: id, Choice: choice}).AppendJSON(nil))
	}
	h.Hub.ReadLoop(conn, c, func(data []byte) bool {
		var f protocol.LectureCommand
		if strictJSON(data, &f) != nil || f.Type != "lecture" {
			c.Send(readOnly(c, data))
			return true
		}
		if f.Op != "answer" || f.Question == nil || f.Choice == nil {
			c.Send(protocol.ErrorFrame(f.Ref, protocol.CodeBadField, "a follower's only command is {\"type\":\"lecture\",\"op\":\"answer\",\"question\":id,\"choice\":index}"))
			return true
		}
		// The lecture counts each client's answers per question, and only those the
		// tally took (runtime/lecture/places.go).
		if err := l.Answer(client, fid, *f.Question, *f.Choice); err != nil {
			msg := err.Error()
			if errors.Is(err, lecture.ErrAnswerShare) {
				msg = fmt.Sprintf("your network has already given %d answers to this question, its share of the tally", h.Share)
			}
			c.Send(protocol.ErrorFrame(f.Ref, protocol.CodeRefused, msg))
			return true
		}
		c.Send((&protocol.Answered{Question: *f.Question, Choice: *f.Choice, Ref: f.Ref}).AppendJSON(nil))
		return true
	})
}

// compactFollowed is a lecture that also streams compact frames (a lecture of this
// server: runtime/lecture.Lecture).
type compactFollowed interface {
	FollowCompact(after uint64, f lecture.Follower) (lecture.Subscription, error)
}

// follow attaches f to the stream of the protocol it asked for: compact frames when
// it asked for them and the lecture has them (a lecture of another server of a NATS
// cluster has them too), else protocol 1, whose frames the page reads as well (a run
// on a server of an older build offers no compact stream).
func follow(l lecture.Followed, compact bool, after uint64, f lecture.Follower) (lecture.Subscription, error) {
	if cl, ok := l.(compactFollowed); ok && compact {
		sub, err := cl.FollowCompact(after, f)
		if !errors.Is(err, lecture.ErrNoStream) {
			return sub, err
		}
	}
	return l.Follow(after, f)
}

// readOnly answers a follower's frame that is not an answer: a command that would
// drive the run is refused with a reason, anything else as a bad frame.
func readOnly(c *socket.Client, data []byte) []byte {
	cmd, ferr := c.ParseFrame(data) // a reset's source loads at the follower's cost too
	if ferr != nil {
		return ferr.Frame()
	}
	return protocol.ErrorFrame(cmd.Ref, protocol.CodeReadOnly, "you are following a lecture: only the presenter drives this run. Fork it to try your own moves")
}
