// The client's copy of the run, fed by the server's frames (docs/protocol.md). Every
// view is drawn from this model alone, so a view rebuilt from a snapshot equals the
// one reached by following the events live.

export function newModel() {
  return {
    ids: [],
    index: new Map(), // id -> position
    nodes: [], // {id, alive, cs, leader, group, state, rules}
    inflight: new Map(), // message id -> {msg, sent, at}
    lit: [], // [{node, rule}] rules of the latest batch that fired any
    recent: [], // latest trace events, for the log
    recentMax: 100,
    step: 0, t: 0, horizon: 0,
    playing: false, speed: 1, quiet: false, interventions: 0, stopped: "",
    slowed: 0, // the fraction of its speed the run goes at while the server is busy (0: its own)
    rate: 2,
    scenario: null, network: null, seed: 0, cs: 0, name: "",
    version: 0, // bumps on every change, so views redraw only when needed
    topology: 0, // bumps when the set of processes changes
  };
}

function clock(m, f) {
  m.step = f.step; m.t = f.t; m.horizon = f.horizon;
  m.playing = f.playing; m.speed = f.speed; m.quiet = f.quiet;
  m.interventions = f.interventions; m.stopped = f.stopped || "";
  m.slowed = f.slowed || 0;
}

export function applyHello(m, f) {
  m.ids = f.ids.slice();
  m.index = new Map(m.ids.map((id, i) => [id, i]));
  m.scenario = f.scenario; m.network = f.network; m.seed = f.seed; m.cs = f.cs;
  m.rate = f.rate; m.recentMax = f.recentMax; m.name = f.name;
  m.topology++;
  m.version++;
}

function nodeOf(v, rules) {
  return { id: v.id, alive: v.alive, cs: v.cs, token: v.token, leader: v.leader, group: v.group, state: v.state, rules };
}

export function applySnapshot(m, f) {
  clock(m, f);
  if (f.nodes.length !== m.nodes.length) m.topology++;
  m.nodes = f.nodes.map((v) => nodeOf(v, v.rules || []));
  m.inflight = new Map();
  for (const x of f.inflight) m.inflight.set(x.msg.id, { msg: x.msg, sent: x.sent, at: x.at });
  m.lit = f.lit.slice();
  m.recent = f.recent.slice(-m.recentMax);
  m.version++;
}

// applyEvents follows one events frame, batch by batch, exactly as the server tracks
// them: the rules of a batch replace the lit rules, and a process's own latest rules.
export function applyEvents(m, f) {
  const dropped = [];
  for (const b of f.batches) {
    let hasRules = false;
    const touched = new Set();
    for (const ev of b.events) {
      m.recent.push(ev);
      switch (ev.type) {
        case "send": {
          const at = b.arrive[ev.msg.id];
          if (at !== undefined) m.inflight.set(ev.msg.id, { msg: ev.msg, sent: ev.t, at });
          break;
        }
        case "deliver":
          m.inflight.delete(ev.msg.id);
          break;
        case "drop":
          if (m.inflight.delete(ev.msg.id)) dropped.push(ev.msg.id);
          break;
        case "rule": {
          if (!hasRules) { m.lit = []; hasRules = true; }
          m.lit.push({ node: ev.node, rule: ev.rule });
          const i = m.index.get(ev.node);
          if (i !== undefined) {
            if (!touched.has(i)) { m.nodes[i].rules = []; touched.add(i); }
            m.nodes[i].rules.push(ev.rule);
          }
          break;
        }
      }
    }
    for (const v of b.nodes) {
      const i = m.index.get(v.id);
      if (i !== undefined) m.nodes[i] = nodeOf(v, m.nodes[i].rules);
    }
  }
  if (m.recent.length > m.recentMax) m.recent.splice(0, m.recent.length - m.recentMax);
  clock(m, f);
  m.version++;
  return dropped;
}

export function applyState(m, f) {
  clock(m, f);
  m.version++;
}

// Leaders: the ids some live process takes as leader.
export function leaders(m) {
  const out = new Set();
  for (const n of m.nodes) if (n.alive && n.leader >= 0) out.add(n.leader);
  return out;
}

// The server says who holds the token (algorithms that have one tell the kernel).
export function holdsToken(n) {
  return n.token === true;
}

// The order in which standing violations are worth showing: the one that breaks the
// algorithm's promise first.
const VIOLATION_RANK = ["mutual-exclusion", "deadlock", "leader", "pending"];

// standingViolation is the violation the run is in at the step shown (null: none),
// from the latest events: a quiescent finding (deadlock, leader) stands until anything
// else happens; two in the CS stand while two of them are still inside; a request
// waiting too long stands until its process enters the CS, leaves it or crashes. Of
// several, the one ranked first in VIOLATION_RANK.
export function standingViolation(m) {
  let best = null;
  const rank = (ev) => { const k = VIOLATION_RANK.indexOf(ev.property); return k < 0 ? VIOLATION_RANK.length : k; };
  for (let k = m.recent.length - 1; k >= 0; k--) {
    const ev = m.recent[k];
    if (ev.type !== "violation" || !stands(m, ev, k)) continue;
    if (!best || rank(ev) < rank(best)) best = ev;
  }
  return best;
}

function stands(m, ev, k) {
  const later = m.recent.slice(k + 1);
  const nodes = ev.nodes || [];
  switch (ev.property) {
    case "mutual-exclusion":
      return nodes.filter((id) => m.nodes[m.index.get(id)]?.cs).length >= 2;
    case "pending":
      return !later.some((x) => nodes.includes(x.node) && (x.type === "enter" || x.type === "exit" || x.type === "crash"));
    default:
      return !later.some((x) => x.type !== "violation" && x.type !== "end");
  }
}
