// Package ratelimit holds the server's per-client rate limits (docs/operations.md):
// token buckets of golang.org/x/time/rate, one per client address and class of
// request. A client (ClientOf) is an IPv4 address or an IPv6 /64, of the address chi's
// ClientIP middleware found: the TCP peer, or behind a trusted proxy the address the
// proxy reports. A lecture hall behind one
// NAT is one address, so every number here is sized for a room of 300 students
// sharing one, not for one person; what the limits stop is a script hammering the
// server, and the caps (sessions, viewers, lectures, followers) bound what a whole
// hall, or an abuser who stays under the rates, can hold.
package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"golang.org/x/time/rate"
)

// Limits are the rates per client address. A zero Rate limits nothing.
type Limits struct {
	Pages    Rate // HTML page loads
	Sessions Rate // page loads that start a live run, and lecture starts (on top of Pages)
	API      Rate // /api/… and /compare: replays and simulations
	Sockets  Rate // WebSocket handshakes
	Commands Rate // frames one WebSocket connection may send
	// CommandsPerIP bounds the frames of all of one address's connections together.
	CommandsPerIP Rate
	// Strikes is how many refused frames a connection may send (refilling at
	// Strikes.Per per Every) before it is closed with 1008: a page that clicks fast is
	// slowed down, a script that floods is cut off.
	Strikes Rate
	// JoinGuesses are lookups of lecture codes that name no lecture (web/lecturehttp):
	// a client out of them is refused every lookup until one refills.
	JoinGuesses Rate
	// Loads are Starlark sources (a scenario's "source", docs/security.md) the server
	// loads because a client sent one it had not loaded yet, in a run's reset frame or
	// a share link. Loading is the costly step of student code (up to the top level's
	// step bound) and the cache of loaded sources is shared by everyone, so one client
	// sending source after source would cost CPU and evict the hall's entries.
	Loads Rate
}

// DefaultLimits are the rates `playground serve` applies unless told otherwise; the
// arithmetic behind each is in docs/operations.md (300 students behind one address).
func DefaultLimits() Limits {
	return Limits{
		Pages:         Rate{Per: 20, Every: time.Second, Burst: 600},
		Sessions:      Rate{Per: 2, Every: time.Second, Burst: 300},
		API:           Rate{Per: 100, Every: time.Second, Burst: 900},
		Sockets:       Rate{Per: 20, Every: time.Second, Burst: 600},
		Commands:      Rate{Per: 40, Every: time.Second, Burst: 80},
		CommandsPerIP: Rate{Per: 600, Every: time.Second, Burst: 1200},
		Strikes:       Rate{Per: 5, Every: time.Second, Burst: 100},
		// 60 typos from a hall at once, then one every 5 s: docs/security.md sets this
		// against the code space.
		JoinGuesses: Rate{Per: 12, Every: time.Minute, Burst: 60},
		// A hall of 300 each pressing Run on fresh edits every 30 s is 10 loads a
		// second; a burst of 300 lets all of them open a challenge's different
		// variants at once. docs/security.md sets this against a load's cost.
		Loads: Rate{Per: 10, Every: time.Second, Burst: 300},
	}
}

// ClientIP returns the middleware that finds each request's client address (chi's
// ClientIP helpers; never the deprecated RealIP). trusted is the --trusted-proxy flag:
//
//   - "" : no proxy; the address is the TCP peer (ClientIPFromRemoteAddr).
//   - "CIDR[,CIDR…]": proxies at these addresses append to X-Forwarded-For; the client
//     is the first address from the right that is not one of them (ClientIPFromXFF).
//   - "Header=CIDR[,CIDR…]": proxies at these addresses set Header (X-Real-IP,
//     CF-Connecting-IP…) to the client's address (ClientIPFromHeader); a request from
//     anywhere else is keyed on its TCP peer, so nobody can spoof the header directly.
//
// CIDRs are required in both proxy forms: trusting a header from anyone would let any
// client pick its own key and walk past every limit. The same proxies, and only they,
// are believed when they say X-Forwarded-Proto: https (see HTTPS).
func ClientIP(trusted string) (func(http.Handler) http.Handler, error) {
	trusted = strings.TrimSpace(trusted)
	if trusted == "" {
		return middleware.ClientIPFromRemoteAddr, nil
	}
	mw, proxies, err := clientIP(trusted)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		return mw(forwardedHTTPS(proxies, next))
	}, nil
}

func clientIP(trusted string) (func(http.Handler) http.Handler, []netip.Prefix, error) {
	header, list, named := strings.Cut(trusted, "=")
	if !named {
		list, header = trusted, ""
	}
	var cidrs []string
	var prefixes []netip.Prefix
	for _, c := range strings.Split(list, ",") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := netip.ParsePrefix(c)
		if err != nil {
			if a, aerr := netip.ParseAddr(c); aerr == nil { // one address: its own /32 or /128
				p = netip.PrefixFrom(a, a.BitLen())
			} else {
				return nil, nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8 or an address", c)
			}
		}
		cidrs, prefixes = append(cidrs, p.String()), append(prefixes, p.Masked())
	}
	if len(cidrs) == 0 {
		return nil, nil, errors.New("name the proxies' addresses: CIDR[,CIDR…] or Header=CIDR[,CIDR…]")
	}
	if !named {
		return middleware.ClientIPFromXFF(cidrs...), prefixes, nil
	}
	header = strings.TrimSpace(header)
	if header == "" || strings.ContainsAny(header, " \t:") {
		return nil, nil, fmt.Errorf("%q is not a header name", header)
	}
	if strings.EqualFold(header, "X-Forwarded-For") {
		return middleware.ClientIPFromXFF(cidrs...), prefixes, nil
	}
	return middleware.ClientIPFromHeader(header, cidrs...), prefixes, nil
}

type httpsKey struct{}

// forwardedHTTPS marks a request as HTTPS when its TCP peer is one of the trusted
// proxies and the proxy says so in X-Forwarded-Proto (the last value, the one the
// nearest proxy wrote). From anyone else the header is ignored: a client could claim
// https and nothing would be safer for it.
func forwardedHTTPS(proxies []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto := r.Header.Values("X-Forwarded-Proto")
		if r.TLS == nil && len(proto) > 0 {
			vals := strings.Split(proto[len(proto)-1], ",")
			if strings.EqualFold(strings.TrimSpace(vals[len(vals)-1]), "https") && fromProxy(r.RemoteAddr, proxies) {
				r = r.WithContext(context.WithValue(r.Context(), httpsKey{}, true))
			}
		}
		next.ServeHTTP(w, r)
	})
}

func fromProxy(remote string, proxies []netip.Prefix) bool {
	ap, err := netip.ParseAddrPort(remote)
	if err != nil {
		return false
	}
	addr := ap.Addr().Unmap()
	for _, p := range proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// HTTPS reports whether the browser reached the server over TLS: directly, or through
// a trusted proxy that said so (ClientIP). Cookies get Secure and join URLs https.
func HTTPS(r *http.Request) bool {
	return r.TLS != nil || r.Context().Value(httpsKey{}) != nil
}

// Hooks are what the limiter asks of the server.
type Hooks struct {
	// StartsSession reports whether serving r may start a live run (charged to the
	// Sessions rate on top of Pages).
	StartsSession func(r *http.Request) bool
	// Limited counts a refusal by the name of its limit (metrics).
	Limited func(limit string)
	// Page answers an HTML request over its rate (429 and Retry-After are set) with a
	// page that says msg.
	Page func(w http.ResponseWriter, r *http.Request, msg string)
}

// Limiter holds one limiter per class of request, keyed by the client address chi's
// ClientIP middleware found (it must run first).
type Limiter struct {
	cfg                           Limits
	hooks                         Hooks
	pages, sessions, api, sockets *limiter
	commandsPerIP, loads          *limiter
}

// New returns the limiter of cfg.
func New(cfg Limits, hooks Hooks) *Limiter {
	return &Limiter{cfg: cfg, hooks: hooks, pages: newLimiter(cfg.Pages), sessions: newLimiter(cfg.Sessions),
		api: newLimiter(cfg.API), sockets: newLimiter(cfg.Sockets), commandsPerIP: newLimiter(cfg.CommandsPerIP),
		loads: newLimiter(cfg.Loads)}
}

// class is what a request costs.
type class uint8

const (
	classFree   class = iota // assets, probes
	classPage                // an HTML page
	classAPI                 // /api/…, /compare
	classSocket              // a WebSocket handshake
)

func classify(r *http.Request) class {
	p := r.URL.Path
	switch {
	case strings.HasPrefix(p, "/static/"), p == "/healthz", p == "/readyz", p == "/metrics", p == "/robots.txt", p == "/favicon.ico":
		return classFree
	case strings.HasPrefix(p, "/ws/"):
		return classSocket
	case strings.HasPrefix(p, "/api/"), p == "/compare":
		return classAPI
	}
	return classPage
}

// Free reports whether r costs nothing: an asset or a probe (the request log keeps
// those at Debug).
func Free(r *http.Request) bool { return classify(r) == classFree }

// Middleware charges each request to its client's buckets and answers 429 with
// Retry-After when one is empty.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := middleware.GetClientIPAddr(r.Context())
		var b *limiter
		name := ""
		cl := classify(r)
		switch cl {
		case classPage:
			b, name = l.pages, "pages"
		case classAPI:
			b, name = l.api, "api"
		case classSocket:
			b, name = l.sockets, "sockets"
		}
		if b != nil {
			if ok, wait := b.allow(addr); !ok {
				l.limited(w, r, name, wait)
				return
			}
		}
		if cl == classPage && l.hooks.StartsSession(r) {
			if ok, wait := l.sessions.allow(addr); !ok {
				l.limited(w, r, "sessions", wait)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limited answers a request over its rate: 429, Retry-After in whole seconds, and a
// page (or a line of text for the API and sockets) that says what happened.
func (l *Limiter) limited(w http.ResponseWriter, r *http.Request, name string, wait time.Duration) {
	l.hooks.Limited(name)
	secs := wholeSeconds(wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("Too many requests from your network; try again in %d second%s.", secs, pluralS(secs))
	if name == "sessions" {
		msg = fmt.Sprintf("Your network has started many runs in a short time. Runs already open keep working; a new one can start in %d second%s.", secs, pluralS(secs))
	}
	if strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/ws/") {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = fmt.Fprintln(w, msg)
		return
	}
	l.hooks.Page(w, r, msg)
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// LoadError is a load of a Starlark source refused because the client has loaded its
// share (Limits.Loads). Its message is the one the page and the editor show.
type LoadError struct{ Wait time.Duration }

// RetryAfter is the Retry-After header's value: the wait in whole seconds, at least 1.
func (e *LoadError) RetryAfter() string { return strconv.Itoa(wholeSeconds(e.Wait)) }

func wholeSeconds(wait time.Duration) int { return max(1, int(math.Ceil(wait.Seconds()))) }

func (e *LoadError) Error() string {
	secs := wholeSeconds(e.Wait)
	return fmt.Sprintf("your network has loaded many different rule sources in a short time: these rules are not loaded; "+
		"rules already running keep working, and new ones can load in %d second%s", secs, pluralS(secs))
}

// Load returns the charge of one Starlark load to the client at addr (a
// scenarios.LoadCharge): nil while it has loads left, else a *LoadError.
func (l *Limiter) Load(addr netip.Addr) func() error {
	return func() error {
		if l == nil {
			return nil
		}
		if ok, wait := l.loads.allow(addr); !ok {
			if l.hooks.Limited != nil {
				l.hooks.Limited("loads")
			}
			return &LoadError{Wait: wait}
		}
		return nil
	}
}

// LoadOf is Load for the client of r.
func (l *Limiter) LoadOf(r *http.Request) func() error {
	return l.Load(middleware.GetClientIPAddr(r.Context()))
}

// Conn is one WebSocket connection's share: its own bucket of frames, its address's
// bucket, and its strikes. A connection's own buckets are its alone: no map, no lock
// of the server.
type Conn struct {
	addr     netip.Addr
	perIP    *limiter
	commands *rate.Limiter
	strikes  *rate.Limiter
	limited  func(string)
	load     func() error
}

// Conn returns the limits of the WebSocket connection r opens, or nil when frames
// are not limited.
func (l *Limiter) Conn(r *http.Request) *Conn {
	if l.cfg.Commands.Per <= 0 && l.cfg.CommandsPerIP.Per <= 0 && l.cfg.Loads.Per <= 0 {
		return nil
	}
	return &Conn{addr: middleware.GetClientIPAddr(r.Context()), perIP: l.commandsPerIP,
		commands: l.cfg.Commands.bucket(), strikes: l.cfg.Strikes.bucket(), limited: l.hooks.Limited,
		load: l.LoadOf(r)}
}

// Verdict is what becomes of a frame a connection sent.
type Verdict uint8

const (
	Allowed Verdict = iota // handle it
	Dropped                // over the rate: drop it unread and tell the client
	Abusive                // past its strikes too: close the connection (1008)
)

// Frame charges one frame just read. A nil Conn allows everything.
func (c *Conn) Frame() Verdict {
	if c == nil {
		return Allowed
	}
	now := time.Now()
	if c.commands.AllowN(now, 1) {
		if ok, _ := c.perIP.allow(c.addr); ok {
			return Allowed
		}
	}
	c.limited("commands")
	if !c.strikes.AllowN(now, 1) {
		return Abusive
	}
	return Dropped
}

// Load charges one Starlark load to the connection's client (Limiter.Load). A nil
// Conn charges nothing.
func (c *Conn) Load() error {
	if c == nil {
		return nil
	}
	return c.load()
}
