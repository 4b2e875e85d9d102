// The page's WebSocket to its session: connects, reconnects with a growing pause, and
// numbers the commands it sends (ref) so that an error frame can name the one it is
// about. docs/protocol.md. A lecture follower's compact frames (JSON arrays) are
// expanded here into the frames the rest of the page reads.

import { createExpander } from "./compact.js";

// createConnection makes the connection of the page whose main element is root: its
// data-ws is the socket's path, read at every (re)connection (a lecture follower
// moves it on as frames come), and its data-ready says false while disconnected.
// on.frame(f) takes each frame, on.status(state, text) shows the link's state.
export function createConnection(root, on) {
  return { root, on, ws: null, ref: 0, retry: 0, gone: false, expander: createExpander() };
}

// connect opens the socket; when it closes, it opens it again after 1 s, 2 s, 4 s ...
// up to 32 s, unless the run has ended (end).
export function connect(conn) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}${conn.root.dataset.ws}`);
  conn.ws = ws;
  conn.on.status("connecting", "Connecting…");
  ws.onopen = () => { conn.retry = 0; };
  ws.onmessage = (e) => {
    let f;
    try { f = JSON.parse(e.data); } catch { return; }
    if (Array.isArray(f)) {
      // The expander's view lasts across reconnections: the stream resumes after the
      // last frame taken, or starts over from a checkpoint.
      try {
        f = conn.expander.expand(f);
      } catch (err) {
        // A frame that does not fit the view: start over from a checkpoint.
        console.error(err);
        conn.root.dataset.ws = conn.root.dataset.ws.replace(/&after=\d+/, "");
        conn.ws?.close();
        return;
      }
      if (!f) return;
    }
    conn.on.frame(f);
  };
  ws.onclose = () => {
    conn.ws = null;
    conn.root.dataset.ready = "false";
    if (conn.gone) return;
    conn.on.status("offline", "Disconnected: retrying…");
    conn.retry = Math.min(conn.retry + 1, 6);
    setTimeout(() => connect(conn), 500 * 2 ** conn.retry);
  };
}

// connected: the socket is open.
export function connected(conn) {
  return conn.ws !== null && conn.ws.readyState === WebSocket.OPEN;
}

// send sends a command frame with the next ref and returns that ref, or 0 when the
// socket is not open.
export function send(conn, frame) {
  if (!connected(conn)) return 0;
  frame.ref = ++conn.ref;
  conn.ws.send(JSON.stringify(frame));
  return frame.ref;
}

// end stops reconnecting: the run is gone.
export function end(conn) {
  conn.gone = true;
}
