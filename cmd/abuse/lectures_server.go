package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web"
	"github.com/teach-dist/playground/web/ratelimit"
)

// target is a playground served on loopback with `serve`'s default limits, behind a
// "proxy" at 127.0.0.0/8: X-Forwarded-For picks which client a request is, so one
// machine plays several networks.
type target struct {
	srv  *web.Server
	http *http.Server
	base string // http://127.0.0.1:port
}

func startTarget() (*target, error) { return startTargetWith(web.Options{}) }

// startTargetWith is startTarget with opts (serve's rate limits and the proxy added).
func startTargetWith(opts web.Options) (*target, error) {
	clientIP, err := ratelimit.ClientIP("127.0.0.0/8")
	if err != nil {
		return nil, err
	}
	opts.Limits, opts.ClientIP = ratelimit.DefaultLimits(), clientIP
	srv := web.New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	return &target{srv: srv, http: hs, base: "http://" + ln.Addr().String()}, nil
}

func (t *target) close() {
	t.srv.Close()
	_ = t.http.Close()
}

var sessionRE = regexp.MustCompile(`data-session="([^"]+)"`)

// session loads path as client addr and returns the page's session id and cookies.
func (t *target) session(addr, path string) (string, http.CookieJar, error) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 2 * time.Minute}
	req, _ := http.NewRequest(http.MethodGet, t.base+path, nil)
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := c.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := sessionRE.FindSubmatch(body)
	if m == nil {
		return "", nil, fmt.Errorf("GET %s: %d, no session", path, resp.StatusCode)
	}
	return string(m[1]), jar, nil
}

// dial opens a WebSocket at path as client addr.
func (t *target) dial(addr, path string) (*websocket.Conn, error) {
	h := http.Header{"Origin": {t.base}, "X-Forwarded-For": {addr}}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(t.base, "http")+path, h)
	if err != nil && resp != nil {
		return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
	}
	return conn, err
}

// lecture starts a lecture from a run of path as client addr: the presenter's socket
// and the join code.
func (t *target) lecture(addr, path string) (*websocket.Conn, string, error) {
	id, jar, err := t.session(addr, path)
	if err != nil {
		return nil, "", err
	}
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, t.base+"/lecture", strings.NewReader(url.Values{"session": {id}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if !strings.HasPrefix(loc, "/lecture/present/") {
		return nil, "", fmt.Errorf("POST /lecture: %d %q", resp.StatusCode, loc)
	}
	p, err := t.dial(addr, "/ws/present/"+strings.TrimPrefix(loc, "/lecture/present/"))
	if err != nil {
		return nil, "", err
	}
	for {
		_ = p.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := p.ReadMessage()
		if err != nil {
			p.Close()
			return nil, "", err
		}
		if fr, err := protocol.Decode(b); err == nil {
			if l, ok := fr.(*protocol.PresenterLecture); ok && l.Code != "" {
				return p, l.Code, nil
			}
		}
	}
}
