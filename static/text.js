// The words the page shows for the run's things: a message's payload, a message in
// flight, a trace event, a variable's value, a formula, a number. Pure: no DOM.

const ENVELOPE = ["id", "type", "from", "to"];

// payloadText is a message's payload, "(ts=3, ids=[1,2])", or "" when it has none.
export function payloadText(msg) {
  const extra = Object.entries(msg).filter(([k]) => !ENVELOPE.includes(k));
  if (!extra.length) return "";
  return "(" + extra.map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(",")}]` : v}`).join(", ") + ")";
}

// spaced is payloadText with a leading space, to follow a message's name.
function spaced(msg) {
  const p = payloadText(msg);
  return p ? " " + p : "";
}

// describeInflight says what a message in flight ({msg, sent, at}) is and when it lands.
export function describeInflight(f) {
  const m = f.msg;
  const extra = Object.entries(m).filter(([k]) => !ENVELOPE.includes(k));
  const payload = extra.map(([k, v]) => `${k}=${Array.isArray(v) ? `[${v.join(", ")}]` : v}`).join(", ");
  const when = f.at < 0 ? "held: you choose when it arrives" : `sent at t=${f.sent}, arrives at t=${f.at}`;
  return `${m.type} #${m.id}: P${m.from} → P${m.to}${payload ? `, ${payload}` : ""} (${when})`;
}

// describeEvent says what a trace event did, from its process's point of view.
export function describeEvent(ev) {
  const m = ev.msg;
  switch (ev.type) {
    case "send": return `sends ${m.type} #${m.id} to P${m.to}${spaced(m)}`;
    case "deliver": return `receives ${m.type} #${m.id} from P${m.from}${spaced(m)}`;
    case "rule": return `rule ${ev.rule}${ev.why ? ` (${ev.why})` : ""}`;
    case "request": return "asks for the CS";
    case "enter": return "enters the CS";
    case "exit": return "leaves the CS";
    case "elect": return "starts an election";
    case "leader": return ev.leader === ev.node ? "becomes the leader" : `takes P${ev.leader} as leader`;
    case "crash": return "crashes";
    case "recover": return "recovers";
    case "timer": return `timer ${ev.name} fires`;
    case "drop": return `${m.type} #${m.id} is lost (${ev.reason})`;
    case "violation": return `violation: ${ev.property}: ${ev.detail}`;
    case "partition": return `partition ${groupsText(ev.groups, " ")}`;
    case "heal": return "the partition heals";
    default: return ev.type;
  }
}

// narration is what a process did, in the log's words after its name, for the events
// that are only a process doing something (null for the others).
export function narration(ev) {
  switch (ev.type) {
    case "request": return " wants to enter the critical section";
    case "enter": return " enters the critical section";
    case "exit": return " leaves the critical section";
    case "elect": return " suspects the leader and starts an election";
    case "leader": return ev.leader === ev.node ? " is now the leader" : ` now takes P${ev.leader} as leader`;
    case "crash": return " crashes";
    case "recover": return " recovers with a fresh state";
    case "timer": return `: its ${ev.name} timer fires`;
    default: return null;
  }
}

// describeMessage says where a message of the space-time diagram went: m carries its
// ids (from, to: positions in ids), its steps and its fate.
export function describeMessage(m, ids) {
  const where = m.fate === "delivered" ? `delivered at step ${m.eStep}` :
    m.fate === "dropped" ? `lost at step ${m.eStep} (${m.reason})` : "still in flight";
  return `${m.type} #${m.id}: P${ids[m.from]} → P${ids[m.to]}${spaced(m.msg)}, sent at step ${m.sStep}, ${where}`;
}

// valueText is a process variable as the inspector shows it.
export function valueText(v) {
  if (v === true) return "yes";
  if (v === false) return "no";
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) {
    if (!v.length) return "—";
    if (Array.isArray(v[0])) return v.map((p) => `(${p.join(",")})`).join(" ");
    return v.join(", ");
  }
  return String(v);
}

// groupsText writes a partition as "{P1 P2} | {P3}"; sep separates the groups.
export function groupsText(groups, sep) {
  return groups.map((g) => `{${g.map((id) => `P${id}`).join(" ")}}`).join(sep);
}

// round2 is a number with at most two decimals, as text ("" for none).
export function round2(v) {
  if (v === null || v === undefined) return "";
  return String(Math.round(v * 100) / 100);
}

// figureText writes a cost figure with its number for the run. A count: "3(N-1) = 12".
// A delay, which the figures give in message times T: "2T: 4 = 2 T", in time units
// first and then in T, as the measured column writes it (the panel's head says T).
export function figureText(formula, value, time, unit) {
  if (value === null || value === undefined) return formula;
  if (unit === "time") {
    const inT = `${round2(value)} T`;
    return time === null || time === undefined ? `${formula}: ${inT}` : `${formula}: ${round2(time)} = ${inT}`;
  }
  return formula === round2(value) ? formula : `${formula} = ${round2(value)}`;
}

// rangeText writes a figure that is a range ({low, high, lowTime, highTime}, the server's
// cost.Range) with its bounds for the run, as figureText writes one number: a count
// "0 to 2(N-1) = 0 to 8", a delay "T to 2T: 2 to 4 = 1 to 2 T".
export function rangeText(formula, range, unit) {
  const bounds = `${round2(range.low)} to ${round2(range.high)}`;
  if (unit === "time") {
    const times = range.lowTime === undefined || range.highTime === undefined ? "" : `${round2(range.lowTime)} to ${round2(range.highTime)} = `;
    return `${formula}: ${times}${bounds} T`;
  }
  return formula === bounds ? formula : `${formula} = ${bounds}`;
}

// notesText names the notes that give a figure: "notes 000, 004".
export function notesText(list) {
  return `${list.length === 1 ? "note" : "notes"} ${list.join(", ")}`;
}

// shortFormula keeps the formula without its explanation, as the compare page does:
// "3" from "3 (REQUEST, GRANT, RELEASE); 0 for ...", "N²-N-1" from "... = N²-N-1, O(N²)".
export function shortFormula(f) {
  f = f.split(/: |; /)[0];
  for (let i = f.indexOf(" ("); i >= 0; i = f.indexOf(" (", i + 2)) {
    if (/^ \([^)]*[A-Za-z]{3}/.test(f.slice(i))) { f = f.slice(0, i); break; }
  }
  f = f.split(", ")[0];
  const eq = f.lastIndexOf(" = ");
  if (eq >= 0) f = f.slice(eq + 3);
  return f.trim();
}

// namesText lists processes as words: "P1", "P1 and P3", "P1, P2 and P3".
export function namesText(ids) {
  const names = ids.map((id) => `P${id}`);
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

const HOW_MANY = ["None", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"];

// violationText is the status pill's words for a violation event (trace v1, with the
// processes it is about and a deadlock's cycle): "Deadlock: P1 -> P2 -> P3 -> P1".
export function violationText(ev) {
  const nodes = ev.nodes || [];
  switch (ev.property) {
    case "deadlock":
      if (ev.cycle?.length) return `Deadlock: ${ev.cycle.map((id) => `P${id}`).join(" -> ")}`;
      // No wait-for cycle: a stall (a crash, a lost message), not a deadlock.
      if (nodes.length) return `Stalled, no wait-for cycle: ${namesText(nodes)} ${nodes.length === 1 ? "waits" : "wait"} and nothing can come`;
      break;
    case "mutual-exclusion":
      if (nodes.length >= 2) return `${HOW_MANY[nodes.length] || nodes.length} in the CS: ${namesText(nodes)}`;
      break;
    case "pending":
      if (nodes.length) return `Waiting too long: ${namesText(nodes)}`;
      break;
    case "leader":
      return `No agreed leader: ${ev.detail}`;
  }
  return `Violation: ${ev.property}: ${ev.detail}`;
}
