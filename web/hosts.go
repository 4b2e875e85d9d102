package web

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

// Two small bounds every request passes.
//
// Host names. A page of another site whose name is made to resolve to this server
// (DNS rebinding: evil.example resolves to 127.0.0.1 or a lecture machine's address)
// is the same origin as the server in the browser's eyes, so the socket's Origin
// check alone would let it drive sessions. So a request must name the server by one
// of its own names: an IP address (a rebinding page never has one), a loopback name
// (`localhost` and names under it), the host of --public-url, the host of the listen
// address, or a name given with --allowed-hosts ("*": any name, as before the check).
// Health, readiness and metrics answer whatever the Host, for probes and scrapers.
//
// Request bodies. A POST whose body trickles in holds its connection and handler; the
// body must arrive within the body timeout (--body-timeout), or the read fails and the
// connection is closed. Headers have net/http's ReadHeaderTimeout already.

// hostNames is the set of names the server answers to (lower case, without port);
// any is true with "*".
type hostNames struct {
	names map[string]bool
	any   bool
}

func newHostNames(names ...string) *hostNames {
	h := &hostNames{names: map[string]bool{}}
	for _, n := range names {
		h.add(n)
	}
	return h
}

func (h *hostNames) add(n string) {
	n = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(n), "."))
	switch {
	case n == "*":
		h.any = true
	case n != "":
		h.names[n] = true
	}
}

// with returns a copy of h with more names.
func (h *hostNames) with(names ...string) *hostNames {
	c := &hostNames{names: make(map[string]bool, len(h.names)+len(names)), any: h.any}
	for n := range h.names {
		c.names[n] = true
	}
	for _, n := range names {
		c.add(n)
	}
	return c
}

// allows reports whether a request's Host header names this server.
func (h *hostNames) allows(hostport string) bool {
	if h.any {
		return true
	}
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return h.names[host]
}

// hostOf is the host part of a listen address or URL host ("" for an IP or none).
func hostOf(hostport string) string {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return ""
	}
	return host
}

// checkHost refuses a request whose Host is not one of the server's names, with 421
// naming the host and the flag that would allow it.
func checkHost(names *atomic.Pointer[hostNames]) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/healthz", "/readyz", "/metrics":
				next.ServeHTTP(w, r)
				return
			}
			if !names.Load().allows(r.Host) {
				host := r.Host
				if len(host) > 100 {
					host = host[:100] + "…"
				}
				http.Error(w, "Host \""+host+"\" is not a name of this server: a page reaches it by an IP address, localhost, "+
					"the host of --public-url, or a name given with --allowed-hosts", http.StatusMisdirectedRequest)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// DefaultBodyTimeout is Options.BodyTimeout unless set: a scenario or a source of
// 64 KiB arrives in well under a second on any link a page works over.
const DefaultBodyTimeout = 10 * time.Second

// bodyDeadline gives a request's body d to arrive: the connection's read deadline is
// set before the handler reads it and lifted once the body is read (a handler that
// goes on streaming its answer, as Explore does, must not see its connection's read
// fail under it).
func bodyDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(d)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody lifts the read deadline when the body has been read to its end, or
// closed.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.lift()
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	b.lift()
	return b.ReadCloser.Close()
}

func (b *deadlineBody) lift() {
	if !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}
