package lecturehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teach-dist/playground/runtime/lecture"
	"github.com/teach-dist/playground/web/pages"
)

// Fork sends a follower to the share link of the lecture's run at the step they
// see (?step=), where the run goes on in a session of their own. The link stays the
// plain share link (docs/links.md); the session behind it, started here for this
// browser, is tied to the lecture: while a question is open it goes no further than
// the presenter's step (session.Bound, Lecture.Limit). A lecture of another server of
// a cluster cannot be asked at every step, so its forks are not bound.
func (h *Handlers) Fork(w http.ResponseWriter, r *http.Request) {
	l, ok := h.lectureByCode(w, r, chi.URLParam(r, "code"))
	if !ok {
		return
	}
	if ended, _, link := l.Ended(); ended {
		if link == "" {
			h.endedPage(w, r, l)
			return
		}
		http.Redirect(w, r, link, http.StatusSeeOther)
		return
	}
	step := -1 // the step on screen
	if v := r.URL.Query().Get("step"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			h.Pages.Render(w, r, http.StatusBadRequest, pages.MessagePage("Bad link", "This fork link is not right",
				fmt.Sprintf("step: %q is not a step number (0 or more)", v)))
			return
		}
		step = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	link, err := l.Fork(ctx, step)
	switch {
	case errors.Is(err, lecture.ErrEnded):
		h.endedPage(w, r, l)
		return
	case errors.Is(err, lecture.ErrUnreachable):
		h.Pages.Render(w, r, http.StatusServiceUnavailable, pages.MessagePage("Fork", "This run cannot be forked right now", err.Error()))
		return
	case errors.Is(err, lecture.ErrQuestionOpen):
		h.Pages.Render(w, r, http.StatusConflict, pages.MessagePage("Fork", "Not while a question is open", err.Error()))
		return
	case err != nil:
		h.Pages.Render(w, r, http.StatusInternalServerError, pages.MessagePage("Fork", "This run cannot be forked", err.Error()))
		return
	}
	if local, ok := l.(*lecture.Lecture); ok && h.StartLink != nil && !h.StartLink(w, r, link, local) {
		return
	}
	http.Redirect(w, r, link, http.StatusSeeOther)
}
