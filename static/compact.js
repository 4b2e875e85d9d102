// Compact follower frames (docs/protocol.md, "Compact follower frames"): a lecture
// follower that asks for protocol 2 gets every frame as a JSON array [lseq, ...]. The
// frames of the run that an events frame does not need in full come whole, [lseq, {..}];
// an events frame says only what the follower cannot work out from the view it keeps
// (the clock, every process, the messages in flight, a table of strings). The expander
// turns each back into the protocol-1 frame the rest of the page reads, so nothing
// after it knows the difference. runtime/protocol/expand.go is the same in Go, and the
// compactor there checks every frame against it. The fields of the frames come from the
// Go tables (compact_fields.js, generated).

import { batchTail, clockFields, clockOf, extraFields, nodeFields, nodeView } from "./compact_fields.js";

const pairSep = "\u0000"; // joins a rule and its why into one string of the table

// createExpander returns an expander that has seen nothing: the first frames of a
// follower's stream are a checkpoint (table, hello, snapshot), which set its view.
export function createExpander() {
  const v = { clock: { seq: -1 }, nodes: new Map(), inflight: new Map(), lastMsg: 0, strs: [], payload: new Map() };
  const reset = () => {
    v.clock = { seq: -1 };
    v.nodes = new Map();
    v.inflight = new Map();
    v.lastMsg = 0;
  };
  return {
    // expand takes one parsed compact frame and returns the protocol-1 frame with its
    // lseq, or null for the checkpoint's table (nothing for the page).
    expand(arr) {
      const [lseq, ...rest] = arr;
      const one = rest.length === 1 && rest[0] && typeof rest[0] === "object" && !Array.isArray(rest[0]) && "type" in rest[0];
      if (one && rest[0].type === "table") {
        takeTable(v, rest[0]);
        return null;
      }
      if (one) {
        followWhole(v, rest[0], reset);
        return { lseq, ...rest[0] };
      }
      return { lseq, ...expandEvents(v, rest) };
    },
  };
}

function takeTable(v, t) {
  v.strs = [...(t.strings || [])];
  v.payload = new Map((t.payload || []).map(([typ, ...keys]) => [typ, keys]));
}

const isObject = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

// The kinds of the tables' fields: a value of another type is an error, as in Go.
const isKind = {
  int: Number.isInteger,
  float: (x) => typeof x === "number",
  bool: (x) => typeof x === "boolean",
  string: (x) => typeof x === "string",
  network: isObject,
  arrivals: isObject,
};

// readDelta copies the fields a delta has, by their short keys, into a protocol-1 object.
function readDelta(fields, delta, into) {
  for (const { key, name, kind } of fields) {
    if (!(key in delta)) continue;
    if (!isKind[kind](delta[key])) throw new Error(`compact frame: ${name} ${JSON.stringify(delta[key])} is not of kind ${kind}`);
    into[name] = delta[key];
  }
}

// followWhole takes a frame that came whole into the view.
function followWhole(v, f, reset) {
  switch (f.type) {
    case "hello":
      reset();
      break;
    case "snapshot":
      reset();
      v.clock = clockOf(f);
      for (const n of f.nodes) v.nodes.set(n.id, nodeView(n));
      for (const m of f.inflight) {
        v.inflight.set(m.msg.id, m.msg);
        v.lastMsg = Math.max(v.lastMsg, m.msg.id);
      }
      for (const e of f.recent) if (e.msg) v.lastMsg = Math.max(v.lastMsg, e.msg.id);
      break;
    case "state":
      v.clock = clockOf(f);
      break;
    case "events":
      for (const b of f.batches) {
        for (const e of b.events) if (e.msg) applyEvent(v, e);
        for (const n of b.nodes) v.nodes.set(n.id, nodeView(n));
      }
      v.clock = clockOf(f);
      break;
  }
}

function applyEvent(v, e) {
  if (e.type === "send") v.inflight.set(e.msg.id, e.msg);
  else if (e.type === "deliver" || e.type === "drop") v.inflight.delete(e.msg.id);
  v.lastMsg = Math.max(v.lastMsg, e.msg.id);
}

// unslot reads a string of the table: -place-1, or the string itself, then learned.
function unslot(v, s) {
  if (typeof s === "string") {
    v.strs.push(s);
    return s;
  }
  const k = -s - 1;
  if (!Number.isInteger(s) || k < 0 || k >= v.strs.length) throw new Error(`compact frame: ${s} is not in the table`);
  return v.strs[k];
}

// holder is the process in the critical section (the lowest id), -1 when none is: the
// process a batch's first event belongs to unless it says otherwise.
function holder(v) {
  let h = -1;
  for (const [id, n] of v.nodes) if (n.cs && (h < 0 || id < h)) h = id;
  return h;
}

// The clock fields protocol 1 leaves out when empty.
const clockOmitEmpty = clockFields.filter((f) => f.omitEmpty).map((f) => f.name);

function expandEvents(v, items) {
  let delta = 0;
  let batches = items;
  if (items.length && !Array.isArray(items[0])) [delta, ...batches] = items;
  let { seq, step, t } = v.clock;
  const out = [];
  for (const raw of batches) {
    const b = expandBatch(v, raw, seq, step, t);
    out.push(b.batch);
    ({ seq } = b);
    ({ step, t } = b.batch);
  }
  const clock = { ...v.clock, step, t, seq, horizon: Math.max(v.clock.horizon, step) };
  if (delta) readDelta(clockFields, delta, clock);
  for (const name of clockOmitEmpty) if (!clock[name]) delete clock[name];
  v.clock = clock;
  return { type: "events", ...clock, batches: out };
}

// tailPart is a part of a batch [E, N, ...batchTail] by its name; one left out at the
// end is as it is when it says nothing.
const tailAt = new Map(batchTail.map((p, i) => [p.name, i]));
function tailPart(parts, name) {
  const i = tailAt.get(name);
  return i + 2 < parts.length ? parts[i + 2] : batchTail[i].zero;
}

function expandBatch(v, parts, seq, prevStep, prevT) {
  const [evs, nodes] = parts;
  const [arrive, dt, dstep, extra] = [tailPart(parts, "arrive"), tailPart(parts, "dt"), tailPart(parts, "dstep"), tailPart(parts, "extra")];
  const batch = { step: prevStep + 1 + dstep, t: prevT + dt };
  let cur = holder(v);
  const sent = [];
  const memo = { typ: null, vals: null };
  // [to, to..]: one send like the previous one per addressee.
  const flat = evs.flatMap((ce) => (Array.isArray(ce) && ce.length > 1 && ce.every((x) => typeof x === "number" && x >= 0) ? ce.map((to) => [to]) : [ce]));
  batch.events = flat.map((ce) => {
    const e = expandEvent(v, memo, ce, seq + 1, batch.t, cur);
    seq = e.seq;
    if (e.node !== undefined) cur = e.node;
    if (e.msg) {
      if (e.type === "send") sent.push(e.msg.id);
      applyEvent(v, e);
    }
    return e;
  });
  batch.nodes = nodes.map((cn) => {
    const n = expandNode(v, cn);
    v.nodes.set(n.id, nodeView(n));
    return n;
  });
  if (Array.isArray(arrive)) {
    if (arrive.length !== sent.length) throw new Error("compact frame: arrivals do not match the messages sent");
    batch.arrive = {};
    arrive.forEach((o, i) => { batch.arrive[sent[i]] = batch.t + o; });
  } else {
    batch.arrive = arrive;
  }
  readDelta(extraFields, extra, batch);
  return { batch, seq };
}

function expandEvent(v, memo, ce, seq, t, cur) {
  const head = (type, node) => ({ seq, t, type, node });
  if (typeof ce === "number" && ce >= 0) {
    const msg = v.inflight.get(v.lastMsg - ce);
    if (!msg) throw new Error(`compact frame: deliver of message ${v.lastMsg - ce}, which is not in flight`);
    return { ...head("deliver", msg.to), msg };
  }
  if (typeof ce === "number" || typeof ce === "string") return head(unslot(v, ce), cur);
  if (!Array.isArray(ce)) return "seq" in ce ? ce : { seq, t, ...ce };
  const [first, ...more] = ce;
  if (typeof first === "string" || first < 0) {
    const s = unslot(v, first);
    if (more.length === 1 && typeof more[0] === "number" && more[0] >= 0) return head(s, more[0]);
    const pair = s.indexOf(pairSep);
    if (pair >= 0) return { ...head("rule", cur), rule: s.slice(0, pair), why: s.slice(pair + 1) };
    const e = { ...head("rule", cur), rule: s };
    if (more.length) {
      e.why = unslot(v, more[0]);
      v.strs.push(s + pairSep + e.why);
    }
    return e;
  }
  // A send of the next message id by the current process.
  let typ;
  let vals;
  if (more.length === 0) {
    if (!memo.vals) throw new Error("compact frame: a send like the previous one, with none before it");
    typ = memo.typ;
    vals = memo.vals;
  } else {
    typ = unslot(v, more[0]);
    vals = more.slice(1);
  }
  const msg = { id: v.lastMsg + 1, type: typ, from: cur, to: first };
  const keys = v.payload.get(typ);
  if (keys) {
    if (vals.length !== keys.length) throw new Error(`compact frame: a ${typ} message has ${vals.length} payload values for ${keys.length} keys`);
    keys.forEach((k, i) => { msg[k] = vals[i]; });
    memo.typ = typ;
    memo.vals = vals;
  } else {
    const payload = vals[0] || {};
    v.payload.set(typ, Object.keys(payload));
    Object.assign(msg, payload);
    memo.typ = typ;
    memo.vals = Object.values(payload);
  }
  return { ...head("send", cur), msg };
}

function expandNode(v, cn) {
  if (!Array.isArray(cn)) return cn;
  const [id, s, f] = cn;
  const old = v.nodes.get(id);
  if (!old) throw new Error(`compact frame: process ${id} has no view to change`);
  const n = { ...old };
  if (Array.isArray(s)) {
    const keys = Object.keys(old.state);
    const state = { ...old.state };
    for (let i = 0; i < s.length; i += 2) {
      const k = s[i];
      if (typeof k === "string") state[keys[Number(k)]] = unslot(v, s[i + 1]); // a string of the table
      else if (k < 0) state[keys[-k - 1]] = [...state[keys[-k - 1]], ...s[i + 1]];
      else state[keys[k]] = s[i + 1];
    }
    n.state = state;
  } else {
    n.state = s;
  }
  if (f) readDelta(nodeFields, f, n);
  return n;
}
