package socket

import (
	"encoding/binary"
	"sync"

	"github.com/gorilla/websocket"
)

// Frames that many clients receive, the very same bytes (a lecture's frame, stamped
// once for all its followers: runtime/lecture's Broker), are also framed once. The
// first client to send one makes its websocket.PreparedMessage (the WebSocket frame,
// header and payload, ready to write); every other client finds it by the frame's
// identity, its first byte's address, which is safe because the cache holds the frame:
// no other allocation can take that address while the entry lives. Writing a prepared
// message takes no write buffer from the pool, copies nothing and allocates nothing,
// where WriteMessage does all three for every client (docs/benchmarks.md, "5,000
// followers"). The cache also keeps the frame's bytes as they go on the wire (wire),
// which the fan-out's fast path writes itself (batch.go, tryWrite).

const (
	preparedSlots = 64       // frames remembered, most recent first (a lecture's latest, with its catch-up)
	preparedMax   = 16 << 10 // larger frames (a snapshot of a large run) are framed per client, as before
)

// prepared is the cache of the server's shared frames.
var prepared preparedCache

type preparedCache struct {
	mu    sync.Mutex
	slots [preparedSlots]preparedSlot
	next  int // the slot the next new frame takes
}

type preparedSlot struct {
	frame []byte
	pm    *websocket.PreparedMessage
	wire  []byte
}

// get returns the prepared message of frame, made on its first use, and its wire
// bytes; nil for a frame that is not shared this way (empty, or larger than preparedMax).
func (p *preparedCache) get(frame []byte) (*websocket.PreparedMessage, []byte) {
	if len(frame) == 0 || len(frame) > preparedMax {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k := 1; k <= preparedSlots; k++ { // newest first: the frame being fanned out is the newest
		s := &p.slots[(p.next-k+preparedSlots)%preparedSlots]
		if len(s.frame) == len(frame) && &s.frame[0] == &frame[0] {
			return s.pm, s.wire
		}
	}
	pm, err := websocket.NewPreparedMessage(websocket.TextMessage, frame)
	if err != nil {
		return nil, nil
	}
	wire := serverTextFrame(frame)
	p.slots[p.next] = preparedSlot{frame: frame, pm: pm, wire: wire}
	p.next = (p.next + 1) % preparedSlots
	return pm, wire
}

// serverTextFrame is payload as one WebSocket text frame from a server (RFC 6455
// section 5.2): final, not masked, not compressed (the upgrader negotiates no
// compression), its length in 7, 16 or 64 bits.
func serverTextFrame(payload []byte) []byte {
	const finText = 0x81
	n := len(payload)
	var out []byte
	switch {
	case n < 126:
		out = append(make([]byte, 0, 2+n), finText, byte(n))
	case n <= 0xffff:
		out = append(make([]byte, 0, 4+n), finText, 126, byte(n>>8), byte(n))
	default:
		out = binary.BigEndian.AppendUint64(append(make([]byte, 0, 10+n), finText, 127), uint64(n))
	}
	return append(out, payload...)
}

// SendShared is Send for a frame that many clients receive as the same bytes, which
// must not change from now on (a lecture's stamped frames): it is framed once for all
// of them.
func (c *Client) SendShared(frame []byte) bool {
	pm, wire := prepared.get(frame)
	return c.enqueue(queued{frame: frame, pm: pm, wire: wire})
}
