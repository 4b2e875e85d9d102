// Package browser is a browser of a playground on loopback, for the load and abuse
// tools: one client with its cookies, which the server tells apart from the others
// either by a loopback address of its own (127.0.0.0/8 is all loopback on Linux) or,
// behind the server's trusted proxy, by X-Forwarded-For. It loads pages, opens runs,
// starts lectures and opens the pages' sockets as a page does.
package browser

import (
	"context"
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
)

// Client is one browser.
type Client struct {
	Base string       // the server, http://host:port
	Addr string       // the address the server knows the client by
	HTTP *http.Client // with the client's cookies

	ws        *websocket.Dialer
	forwarded bool
}

// At is a client whose requests and sockets leave from addr, a loopback address.
func At(base, addr string) *Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
	c := &Client{Base: base, Addr: addr,
		HTTP: &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}},
		ws:   &websocket.Dialer{NetDialContext: d.DialContext, HandshakeTimeout: 10 * time.Second}}
	c.Fresh()
	return c
}

// forwardedTransport serves every forwarded client: their address is in a header, not
// in the connection.
var forwardedTransport = &http.Transport{MaxIdleConnsPerHost: 64}

// Forwarded is a client of a server that trusts a proxy at 127.0.0.0/8: its requests
// and sockets say X-Forwarded-For: addr, so one machine plays several networks (IPv6
// ones too).
func Forwarded(base, addr string) *Client {
	c := &Client{Base: base, Addr: addr, forwarded: true,
		HTTP: &http.Client{Timeout: 5 * time.Minute, Transport: forwardedTransport},
		ws:   &websocket.Dialer{HandshakeTimeout: 10 * time.Second}}
	c.Fresh()
	return c
}

// Fresh forgets the client's cookies: its next page starts a new run.
func (c *Client) Fresh() { c.HTTP.Jar, _ = cookiejar.New(nil) }

// Do sends req as the client.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	c.vouch(req.Header)
	return c.HTTP.Do(req)
}

// vouch says who the client is in h, as the trusted proxy would, if it is forwarded.
func (c *Client) vouch(h http.Header) {
	if c.forwarded {
		h.Set("X-Forwarded-For", c.Addr)
	}
}

// Get asks for path.
func (c *Client) Get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Base+path, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

var sessionAttr = regexp.MustCompile(`data-session="([^"]+)"`)

// Page loads path and returns its status and the run (session) it names, if any.
func (c *Client) Page(path string) (int, string, error) {
	resp, err := c.Get(context.Background(), path)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", err
	}
	id := ""
	if m := sessionAttr.FindSubmatch(b); m != nil {
		id = string(m[1])
	}
	return resp.StatusCode, id, nil
}

// Run opens path as a new run (without the client's cookies: a reload would resume
// its last run) and returns the run's session.
func (c *Client) Run(path string) (string, error) {
	c.Fresh()
	code, id, err := c.Page(path)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK || id == "" {
		return "", fmt.Errorf("GET %s: %d, no session", path, code)
	}
	return id, nil
}

// Dial opens the WebSocket at path as the page does (with its Origin).
func (c *Client) Dial(path string) (*websocket.Conn, error) {
	return c.dial(c.ws, path)
}

// DialStalled is Dial with a receive buffer of n bytes, for a socket nobody reads: as a
// phone on a stalled network, it is full after n bytes and the server's writes wait.
func (c *Client) DialStalled(path string, n int) (*websocket.Conn, error) {
	d := *c.ws
	netDial := d.NetDialContext
	if netDial == nil {
		netDial = (&net.Dialer{}).DialContext
	}
	d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := netDial(ctx, network, addr)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(n)
		}
		return conn, err
	}
	return c.dial(&d, path)
}

func (c *Client) dial(d *websocket.Dialer, path string) (*websocket.Conn, error) {
	h := http.Header{"Origin": {c.Base}}
	c.vouch(h)
	conn, resp, err := d.Dial("ws"+strings.TrimPrefix(c.Base, "http")+path, h)
	if err != nil && resp != nil {
		return nil, fmt.Errorf("%w (HTTP %d)", err, resp.StatusCode)
	}
	return conn, err
}

// Socket opens the WebSocket at path and reads it up to the run's snapshot.
func (c *Client) Socket(path string) (*websocket.Conn, error) {
	conn, err := c.Dial(path)
	if err != nil {
		return nil, err
	}
	if _, err := readUntil(conn, func(f protocol.Frame) bool { return f.Type() == "snapshot" }); err != nil {
		conn.Close()
		return nil, fmt.Errorf("before the snapshot: %w", err)
	}
	return conn, nil
}

// PostLecture starts a lecture from run session as its page's "Start lecture" does: it
// returns POST /lecture's status and, when it answers 303, the presenter's token.
func (c *Client) PostLecture(session string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, c.Base+"/lecture", strings.NewReader(url.Values{"session": {session}}.Encode()))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	c.vouch(req.Header)
	noFollow := *c.HTTP
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noFollow.Do(req)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	token, ok := strings.CutPrefix(resp.Header.Get("Location"), "/lecture/present/")
	if resp.StatusCode != http.StatusSeeOther || !ok {
		return resp.StatusCode, "", nil
	}
	return resp.StatusCode, token, nil
}

// Present opens the presenter's socket of the lecture of token and reads it up to the
// lecture's join code.
func (c *Client) Present(token string) (*websocket.Conn, string, error) {
	conn, err := c.Dial("/ws/present/" + token)
	if err != nil {
		return nil, "", err
	}
	f, err := readUntil(conn, func(f protocol.Frame) bool {
		l, ok := f.(*protocol.PresenterLecture)
		return ok && l.Code != ""
	})
	if err != nil {
		conn.Close()
		return nil, "", fmt.Errorf("the presenter got no join code: %w", err)
	}
	return conn, f.(*protocol.PresenterLecture).Code, nil
}

// Lecture opens path as a new run, starts a lecture from it and opens the presenter's
// socket: it returns the socket and the join code.
func (c *Client) Lecture(path string) (*websocket.Conn, string, error) {
	id, err := c.Run(path)
	if err != nil {
		return nil, "", err
	}
	code, token, err := c.PostLecture(id)
	if err != nil {
		return nil, "", err
	}
	if token == "" {
		return nil, "", fmt.Errorf("POST /lecture: %d, no lecture", code)
	}
	return c.Present(token)
}

// readUntil reads conn until a frame that done accepts, each within 10 s.
func readUntil(conn *websocket.Conn, done func(protocol.Frame) bool) (protocol.Frame, error) {
	defer conn.SetReadDeadline(time.Time{})
	for {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, b, err := conn.ReadMessage()
		if err != nil {
			return nil, err
		}
		if f, err := protocol.Decode(b); err == nil && done(f) {
			return f, nil
		}
	}
}
