package web

import (
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/teach-dist/playground/static"
	"github.com/teach-dist/playground/web/ops"
	"github.com/teach-dist/playground/web/ratelimit"
)

// routes is the server's one route table: every URL it answers, and the middleware
// every request passes (HEAD as GET without the body, client address, request log,
// panics, the Host and the body's deadline (hosts.go), security headers, rate limits).
// Pages and APIs are compressed; sockets and the Explore stream are not (each line of
// the stream must reach the page as soon as it is written).
func (s *Server) routes() chi.Router {
	ex, lec := s.exports, s.lecture
	r := chi.NewRouter()
	r.Use(middleware.GetHead, s.opts.ClientIP, ops.RequestLog(s.opts.Logger, s.metrics, ratelimit.Free), ops.Recoverer(s.opts.Logger, s.metrics),
		checkHost(&s.hosts), bodyDeadline(s.opts.BodyTimeout), securityHeaders, s.limits.Middleware)
	r.Get("/readyz", s.metrics.Ready(s.sessions))
	r.Get("/metrics", s.metrics.Handler().ServeHTTP)
	r.Group(func(r chi.Router) {
		r.Use(middleware.Compress(5))
		r.Get("/healthz", ops.Health(s.sessions))

		// Pages (play.go); embed mode serves the same pages restyled (embed.go).
		r.Get("/", s.handleCatalogue)
		r.Get("/play/{slug}", s.handlePlay)
		r.Get("/s/{name}", s.handleCurated)
		r.Get("/r/{code}", s.handleLink)
		r.Get("/embed/play/{slug}", s.embed(s.handlePlay))
		r.Get("/embed/s/{name}", s.embed(s.handleCurated))
		r.Get("/embed/r/{code}", s.embed(s.handleLink))
		r.Get("/compare", s.handleCompare)

		// Lecture mode (web/lecturehttp).
		r.Post("/lecture", lec.Start)
		r.Get("/lecture/present/{token}", lec.PresenterPage)
		r.Get("/join", lec.Join)
		r.Get("/l/{code}", lec.FollowerPage)
		r.Get("/l/{code}/qr.svg", lec.QR)
		r.Get("/l/{code}/fork", lec.Fork)

		// What a run can be read as (web/export): a live session's, a lecture's as its
		// followers see it (read-only, at the presenter's step), a share link's.
		reads := func(r chi.Router) {
			r.Get("/trace", ex.SessionTrace)
			r.Get("/metrics", ex.SessionCosts)
			r.Get("/timeline", ex.SessionTimeline)
			r.Get("/shiviz", ex.SessionShiViz)
		}
		// Exports are their client's work (runtime/session/cpu.go).
		r.Route("/api/sessions/{id}", func(r chi.Router) {
			r.Use(s.chargeCPU)
			reads(r)
			r.Get("/link", ex.SessionLink)
			r.Get("/selfcheck", ex.SessionSelfCheck)
		})
		r.Route("/api/lectures/{code}", func(r chi.Router) {
			r.Use(lec.GuardCode, s.chargeCPU) // a code costs a join guess here too
			reads(r)
		})
		r.With(s.chargeCPU).Get("/r/{code}/trace.jsonl", ex.LinkTrace)
		r.With(s.chargeCPU).Get("/r/{code}/shiviz", ex.LinkShiViz)

		r.Get("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
			// Every visit to a playground page starts a run: keep crawlers to the catalogue.
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /play/\nDisallow: /s/\nDisallow: /r/\nDisallow: /embed/\nDisallow: /ws/\nDisallow: /api/\n")
		})
		r.Handle(static.Prefix+"*", static.Handler())
		r.NotFound(func(w http.ResponseWriter, r *http.Request) {
			s.pages.NotFound(w, r, "There is no page at "+r.URL.Path+".")
		})
	})
	r.Post("/api/sessions/{id}/explore", s.handleExplore) // explore.go
	r.Get("/ws/{id}", s.sockets.ServeSession)
	r.Get("/ws/lecture/{code}", lec.FollowerSocket)
	r.Get("/ws/present/{token}", lec.PresenterSocket)
	return r
}
