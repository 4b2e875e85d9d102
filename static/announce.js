// The run's narration for screen readers: one polite live region, written by one
// policy (docs/accessibility.md, "Narration"). While the run plays, at most one
// summary every INTERVAL_MS of what happened since the last one, in words; paused or
// stepping, every event of the step in full, the lit rule's text with it. A text the
// region already holds is never written again. The narration log (#log) keeps the
// whole story to read at leisure and is not itself live.

export const INTERVAL_MS = 2000;

// summarize says in words what the events of a stretch of play did: how many
// messages were sent, received and lost, how many rules fired, the notable events'
// own lines (crashes, recoveries, violations, the end; up to MAX_NOTABLE), and the
// latest line. lines[k] is the narration of events[k] (null where not made).
const MAX_NOTABLE = 3;
export function summarize(from, to, events, lines) {
  let sent = 0, received = 0, lost = 0, rules = 0;
  const notable = [];
  events.forEach((ev, k) => {
    switch (ev.type) {
      case "send": sent++; break;
      case "deliver": received++; break;
      case "drop": lost++; break;
      case "rule": rules++; break;
      default: if (lines[k]) notable.push(lines[k]);
    }
  });
  const counts = [];
  const n = (x, one, many) => `${x} ${x === 1 ? one : many}`;
  if (sent) counts.push(n(sent, "message sent", "messages sent"));
  if (received) counts.push(`${received} received`);
  if (lost) counts.push(`${lost} lost`);
  if (rules) counts.push(n(rules, "rule fired", "rules fired"));
  const parts = [stepsText(from, to)];
  if (counts.length) parts.push(counts.join(", "));
  const shown = notable.slice(-MAX_NOTABLE);
  if (notable.length > shown.length) parts.push(`${notable.length - shown.length} more events`);
  parts.push(...shown);
  const latest = [...lines].reverse().find(Boolean);
  if (latest && !shown.includes(latest)) parts.push(`latest: ${latest}`);
  return parts.join(". ") + ".";
}

// detail says every event of a step (or of the few steps from..to) in full.
export function detail(from, to, lines) {
  const said = lines.filter(Boolean);
  return `${stepsText(from, to)}: ${said.length ? said.join(". ") : "nothing happened"}.`;
}

function stepsText(from, to) {
  return from >= to ? `Step ${to}` : `Steps ${from} to ${to}`;
}

// Announcer writes the live region el. clock: now() in ms, later(fn, ms) and
// cancel(id), the browser's by default (a test gives its own).
export class Announcer {
  constructor(el, clock = {}) {
    this.el = el;
    this.now = clock.now || (() => performance.now());
    this.later = clock.later || ((fn, ms) => setTimeout(fn, ms));
    this.cancel = clock.cancel || ((id) => clearTimeout(id));
    this.last = -Infinity; // when the region was last written
    this.said = el.textContent;
    this.pending = null; // {from, to, events, lines} played since the last summary
    this.timer = null;
  }

  // take follows the events of steps from..to: playing, into the next summary;
  // paused or stepping, said now in full.
  take(events, lines, playing, from, to) {
    if (!events.length) return;
    if (!playing) {
      this.drop();
      this.say(detail(from, to, lines));
      return;
    }
    const p = this.pending ||= { from, to, events: [], lines: [] };
    p.to = to;
    p.events.push(...events);
    p.lines.push(...lines);
    this.schedule();
  }

  // moved says where a jump (a seek, a step back, a restart) left the run, when paused.
  moved(step, line) {
    this.drop();
    this.say(`At step ${step}${line ? `: ${line}` : ""}.`);
  }

  drop() {
    this.pending = null;
    if (this.timer !== null) this.cancel(this.timer);
    this.timer = null;
  }

  schedule() {
    if (this.timer !== null) return;
    const wait = Math.max(0, this.last + INTERVAL_MS - this.now());
    this.timer = this.later(() => this.flush(), wait);
  }

  flush() {
    this.timer = null;
    const p = this.pending;
    if (!p) return;
    if (this.now() - this.last < INTERVAL_MS) { this.schedule(); return; }
    this.pending = null;
    this.say(summarize(p.from, p.to, p.events, p.lines));
  }

  say(text) {
    if (text === this.said) return;
    this.said = text;
    this.last = this.now();
    if (this.el.dataset) this.el.dataset.at = String(Math.round(this.last)); // when, for the tests
    this.el.textContent = text;
  }
}
