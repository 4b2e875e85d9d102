// Package lecturehttp is lecture mode over HTTP (docs/lecture.md): starting a lecture
// from a run, the presenter's page and socket, the join form, the followers' page
// and socket (follower.go), the QR code, and forks. runtime/lecture does the lecture
// itself.
package lecturehttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/scenarios"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/pages"
	"github.com/teach-dist/playground/web/ratelimit"
	"github.com/teach-dist/playground/web/socket"
)

// Options are what the lecture handlers serve with.
type Options struct {
	Sessions *session.Manager
	Lectures *lecture.Registry
	Hub      *socket.Hub
	Pages    pages.Renderer
	Metrics  *ops.Metrics
	Refresh  int // lecture.Options.Refresh: snapshots a follower may have queued (default 128)
	// Share is the follower places of one lecture, and the answers to each of its
	// questions, one client may hold (lecture.Options.ClientShare): the lecture counts
	// them (runtime/lecture/places.go); the refusals here name the number.
	Share int
	// Guesses limits each client's lookups of join codes that name no lecture
	// (ratelimit.Limits.JoinGuesses; zero: none).
	Guesses ratelimit.Rate
	// StartLink starts the session of the share link at path for this browser, bound
	// to b, so that the link's page resumes it (web: the playground's cookie per URL);
	// it answers the request itself and reports false when it cannot. Nil: a fork is
	// only a redirect to its link.
	StartLink func(w http.ResponseWriter, r *http.Request, path string, b session.Bound) bool
	// PublicURL is the base of join links and QR codes (ParsePublicURL; joinurl.go);
	// nil: the address the presenter's browser used, or this machine's network
	// addresses when that one is a loopback address.
	PublicURL *url.URL
	// Interfaces lists this machine's addresses (default net.InterfaceAddrs); tests
	// give their own.
	Interfaces func() ([]net.Addr, error)
}

// Handlers serve lecture mode's pages and sockets.
type Handlers struct {
	Options
	guesses guesses // wrong join codes per client
}

// New returns the handlers of opts.
func New(opts Options) *Handlers {
	if opts.Share <= 0 {
		opts.Share = lecture.Options{}.ClientShare()
	}
	return &Handlers{Options: opts, guesses: guesses{rate: opts.Guesses}}
}

// errGuessing refuses a lookup from a client out of wrong guesses.
var errGuessing = errors.New("too many lecture codes that do not exist from your address: wait a minute, then check the code against the projector")

// join finds the lecture of a normalized code, charging a wrong code to the client's
// guesses (guard.go); a client out of them is refused every lookup until it refills.
func (h *Handlers) join(r *http.Request, code string) (lecture.Followed, error) {
	client := ClientKey(r)
	if !h.guesses.allowed(client) {
		h.Metrics.RateLimited("join-guesses")
		return nil, errGuessing
	}
	l, err := h.Lectures.Join(r.Context(), code)
	if errors.Is(err, lecture.ErrNoStream) {
		h.guesses.wrong(client)
	}
	return l, err
}

// NewRegistry is the lectures' registry: opts with share links made by runLink
// unless they say otherwise, and broker (default: in memory, this server only).
func NewRegistry(opts lecture.Options, broker lecture.Broker) *lecture.Registry {
	if opts.Link == nil {
		opts.Link = runLink
	}
	if broker == nil {
		broker = lecture.NewMemory()
	}
	return lecture.NewRegistry(opts, broker)
}

// followerSocketBuffer is the kernel send buffer of a follower's socket (Linux doubles
// it): a few seconds of frames at 30 steps per second, several snapshots.
const followerSocketBuffer = 64 << 10

// followerCookie names the cookie that tells one student's page from another's, so
// that each answers a question once, across reconnections.
const followerCookie = "pg_follower"

// runLink is the share link of a run at its step.
func runLink(rec session.Recipe) (string, error) {
	l, err := scenarios.LinkFromRun(rec.Setup.Scenario, rec.Setup.Config, rec.Interventions, rec.Step)
	if err != nil {
		return "", err
	}
	return l.Path()
}

// Start turns the run of the posted session into a lecture and sends the
// instructor to the presenter's page.
func (h *Handlers) Start(w http.ResponseWriter, r *http.Request) {
	sess, ok := h.Sessions.Get(r.PostFormValue("session"))
	if !ok {
		h.Pages.Render(w, r, http.StatusGone, pages.MessagePage("Run ended", "This run has ended",
			"A lecture starts from a live run. Open the playground again and press “Start lecture” there."))
		return
	}
	_, token, err := h.Lectures.Start(sess, ClientKey(r))
	switch {
	case errors.Is(err, lecture.ErrFull):
		w.Header().Set("Retry-After", "60")
		h.Metrics.Refused("lectures")
		h.Pages.Render(w, r, http.StatusServiceUnavailable, pages.MessagePage("Server full", "No room for another lecture", err.Error()))
		return
	case err != nil:
		h.Pages.Render(w, r, http.StatusServiceUnavailable, pages.MessagePage("Lecture", "The lecture could not start", err.Error()))
		return
	}
	http.Redirect(w, r, "/lecture/present/"+token, http.StatusSeeOther)
}

func (h *Handlers) forgedToken(w http.ResponseWriter, r *http.Request) {
	h.Pages.Render(w, r, http.StatusForbidden, pages.MessagePage("Not a presenter link", "This presenter link is not valid",
		"Only the instructor who started the lecture has its presenter link, and it works only while the lecture lasts. To follow a lecture, enter its code at /join."))
}

func (h *Handlers) endedPage(w http.ResponseWriter, r *http.Request, l lecture.Followed) {
	_, why, link := l.Ended()
	h.Pages.Render(w, r, http.StatusGone, pages.LectureEndedPage(pages.EndedView{Display: lecture.DisplayCode(l.Code()), Reason: "It ended: " + why + ".", Link: link}))
}

// lecturePlay is the playground page of a lecture's run, for its presenter (session:
// the run's session id) or a follower (""); an ended lecture or an unknown algorithm
// is answered here, and ok is false.
func (h *Handlers) lecturePlay(w http.ResponseWriter, r *http.Request, l lecture.Followed, session string) (p pages.Play, ok bool) {
	if ended, _, _ := l.Ended(); ended {
		h.endedPage(w, r, l)
		return pages.Play{}, false
	}
	spec := runSpec(r.Context(), l)
	if spec == nil {
		var ok bool
		if spec, ok = algorithms.Lookup(l.Algorithm()); !ok {
			h.Pages.NotFound(w, r, "This lecture's algorithm is not available.")
			return pages.Play{}, false
		}
	}
	return pages.BuildPlay(spec, session), true
}

func (h *Handlers) PresenterPage(w http.ResponseWriter, r *http.Request) {
	token := chi.URLParam(r, "token")
	l, ok := h.Lectures.ByToken(token)
	if !ok {
		h.forgedToken(w, r)
		return
	}
	p, ok := h.lecturePlay(w, r, l, l.Session().ID())
	if !ok {
		return
	}
	p.WS = "/ws/present/" + token
	if info, ok := h.joinInfo(r); ok {
		p.Join = info.JSON()
	}
	p.Title = "Lecture " + lecture.DisplayCode(l.Code())
	p.About = "You drive this run; your students follow it. PageDown and PageUp step forward and back (a clicker sends them), Q makes questions, J shows the join code large."
	l.Session().Touch()
	h.Pages.Render(w, r, http.StatusOK, pages.PlayPage(p))
}

// lectureByCode finds the lecture of a typed code, on this server or another of the
// cluster; it answers the request itself when there is none.
func (h *Handlers) lectureByCode(w http.ResponseWriter, r *http.Request, typed string) (lecture.Followed, bool) {
	code, valid := lecture.NormalizeCode(typed)
	if !valid {
		h.Pages.Render(w, r, http.StatusNotFound, pages.JoinPage(pages.JoinView{Heading: "Join a lecture", Code: typed,
			Problem: fmt.Sprintf("“%s” is not a lecture code: %s. A code looks like KXT 49P.", typed, lecture.CodeProblem(typed))}))
		return nil, false
	}
	l, err := h.join(r, code)
	if errors.Is(err, errGuessing) {
		w.Header().Set("Retry-After", "60")
		h.Pages.Render(w, r, http.StatusTooManyRequests, pages.JoinPage(pages.JoinView{Heading: "Join a lecture", Code: typed, Problem: err.Error()}))
		return nil, false
	}
	if errors.Is(err, lecture.ErrUnreachable) {
		w.Header().Set("Retry-After", "10")
		h.Pages.Render(w, r, http.StatusServiceUnavailable, pages.JoinPage(pages.JoinView{Heading: "Join a lecture", Code: typed, Problem: err.Error()}))
		return nil, false
	}
	if err != nil {
		h.Pages.Render(w, r, http.StatusNotFound, pages.JoinPage(pages.JoinView{Heading: "Join a lecture", Code: typed,
			Problem: fmt.Sprintf("No lecture has the code %s. Check it against the projector; a lecture that ended long ago is forgotten.", lecture.DisplayCode(code))}))
		return nil, false
	}
	return l, true
}

// GuardCode charges the lecture code of an API path ({code}) to the client's join
// guesses like the pages and sockets do, so the read-only exports of a lecture cannot
// be used to probe codes for free: a client out of guesses gets 429, a code that names
// no lecture a 404 and one guess less.
func (h *Handlers) GuardCode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, valid := lecture.NormalizeCode(chi.URLParam(r, "code"))
		if !valid {
			http.Error(w, "not a lecture code: "+lecture.CodeProblem(chi.URLParam(r, "code")), http.StatusNotFound)
			return
		}
		_, err := h.join(r, code)
		switch {
		case errors.Is(err, errGuessing):
			w.Header().Set("Retry-After", "60")
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		case errors.Is(err, lecture.ErrNoStream):
			http.Error(w, "no lecture has the code "+lecture.DisplayCode(code), http.StatusNotFound)
			return
		}
		next.ServeHTTP(w, r) // the handler answers for a lecture it cannot reach
	})
}

func (h *Handlers) Join(w http.ResponseWriter, r *http.Request) {
	typed, asked := r.URL.Query()["code"]
	if !asked {
		h.Pages.Render(w, r, http.StatusOK, pages.JoinPage(pages.JoinView{Heading: "Join a lecture"}))
		return
	}
	l, ok := h.lectureByCode(w, r, typed[len(typed)-1])
	if !ok {
		return
	}
	http.Redirect(w, r, "/l/"+l.Code(), http.StatusSeeOther)
}

func (h *Handlers) FollowerPage(w http.ResponseWriter, r *http.Request) {
	l, ok := h.lectureByCode(w, r, chi.URLParam(r, "code"))
	if !ok {
		return
	}
	p, ok := h.lecturePlay(w, r, l, "")
	if !ok {
		return
	}
	if _, err := r.Cookie(followerCookie); err != nil {
		http.SetCookie(w, &http.Cookie{Name: followerCookie, Value: randomID(), Path: "/", HttpOnly: true,
			SameSite: http.SameSiteLaxMode, Secure: ratelimit.HTTPS(r)})
	}
	// proto=2: the page reads compact frames (static/compact.js, docs/protocol.md).
	p.WS, p.API = "/ws/lecture/"+l.Code()+"?proto=2", "/api/lectures/"+l.Code()
	p.Template = "" // a follower cannot restart the run: no Edit rules (a fork can)
	p.Title = "Following lecture " + lecture.DisplayCode(l.Code())
	p.About = "The instructor drives this run and you see every step as it happens. Fork it to try your own moves in a tab of your own."
	h.Pages.Render(w, r, http.StatusOK, pages.PlayPage(p))
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// maxHost is a DNS name (253) with a port; an IPv6 literal in brackets is shorter.
const maxHost = 253 + len(":65535")

func validHost(h string) bool {
	if h == "" || len(h) > maxHost {
		return false
	}
	for _, c := range h {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-.:[]_", c)
		if !ok {
			return false
		}
	}
	return true
}

func (h *Handlers) QR(w http.ResponseWriter, r *http.Request) {
	code, valid := lecture.NormalizeCode(chi.URLParam(r, "code"))
	if !valid {
		http.NotFound(w, r)
		return
	}
	if _, err := h.join(r, code); errors.Is(err, errGuessing) {
		w.Header().Set("Retry-After", "60")
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	} else if err != nil {
		http.NotFound(w, r)
		return
	}
	base, err := h.joinBase(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	svg, err := lecture.QRSVG(base + "/l/" + code)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(svg)
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("one JSON object per frame")
	}
	if k := scenarios.DuplicateKey(data); k != "" {
		return errors.New(k + ": is given twice (each key once)")
	}
	return nil
}

func (h *Handlers) refresh() int {
	if h.Refresh > 0 {
		return h.Refresh
	}
	return 128
}

// The presenter's socket: the session's own frames and commands, as on /ws/{id}, plus
// the lecture's: follower count, questions, live tally, end.

func (h *Handlers) PresenterSocket(w http.ResponseWriter, r *http.Request) {
	defer h.Hub.Track()()
	conn, ok := h.Hub.Upgrade(w, r)
	if !ok {
		return
	}
	l, ok := h.Lectures.ByToken(chi.URLParam(r, "token"))
	if !ok {
		h.Hub.Refuse(conn, protocol.ErrorFrame(0, protocol.CodeNotPresenter, "this presenter link is not valid: only the instructor who started the lecture has it"))
		return
	}
	sess := l.Session()
	c := h.Hub.NewClient(r, conn, h.Hub.Options().SendQueue)
	c.Start()
	defer func() {
		l.RemovePresenter(c)
		sess.Detach(c)
		c.Stop()
	}()
	if !h.Hub.Attach(c, sess) {
		return
	}
	l.AddPresenter(c)
	h.Hub.ReadLoop(conn, c, func(data []byte) bool {
		var f protocol.LectureCommand
		if strictJSON(data, &f) == nil && f.Type == "lecture" {
			h.presenterOp(c, l, f)
			return true
		}
		cmd, ok := socket.RunCommand(c, sess, data)
		if ok && cmd.Kind == session.Act {
			l.RunChanged()
		}
		return ok
	})
}

func (h *Handlers) presenterOp(c *socket.Client, l *lecture.Lecture, f protocol.LectureCommand) {
	fail := func(err error) { c.Send(protocol.ErrorFrame(f.Ref, protocol.CodeRefused, err.Error())) }
	switch f.Op {
	case "questions":
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Send(l.QuestionsFrame(ctx, f.Ref))
	case "ask":
		if f.Question == nil {
			fail(errors.New("question: which one of the list to ask"))
			return
		}
		if _, err := l.Ask(*f.Question); err != nil {
			fail(err)
		}
	case "withdraw":
		if err := l.Withdraw("the presenter withdrew it"); err != nil {
			fail(err)
		}
	case "reveal":
		// Reveal by stepping: the run goes to the step whose events show the answer.
		reveal, step, err := l.RevealTarget()
		if err != nil {
			fail(err)
			return
		}
		for range min(max(reveal-step, 0), lecture.Ahead) {
			if err := l.Session().Do(c, session.Command{Kind: session.Step, Ref: f.Ref}); err != nil {
				return
			}
		}
	case "end":
		l.End("the presenter ended it")
	default:
		c.Send(protocol.ErrorFrame(f.Ref, protocol.CodeUnknownType,
			fmt.Sprintf("op: %q is unknown (allowed: questions, ask, withdraw, reveal, end)", f.Op)))
	}
}
