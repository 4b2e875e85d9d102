package pages

import (
	"log/slog"
	"net/http"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
)

// Renderer writes pages as HTML responses. Cat is the catalogue a page that sends
// the visitor elsewhere (not found, a bad link) offers.
type Renderer struct {
	Log *slog.Logger
	Cat Catalogue
}

// Render writes c with status. Pages are never cached: they carry session ids.
func (p Renderer) Render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := c.Render(r.Context(), w); err != nil {
		// The route pattern, not the path: a path carries session ids and presenter
		// tokens, and the logs hold only their hashes.
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		p.Log.Warn("render", "route", route, "err", err)
	}
}

// NotFound answers 404 with what is not there and the catalogue.
func (p Renderer) NotFound(w http.ResponseWriter, r *http.Request, what string) {
	p.Render(w, r, http.StatusNotFound, NotFoundPage(what, p.Cat))
}

// Message answers status with a page that says one thing.
func (p Renderer) Message(w http.ResponseWriter, r *http.Request, status int, title, heading, text string) {
	p.Render(w, r, status, MessagePage(title, heading, text))
}
