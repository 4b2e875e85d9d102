package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/teach-dist/playground/runtime/protocol"
	"github.com/teach-dist/playground/web"
	"github.com/teach-dist/playground/web/ratelimit"
)

// fairServer starts a playground with serve's default rate limits on 127.0.0.1 and
// returns its URL and a stop func.
func fairServer(ctx context.Context, opts web.Options) (string, func(), error) {
	opts.Limits = ratelimit.DefaultLimits()
	srv := web.New(opts)
	ctx, cancel := context.WithCancel(ctx)
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe(ctx, "127.0.0.1:0", func(a string) { addrc <- a }) }()
	select {
	case a := <-addrc:
		return "http://" + a, func() { cancel(); <-errc }, nil
	case err := <-errc:
		cancel()
		return "", nil, err
	}
}

// fairClient is a browser at one loopback address (127.0.0.0/8 is all loopback on
// Linux): its requests and sockets leave from that address, so the server sees it as
// its own client.
type fairClient struct {
	addr string
	http *http.Client
	ws   *websocket.Dialer
}

func newFairClient(addr string) *fairClient {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
	jar, _ := cookiejar.New(nil)
	return &fairClient{addr: addr,
		http: &http.Client{Jar: jar, Timeout: 5 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}},
		ws:   &websocket.Dialer{NetDialContext: d.DialContext, HandshakeTimeout: 10 * time.Second}}
}

// fresh forgets the client's cookies: its next page starts a new run.
func (c *fairClient) fresh() { c.http.Jar, _ = cookiejar.New(nil) }

var sessionAttr = regexp.MustCompile(`data-session="([^"]+)"`)

// page loads a page and returns its status and the session it names, if any.
func (c *fairClient) page(url string) (int, string, error) {
	resp, err := c.http.Get(url)
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

// socket opens the session's WebSocket and reads until its snapshot.
func (c *fairClient) socket(base, id string) (*websocket.Conn, error) {
	return c.socketAt(base, "/ws/"+id)
}

// socketAt opens the WebSocket at path and reads until its snapshot.
func (c *fairClient) socketAt(base, path string) (*websocket.Conn, error) {
	conn, _, err := c.ws.Dial("ws"+strings.TrimPrefix(base, "http")+path, http.Header{"Origin": {base}})
	if err != nil {
		return nil, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, b, err := conn.ReadMessage()
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("before the snapshot: %w", err)
		}
		if fr, err := protocol.Decode(b); err == nil && fr.Type() == "snapshot" {
			_ = conn.SetReadDeadline(time.Time{})
			return conn, nil
		}
	}
}

// visit is a fresh visitor at addr: it loads a playground page and opens its socket
// until the snapshot, and says how long that took (or what failed).
func visit(base, addr string) string {
	c := newFairClient(addr)
	start := time.Now()
	code, id, err := c.page(base + "/play/bully?n=3")
	if err != nil || code != http.StatusOK {
		return fmt.Sprintf("page %d %v", code, err)
	}
	conn, err := c.socket(base, id)
	if err != nil {
		return "socket: " + err.Error()
	}
	conn.Close()
	return fmt.Sprintf("page, socket and snapshot in %v", time.Since(start).Round(time.Millisecond))
}
