package web

import (
	"bytes"
	"html"
	"net/http"
	"strings"
)

// Embed mode: /embed/r/{code}, /embed/s/{name} and /embed/play/{slug} serve the same
// page as their counterparts without /embed, restyled compact for an iframe in slides
// (topology, controls and captions; no header, setup or side panels). Rendering the
// very same page and marking its body keeps embed mode from drifting from the
// playground as the playground grows.

// An embed page's policy is the page policy without frame-ancestors (framablePolicy,
// headers.go): any page may frame an embed, slides opened from a file included.
// Every other route keeps frame-ancestors 'none'.

const playBody = `<body class="page-play">`

// embed serves next's page in embed mode.
func (s *Server) embed(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rec := &bufferedResponse{header: w.Header(), status: http.StatusOK}
		next(rec, r)
		body := rec.body.Bytes()
		if bytes.Contains(body, []byte(playBody)) {
			// Only a playground page is framable; an error page keeps the default policy.
			w.Header().Set("Content-Security-Policy", framablePolicy(r))
			full := strings.TrimPrefix(r.URL.RequestURI(), "/embed")
			open := `<body class="page-play page-embed"><a class="embed-open" href="` + html.EscapeString(full) +
				`" target="_blank" rel="noopener">Open in the playground ↗</a>`
			body = bytes.Replace(body, []byte(playBody), []byte(open), 1)
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.status)
		_, _ = w.Write(body)
	}
}

// bufferedResponse keeps a handler's page so that embed can mark it before it goes out.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if !b.wrote {
		b.status, b.wrote = status, true
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}
