// Package natsbroker is a lecture.Broker over NATS, for several playground servers behind
// a load balancer: a lecture's run lives on the presenter's server, its followers
// connect to any server.
//
// The presenter's server numbers each frame once (protocol.Stamp), fans it out to its own
// followers and publishes it once on the lecture's subject. Every other server that has
// followers of the lecture subscribes to that subject and fans the frames out locally; it
// first fetches the checkpoint and log from the presenter's server (request/reply), then
// takes the live frames after them, dropping the numbers it already has, so its followers
// see the same bytes with the same gap-free numbers. A lecture's compact frames (protocol
// 2, lecture.CompactID) are a second stream of their own, carried the same way: encoded
// once on the presenter's server, their bytes go to every server and every follower.
// Join codes, the end of a lecture, answers and forks are questions to the presenter's
// server (request/reply): nothing is kept in NATS, so core NATS without JetStream is
// enough. docs/deploy.md has the whole story and the deployment.
package natsbroker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/teach-dist/playground/internal/defaults"
	"github.com/teach-dist/playground/runtime/lecture"
)

// Options configure a Broker. Zero values take the defaults.
type Options struct {
	// URL is the NATS server, or several separated by commas (default nats://127.0.0.1:4222).
	URL string
	// Prefix starts every subject (default "playground.lecture"): several playgrounds
	// may share one NATS with different prefixes.
	Prefix string
	// Node names this server to the others (default: host name and a random suffix).
	Node string
	// Timeout bounds connecting and every request to another server (default 2 s).
	Timeout time.Duration
	// Heartbeat is how often the presenter's server says a lecture is alive and how far
	// it is, and the other servers report their followers (default 1 s). A lecture not
	// heard of for five heartbeats is unreachable.
	Heartbeat time.Duration
	// ReconnectWait is the pause between attempts to reach NATS again (default 1 s).
	ReconnectWait time.Duration
	Logger        *slog.Logger // default: discard
}

func (o Options) withDefaults() Options {
	if o.URL == "" {
		o.URL = nats.DefaultURL
	}
	if o.Prefix == "" {
		o.Prefix = "playground.lecture"
	}
	if o.Node == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Node = host + "-" + hex.EncodeToString(b[:])
	}
	defaults.Positive(&o.Timeout, 2*time.Second)
	defaults.Positive(&o.Heartbeat, time.Second)
	defaults.Positive(&o.ReconnectWait, time.Second)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Broker is a lecture.Cluster over NATS.
type Broker struct {
	opts Options
	nc   *nats.Conn
	log  *slog.Logger
	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex
	owned   map[string]*stream // lectures this server runs, live or ended and still known
	mirrors map[string]*mirror // lectures of other servers with followers here
	local   func(code string) (lecture.Hosted, bool)
	closed  bool

	pmu      sync.Mutex
	places   map[string]map[string]int // lecture of another server -> client -> places held here
	reported map[string]bool           // lectures whose places the last heartbeat reported
}

var _ lecture.Cluster = (*Broker)(nil)

// CheckURL reports whether s is a list of NATS URLs (nats://host:port, tls://..., comma
// separated), in words for the person who typed it.
func CheckURL(s string) error {
	for _, one := range strings.Split(s, ",") {
		u, err := url.Parse(strings.TrimSpace(one))
		if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
			return fmt.Errorf("%q is not a NATS URL (write nats://host:4222)", one)
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("%q: the scheme must be nats://, tls://, ws:// or wss://", u.Redacted())
		}
	}
	return nil
}

// redact hides passwords in URLs before they reach a message or a log.
func redact(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// Connect reaches the NATS server and returns a broker; it fails at once, saying why,
// when the URL is wrong or no server answers. Once connected the broker rides out NATS
// outages: it reconnects for as long as it lives.
func Connect(opts Options) (*Broker, error) {
	opts = opts.withDefaults()
	if err := CheckURL(opts.URL); err != nil {
		return nil, fmt.Errorf("natsbroker: %w", err)
	}
	for _, tok := range strings.Split(opts.Prefix, ".") {
		if tok == "" || strings.ContainsAny(tok, "*> \t\r\n") {
			return nil, fmt.Errorf("natsbroker: prefix %q: dot-separated words without spaces, * or >", opts.Prefix)
		}
	}
	b := &Broker{opts: opts, log: opts.Logger, stop: make(chan struct{}), done: make(chan struct{}),
		owned: make(map[string]*stream), mirrors: make(map[string]*mirror)}
	nc, err := nats.Connect(opts.URL,
		nats.Name("playground "+opts.Node),
		nats.Timeout(opts.Timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(opts.ReconnectWait),
		nats.DisconnectErrHandler(b.onDisconnect),
		nats.ReconnectHandler(func(*nats.Conn) { b.log.Info("NATS: connected again", "url", redact(opts.URL)) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subj := ""
			if sub != nil {
				subj = sub.Subject
			}
			b.log.Warn("NATS error", "subject", subj, "err", err)
		}),
		nats.NoCallbacksAfterClientClose(),
	)
	if err != nil {
		return nil, fmt.Errorf("natsbroker: cannot connect to NATS at %s: %w", redact(opts.URL), err)
	}
	if !nc.HeadersSupported() {
		nc.Close()
		return nil, fmt.Errorf("natsbroker: the NATS server at %s does not support headers: it must be version 2.2 or later", redact(opts.URL))
	}
	b.nc = nc
	b.log.Info("lectures over NATS", "url", redact(opts.URL), "node", opts.Node, "prefix", opts.Prefix)
	go b.loop()
	return b, nil
}

// Close ends the broker: followers of other servers' lectures are let go, frames not yet
// sent are flushed (within the timeout), the connection closes. Close the web server, and
// so its lectures, first.
func (b *Broker) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	ms := b.takeMirrors()
	b.mu.Unlock()
	close(b.stop)
	<-b.done
	for _, m := range ms {
		m.end(lecture.Unreachable)
	}
	if b.nc.IsConnected() {
		_ = b.nc.FlushTimeout(b.opts.Timeout)
	}
	b.nc.Close()
}

// takeMirrors empties the map of mirrors and returns them. b.mu is held.
func (b *Broker) takeMirrors() []*mirror {
	ms := make([]*mirror, 0, len(b.mirrors))
	for code, m := range b.mirrors {
		ms = append(ms, m)
		delete(b.mirrors, code)
	}
	return ms
}

// onDisconnect lets the followers of other servers' lectures go with a clear reason: no
// frame can reach them now. This server's own lectures and followers carry on.
func (b *Broker) onDisconnect(_ *nats.Conn, err error) {
	b.mu.Lock()
	closed := b.closed
	ms := b.takeMirrors()
	b.mu.Unlock()
	if closed {
		return
	}
	b.log.Warn("NATS: disconnected; followers of lectures on other servers are told, and reconnecting", "err", err, "mirrors", len(ms))
	for _, m := range ms {
		m.end(lecture.Unreachable)
	}
}

// Serve implements lecture.Cluster.
func (b *Broker) Serve(local func(code string) (lecture.Hosted, bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.local = local
}

// hosted finds the lecture of this server that stream id (its protocol-1 or its compact
// stream) belongs to.
func (b *Broker) hosted(id string) (lecture.Hosted, bool) {
	b.mu.Lock()
	local := b.local
	b.mu.Unlock()
	if local == nil {
		return nil, false
	}
	code, _ := lecture.StreamCode(id)
	return local(code)
}

// subject is the subject of what for stream id: PREFIX.C.what for lecture C's
// protocol-1 stream, PREFIX.C.p2.what for its compact stream (lecture.CompactID).
func (b *Broker) subject(id, what string) string {
	code, compact := lecture.StreamCode(id)
	if compact {
		return b.opts.Prefix + "." + code + ".p2." + what
	}
	return b.opts.Prefix + "." + code + "." + what
}

// validCode keeps anything that is not a lecture's stream (a join code, or its
// compact stream's id) out of subjects (no wildcards).
func validCode(id string) bool {
	code, _ := lecture.StreamCode(id)
	c, ok := lecture.NormalizeCode(code)
	return ok && c == code
}

// hasCompact reports whether this server runs the compact stream of lecture code.
func (b *Broker) hasCompact(code string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.owned[lecture.CompactID(code)]
	return ok
}

// Open implements lecture.Broker: this server runs the lecture (code: its protocol-1
// stream, lecture.CompactID(code): its compact one). A code that another server
// answers for is refused (lecture.ErrExists): the registry draws another.
func (b *Broker) Open(code string) (lecture.Stream, error) {
	if !validCode(code) {
		return nil, fmt.Errorf("natsbroker: %q is not a join code", code)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errClosed
	}
	_, mine := b.owned[code]
	b.mu.Unlock()
	if mine {
		return nil, lecture.ErrExists
	}
	if b.nc.IsConnected() { // cut off from NATS, a lecture still starts: the code is unlikely taken
		ctx, cancel := context.WithTimeout(context.Background(), b.opts.Timeout)
		_, err := b.nc.RequestWithContext(ctx, b.subject(code, "rpc.info"), nil)
		cancel()
		if err == nil {
			return nil, lecture.ErrExists
		}
	}
	s := &stream{b: b, code: code, subj: b.subject(code, "frames"), counts: make(map[string]count)}
	sub, err := b.nc.Subscribe(b.subject(code, "rpc.*"), s.serve)
	if err != nil {
		return nil, fmt.Errorf("natsbroker: %w", err)
	}
	s.rpc = sub
	if b.nc.IsConnected() {
		// Once NATS has the subscription, every server finds the lecture.
		_ = b.nc.FlushTimeout(b.opts.Timeout)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.owned[code]; ok || b.closed {
		_ = sub.Unsubscribe()
		return nil, lecture.ErrExists
	}
	b.owned[code] = s
	return s, nil
}

var errClosed = errors.New("natsbroker: the broker is closed")

// Follow implements lecture.Broker: from this server's own stream, or from a mirror of
// the lecture of another server, made for the first of its followers here.
func (b *Broker) Follow(code string, after uint64, f lecture.Follower) (lecture.Subscription, error) {
	b.mu.Lock()
	if s, ok := b.owned[code]; ok {
		b.mu.Unlock()
		hs, err := s.hub.Follow(after, f)
		if err != nil {
			return nil, err
		}
		return hs, nil
	}
	if b.closed || !b.nc.IsConnected() {
		b.mu.Unlock()
		return nil, lecture.ErrUnreachable
	}
	if !validCode(code) {
		b.mu.Unlock()
		return nil, lecture.ErrNoStream
	}
	m := b.mirrors[code]
	if m == nil {
		var err error
		if m, err = b.newMirror(code); err != nil {
			b.mu.Unlock()
			return nil, lecture.ErrUnreachable
		}
		b.mirrors[code] = m
	}
	m.refs++
	b.mu.Unlock()

	sub := &mirrorSub{m: m}
	select {
	case <-m.ready:
	case <-time.After(2 * b.opts.Timeout):
		sub.release()
		return nil, lecture.ErrUnreachable
	}
	if m.err != nil {
		sub.release()
		return nil, m.err
	}
	if after > 0 {
		m.hub.WaitFor(after, b.opts.Timeout)
	}
	hs, err := m.hub.Follow(after, f)
	if err != nil {
		sub.release()
		return nil, err
	}
	sub.hs = hs
	return sub, nil
}

// Lookup implements lecture.Cluster: it asks the server that answers for code.
func (b *Broker) Lookup(ctx context.Context, code string) (lecture.Followed, error) {
	if !validCode(code) {
		return nil, lecture.ErrNoStream
	}
	rep, err := b.call(ctx, code, "info", request{})
	if err != nil {
		return nil, err
	}
	return &remote{b: b, code: code, info: rep}, nil
}

// call asks the presenter's server of a lecture: lecture.ErrNoStream when no server
// answers for it, lecture.ErrUnreachable when NATS cannot carry the question.
func (b *Broker) call(ctx context.Context, code, op string, req request) (reply, error) {
	if !b.nc.IsConnected() {
		return reply{}, lecture.ErrUnreachable
	}
	ctx, cancel := context.WithTimeout(ctx, b.opts.Timeout)
	defer cancel()
	data, _ := json.Marshal(req)
	msg, err := b.nc.RequestWithContext(ctx, b.subject(code, "rpc."+op), data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return reply{}, lecture.ErrNoStream
	case err != nil:
		return reply{}, lecture.ErrUnreachable
	}
	var rep reply
	if json.Unmarshal(msg.Data, &rep) != nil {
		return reply{}, lecture.ErrUnreachable
	}
	return rep, rep.err()
}

// fetch asks the presenter's server for a lecture's checkpoint and log.
func (b *Broker) fetch(code string) (lecture.HubState, error) {
	if !b.nc.IsConnected() {
		return lecture.HubState{}, lecture.ErrUnreachable
	}
	inbox := b.nc.NewRespInbox()
	sub, err := b.nc.SubscribeSync(inbox)
	if err != nil {
		return lecture.HubState{}, lecture.ErrUnreachable
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := b.nc.PublishRequest(b.subject(code, "rpc.sync"), inbox, nil); err != nil {
		return lecture.HubState{}, lecture.ErrUnreachable
	}
	deadline := time.Now().Add(b.opts.Timeout)
	var asm assembler
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return lecture.HubState{}, lecture.ErrNoStream
		case err != nil:
			return lecture.HubState{}, lecture.ErrUnreachable
		}
		if name := m.Header.Get(hError); name != "" {
			if e, ok := errNames[name]; ok {
				return lecture.HubState{}, e
			}
			return lecture.HubState{}, lecture.ErrNoStream
		}
		st, done, err := asm.add(m)
		if err != nil {
			return lecture.HubState{}, lecture.ErrUnreachable
		}
		if done {
			return st, nil
		}
	}
}

// loop beats for this server's lectures and forgets the ended ones the registry forgot.
func (b *Broker) loop() {
	defer close(b.done)
	tick := time.NewTicker(b.opts.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		}
		b.reportPlaces()
		b.mu.Lock()
		owned := make([]*stream, 0, len(b.owned))
		for _, s := range b.owned {
			owned = append(owned, s)
		}
		b.mu.Unlock()
		for _, s := range owned {
			if s.beat() {
				continue
			}
			if _, ok := b.hosted(s.code); ok {
				continue
			}
			// Ended, and the registry no longer knows it: stop answering for it.
			_ = s.rpc.Unsubscribe()
			b.mu.Lock()
			delete(b.owned, s.code)
			b.mu.Unlock()
		}
	}
}

// payloadLimit is how many bytes of frames one message may carry.
func (b *Broker) payloadLimit() int {
	return max(int(b.nc.MaxPayload())-4096, 4096)
}

func (b *Broker) publish(m *nats.Msg) {
	// While NATS is away the client buffers, then refuses; the followers of other
	// servers were told already, and catch up from the checkpoint when they come back.
	_ = b.nc.PublishMsg(m)
}
