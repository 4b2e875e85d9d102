package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
)

// Per-client rate limits (docs/operations.md). A client is an address as chi's ClientIP
// middleware found it: the TCP peer, or behind a trusted proxy the address the proxy
// reports. A lecture hall behind one NAT is one address, so every number here is sized
// for a room of 300 students sharing one, not for one person; what the limits stop is
// a script hammering the server, and the caps (sessions, viewers, lectures, followers)
// bound what a whole hall, or an abuser who stays under the rates, can hold.

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
	}
}

// ParseRate reads a rate as the serve flags write it: "N/UNIT:BURST", where UNIT is s,
// m, h or a Go duration ("20/s:600", "120/m:300", "5/10s:20"); "off" or "0" limits
// nothing. Without ":BURST" the burst is N.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "off" || s == "0" {
		return Rate{}, nil
	}
	spec, burstText, hasBurst := strings.Cut(s, ":")
	perText, unit, ok := strings.Cut(spec, "/")
	if !ok {
		return Rate{}, fmt.Errorf("%q: write N/UNIT[:BURST], e.g. 20/s:600, or off", s)
	}
	per, err := strconv.Atoi(perText)
	if err != nil || per < 1 {
		return Rate{}, fmt.Errorf("%q: %q is not a positive count", s, perText)
	}
	var every time.Duration
	switch unit {
	case "s":
		every = time.Second
	case "m":
		every = time.Minute
	case "h":
		every = time.Hour
	default:
		every, err = time.ParseDuration(unit)
		if err != nil || every <= 0 {
			return Rate{}, fmt.Errorf("%q: %q is not a unit (s, m, h or a duration like 10s)", s, unit)
		}
	}
	if every/time.Duration(per) <= 0 {
		return Rate{}, fmt.Errorf("%q: more than one event per nanosecond", s)
	}
	burst := per
	if hasBurst {
		burst, err = strconv.Atoi(burstText)
		if err != nil || burst < 1 {
			return Rate{}, fmt.Errorf("%q: burst %q is not a positive count", s, burstText)
		}
	}
	return Rate{Per: per, Every: every, Burst: burst}, nil
}

// String writes r as ParseRate reads it.
func (r Rate) String() string {
	if r.Per <= 0 {
		return "off"
	}
	unit := r.Every.String()
	switch r.Every {
	case time.Second:
		unit = "s"
	case time.Minute:
		unit = "m"
	case time.Hour:
		unit = "h"
	}
	return fmt.Sprintf("%d/%s:%d", r.Per, unit, r.Burst)
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
// client pick its own key and walk past every limit.
func ClientIP(trusted string) (func(http.Handler) http.Handler, error) {
	trusted = strings.TrimSpace(trusted)
	if trusted == "" {
		return middleware.ClientIPFromRemoteAddr, nil
	}
	header, list, named := strings.Cut(trusted, "=")
	if !named {
		list, header = trusted, ""
	}
	var cidrs []string
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
				return nil, fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8 or an address", c)
			}
		}
		cidrs = append(cidrs, p.String())
	}
	if len(cidrs) == 0 {
		return nil, errors.New("name the proxies' addresses: CIDR[,CIDR…] or Header=CIDR[,CIDR…]")
	}
	if !named {
		return middleware.ClientIPFromXFF(cidrs...), nil
	}
	header = strings.TrimSpace(header)
	if header == "" || strings.ContainsAny(header, " \t:") {
		return nil, fmt.Errorf("%q is not a header name", header)
	}
	if strings.EqualFold(header, "X-Forwarded-For") {
		return middleware.ClientIPFromXFF(cidrs...), nil
	}
	return middleware.ClientIPFromHeader(header, cidrs...), nil
}

// limits holds one limiter per class of request.
type limits struct {
	cfg                           Limits
	pages, sessions, api, sockets *limiter
	commandsPerIP                 *limiter
}

func newLimits(cfg Limits) *limits {
	return &limits{cfg: cfg, pages: newLimiter(cfg.Pages), sessions: newLimiter(cfg.Sessions),
		api: newLimiter(cfg.API), sockets: newLimiter(cfg.Sockets), commandsPerIP: newLimiter(cfg.CommandsPerIP)}
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

// startsSession reports whether serving r may start a live run: a playground page
// without this browser's cookie of a live run for the very same URL (a reload resumes
// it and costs only a page), or a lecture start.
func (s *Server) startsSession(r *http.Request) bool {
	p := r.URL.Path
	if r.Method == http.MethodPost && p == "/lecture" {
		return true
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p = strings.TrimPrefix(p, "/embed")
	if !strings.HasPrefix(p, "/play/") && !strings.HasPrefix(p, "/s/") && !strings.HasPrefix(p, "/r/") {
		return false
	}
	if c, err := r.Cookie(cookieName(r.URL)); err == nil {
		if _, live := s.sessions.Get(c.Value); live {
			return false
		}
	}
	return true
}

// rateLimit charges each request to its client's buckets and answers 429 with
// Retry-After when one is empty.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := middleware.GetClientIPAddr(r.Context())
		var l *limiter
		name := ""
		cl := classify(r)
		switch cl {
		case classPage:
			l, name = s.limits.pages, "pages"
		case classAPI:
			l, name = s.limits.api, "api"
		case classSocket:
			l, name = s.limits.sockets, "sockets"
		}
		if l != nil {
			if ok, wait := l.allow(addr); !ok {
				s.limited(w, r, name, wait)
				return
			}
		}
		if cl == classPage && s.startsSession(r) {
			if ok, wait := s.limits.sessions.allow(addr); !ok {
				s.limited(w, r, "sessions", wait)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limited answers a request over its rate: 429, Retry-After in whole seconds, and a
// page (or a line of text for the API and sockets) that says what happened.
func (s *Server) limited(w http.ResponseWriter, r *http.Request, name string, wait time.Duration) {
	s.obs.rateLimited(name)
	secs := max(1, int(math.Ceil(wait.Seconds())))
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
	s.render(w, r, http.StatusTooManyRequests, messagePage("Slow down", "Too many requests", msg))
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// connLimit is one WebSocket connection's share: its own bucket of frames, its
// address's bucket, and its strikes.
type connLimit struct {
	addr     netip.Addr
	perIP    *limiter
	commands tokens
	strikes  tokens
}

// tokens is a single token bucket (a connection's own: no map, no lock of the server).
type tokens struct {
	rate Rate
	mu   sync.Mutex
	have float64
	last time.Time
}

func newTokens(r Rate) tokens { return tokens{rate: r, have: float64(r.Burst)} }

func (t *tokens) take(now time.Time) bool {
	if t.rate.Per <= 0 {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() {
		per := float64(t.rate.Every) / float64(t.rate.Per)
		t.have = min(float64(t.rate.Burst), t.have+float64(now.Sub(t.last))/per)
	}
	t.last = now
	if t.have >= 1 {
		t.have--
		return true
	}
	return false
}

func (s *Server) connLimit(r *http.Request) *connLimit {
	cfg := s.limits.cfg
	if cfg.Commands.Per <= 0 && cfg.CommandsPerIP.Per <= 0 {
		return nil
	}
	return &connLimit{addr: middleware.GetClientIPAddr(r.Context()), perIP: s.limits.commandsPerIP,
		commands: newTokens(cfg.Commands), strikes: newTokens(cfg.Strikes)}
}

// limited reports whether the frame just read must be dropped unread. It sends the
// client a rate-limited error frame; a client that keeps sending past its strikes is
// closed with 1008. Read loops call it before parsing: a refused frame costs nothing.
func (c *client) limited() bool {
	l := c.limit
	if l == nil {
		return false
	}
	now := time.Now()
	if l.commands.take(now) {
		if ok, _ := l.perIP.allow(l.addr); ok {
			return false
		}
	}
	if c.obs != nil {
		c.obs.rateLimited("commands")
	}
	if l.strikes.rate.Per > 0 && !l.strikes.take(now) {
		c.closeWith(websocket.ClosePolicyViolation, protocol.CloseAbuse, true)
		return true
	}
	c.Send(rateLimitedFrame)
	return true
}

var rateLimitedFrame = protocol.ErrorFrame(0, protocol.CodeRateLimited, "too many commands: this one was dropped unread; slow down")
