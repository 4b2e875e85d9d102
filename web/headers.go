package web

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"

	"github.com/a-h/templ"
)

// Security headers. Every response gets a Content-Security-Policy with a nonce of its
// own: the nonce goes into the request's context (templ.WithNonce), templ writes it on
// every <script> it renders (templ.JSONScript does by itself; the layout's module
// scripts ask for it with templ.GetNonce), and a script without it does not run even
// if something ever slipped one into a page. Scripts from this origin ('self') still
// load as before: the nonce only adds to what the page may run, never to where from.

// pagePolicy is the CSP of a response. framable drops frame-ancestors (embed mode,
// web/embed.go); every other page refuses to be framed.
func pagePolicy(nonce string, framable bool) string {
	p := "default-src 'self'; script-src 'self' 'nonce-" + nonce + "'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; object-src 'none'"
	if !framable {
		p += "; frame-ancestors 'none'"
	}
	return p
}

// newNonce returns 128 random bits, base64: a fresh nonce per response, so a page seen
// once says nothing about the next.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail on Linux (it panics on a broken system)
	return base64.StdEncoding.EncodeToString(b[:])
}

// nonceOf is the nonce of the response being written for this request.
func nonceOf(ctx context.Context) string { return templ.GetNonce(ctx) }

// securityHeaders sets the headers every response carries and puts the response's
// nonce in the request's context for templ.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := newNonce()
		h := w.Header()
		h.Set("Content-Security-Policy", pagePolicy(nonce, false))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r.WithContext(templ.WithNonce(r.Context(), nonce)))
	})
}

// framablePolicy is the policy of an embeddable page: the same nonce, without
// frame-ancestors.
func framablePolicy(r *http.Request) string { return pagePolicy(nonceOf(r.Context()), true) }
