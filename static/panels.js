// The panels beside the view: pseudocode with the fired rules lit, the inspector of
// every variable and message in flight, and the narration log.

import { WORKLOAD_TITLE } from "./workload.js";
import { leaders, holdsToken } from "./model.js";
import { htmlEl } from "./dom.js";
import { messageClasses } from "./layout.js";
import { payloadText, valueText, groupsText, narration } from "./text.js";
import { FAST_SPEED } from "./clock.js";

// INFLIGHT_FAST is how many messages in flight the inspector lists while the run plays
// fast (showInflight); paused, 60.
const INFLIGHT_FAST = 12;

export class Code {
  constructor(root, follow) {
    this.root = root;
    this.follow = follow;
    this.rules = new Map([...root.querySelectorAll(".rule")].map((e) => [e.dataset.rule, e]));
    this.key = "";
    this.shown = ""; // the rules hello gave (JSON), "" while the page's own show
    this.drawn = null; // the page's own rules, kept while others show
  }

  // setRules shows the run's own rules (hello.rules: a Starlark source's, after Run or
  // on a lecture's page), or, without them, those the page was drawn with.
  setRules(rules) {
    const key = rules ? JSON.stringify(rules) : "";
    if (key === this.shown) return;
    this.shown = key;
    this.drawn ??= [...this.root.childNodes];
    this.root.replaceChildren(...(rules ? ruleGroups(rules) : this.drawn));
    this.root.dataset.rules = rules ? "run" : "page";
    this.rules = new Map([...this.root.querySelectorAll(".rule")].map((e) => [e.dataset.rule, e]));
    this.key = ""; // light them again at the next show
  }

  // show lights the rules of the latest batch, or, when a process is selected, the
  // rules that process fired last; each carries tags of the processes, in their colours.
  show(model, selected) {
    let lit = model.lit;
    if (selected >= 0 && model.nodes[selected]) {
      const n = model.nodes[selected];
      lit = n.rules.map((rule) => ({ node: n.id, rule }));
      this.follow.textContent = `following P${n.id}`;
    } else {
      this.follow.textContent = "the latest rule of any process";
    }
    const key = JSON.stringify(lit) + "|" + selected;
    if (key === this.key) return;
    this.key = key;
    for (const e of this.rules.values()) {
      e.classList.remove("lit");
      e.querySelector(".tags").replaceChildren();
    }
    let first = null;
    for (const { node, rule } of lit) {
      const e = this.rules.get(rule);
      if (!e) continue;
      e.classList.add("lit");
      first ??= e;
      const tags = e.querySelector(".tags");
      if ([...tags.children].some((t) => t.dataset.node === String(node))) continue;
      const i = model.index.get(node) ?? 0;
      const tag = htmlEl("span", { class: `tag p${i % 8}` }, `P${node}`);
      tag.dataset.node = node;
      tags.appendChild(tag);
    }
    this.visible = first; // scrolled into view by settle, at the next frame
  }

  // settle does what show left for a clean layout (see Narrator.settle): it scrolls
  // the first lit rule into view and pins every lit rule (sticky), so that each stays
  // in the panel's view wherever it is in the listing.
  settle() {
    if (!this.visible) return;
    const lit = [...this.root.querySelectorAll(".rule.lit")];
    for (const e of this.root.querySelectorAll(".rule.pinned")) unpin(e);
    keepVisible(this.root, this.visible);
    this.visible = null;
    pinAll(lit, this.root.clientHeight);
  }
}

// ruleGroups draws rules as the page's template does (web/pages/play_panels.templ): a
// heading per run of rules of one group, each rule its label and pseudocode lines.
function ruleGroups(rules) {
  const groups = [];
  for (const r of rules) {
    let g = groups.at(-1);
    if (!g || g.name !== r.group) groups.push((g = { name: r.group, rules: [] }));
    g.rules.push(r);
  }
  return groups.map((g) =>
    htmlEl("div", { class: "rule-group" }, htmlEl("h3", { text: g.name }), htmlEl("ol", { class: "rules" }, ...g.rules.map(ruleItem))),
  );
}

function ruleItem(r) {
  const ours = !r.notes;
  const title = ours
    ? `${r.label} is not in the notes: a label of this playground.`
    : `${r.label} is the notes' label (${r.notes.split(/\s+/).join(", ")}), with their meaning.`;
  const li = htmlEl(
    "li",
    { class: ours ? "rule ours" : "rule", "data-rule": r.label, "data-notes": r.notes || "", title: r.says },
    htmlEl(
      "div",
      { class: "rule-head" },
      htmlEl("span", { class: "label", title, text: r.label }),
      ours ? htmlEl("span", { class: "ours-tag", title, text: "ours" }) : "",
      htmlEl("span", { class: "tags" }),
    ),
    htmlEl("div", { class: "lines" }, ...(r.lines || []).map((line) => htmlEl("code", { class: "ln", text: line }))),
  );
  return li;
}

// pinAll stacks the lit rules (in listing order) against the panel's top and foot: each
// sticks below the ones before it and above the ones after it. When they cannot all
// show whole, each gets an equal share of the height, its label and first lines.
const GAP = 3;
function pinAll(lit, box) {
  const full = lit.map((e) => e.offsetHeight);
  const total = full.reduce((a, h) => a + h + GAP, 0);
  const share = total > box ? Math.max(24, Math.floor(box / lit.length) - GAP) : Infinity;
  const h = full.map((x) => Math.min(x, share));
  const sum = h.reduce((a, x) => a + x + GAP, 0);
  let above = 0;
  lit.forEach((e, i) => {
    e.classList.add("pinned");
    e.style.top = `${above}px`;
    e.style.bottom = `${sum - above - h[i] - GAP}px`;
    if (h[i] < full[i]) e.style.maxHeight = `${h[i]}px`;
    above += h[i] + GAP;
  });
}

function unpin(e) {
  e.classList.remove("pinned");
  e.style.removeProperty("top");
  e.style.removeProperty("bottom");
  e.style.removeProperty("max-height");
  if (!e.style.length) e.removeAttribute("style");
}

// keepVisible scrolls a panel (never the page) so that e shows.
function keepVisible(box, e) {
  const top = e.offsetTop - box.offsetTop;
  if (top < box.scrollTop || top + e.offsetHeight > box.scrollTop + box.clientHeight) {
    box.scrollTop = Math.max(0, top - 24);
  }
}

export class Inspector {
  constructor(table, list, count, spec, onDrop) {
    this.body = table.querySelector("tbody");
    this.list = list;
    this.count = count;
    this.head = table.querySelector("thead tr");
    this.spec = spec;
    this.vars = spec.vars;
    this.msgClass = messageClasses(spec);
    this.onDrop = onDrop;
  }

  // setVars takes the run's own variables (hello.vars: a Starlark source's) as the
  // columns, or the page's without them.
  setVars(vars) {
    const next = vars || this.spec.vars;
    if (JSON.stringify(next) === JSON.stringify(this.vars)) return;
    this.vars = next;
    this.ids = null; // the rows are made again with the new columns
    const cols = next.map((v) => htmlEl("th", { scope: "col", title: v.doc, text: v.name }));
    this.head.replaceChildren(this.head.firstElementChild, ...cols);
  }

  // show follows the model. Only the cells and the messages that changed are drawn
  // again: rebuilding the whole table and list made the browser lay them out again
  // each time (docs/benchmarks.md, "Heavy traffic at 4x").
  show(model, selected) {
    const lead = leaders(model);
    const ids = model.nodes.map((n) => n.id).join(",");
    if (ids !== this.ids) {
      this.ids = ids;
      this.keys = []; // per row: [the row's key, its head's, each cell's]
      this.body.replaceChildren(...model.nodes.map(() => htmlEl("tr")));
    }
    const trs = this.body.children;
    model.nodes.forEach((n, i) => {
      const rowKey = `${n.alive}/${i === selected}`;
      const headKey = JSON.stringify([n.alive, n.cs, lead.has(n.id), holdsToken(n)]);
      const cellKeys = this.vars.map((v) => JSON.stringify(n.state[v.name] ?? null));
      const was = this.keys[i];
      if (!was || was[0] !== rowKey) {
        trs[i].replaceWith(this.row(n, i, selected, lead));
      } else {
        const tr = trs[i];
        if (was[1] !== headKey) tr.firstElementChild.replaceWith(this.rowHead(n, lead));
        cellKeys.forEach((k, c) => {
          if (k !== was[2][c]) this.cell(n.state[this.vars[c].name], tr.children[c + 1]);
        });
      }
      this.keys[i] = [rowKey, headKey, cellKeys];
    });
    this.showInflight(model);
  }

  row(n, i, selected, lead) {
    const tr = htmlEl("tr", { class: `p${i % 8}` });
    tr.classList.toggle("crashed", !n.alive);
    tr.classList.toggle("selected", i === selected);
    tr.dataset.id = n.id;
    tr.append(this.rowHead(n, lead));
    for (const v of this.vars) tr.append(this.cell(n.state[v.name]));
    return tr;
  }

  rowHead(n, lead) {
    const th = htmlEl("th");
    th.scope = "row";
    const cell = htmlEl("span", { class: "pcell" });
    cell.append(htmlEl("span", { class: "dot" }), htmlEl("span", {}, `P${n.id}`));
    if (n.cs) cell.append(htmlEl("span", { class: "flag cs" }, "CS"));
    if (!n.alive) cell.append(htmlEl("span", { class: "flag down" }, "crashed"));
    if (lead.has(n.id) && n.alive) cell.append(htmlEl("span", { class: "flag lead" }, "★ leader"));
    if (holdsToken(n)) cell.append(htmlEl("span", { class: "flag lead" }, "◆ token"));
    th.append(cell);
    return th;
  }

  // cell shows a value in a cell: td, written over in place (a new cell is laid out
  // whole again), or a new one.
  cell(val, td = htmlEl("td")) {
    const text = valueText(val);
    if (td.textContent !== text) td.textContent = text;
    const long = typeof val === "string" && val.length > 24;
    const cls = [typeof val === "string" && /^[A-Z-]+$/.test(val) ? `v-${val}` : "", long ? "long" : ""].filter(Boolean).join(" ");
    if (!cls) td.removeAttribute("class");
    else if (td.className !== cls) td.className = cls;
    // A sentence (Maekawa's construction) is cut to the column; the whole of it is
    // its tooltip, and the stage's group note says it too.
    if (long) td.title = val;
    else td.removeAttribute("title");
    return td;
  }

  // showInflight lists the first 60 messages in flight by id, or every one once asked
  // ("list all", paused; INFLIGHT_FAST while the run plays at FAST_SPEED or faster: at
  // 4x nearly all of them are new at each round of the panels, and laying out sixty new
  // lines made the inspector's frame one of the page's costliest; docs/benchmarks.md,
  // "Heavy traffic at 4x"). A message keeps its
  // line while its text stays the same; lines of messages gone are removed, new ones
  // put in their place in the order.
  showInflight(model) {
    const msgs = [...model.inflight.values()].sort((a, b) => a.msg.id - b.msg.id);
    if (this.count.textContent !== String(msgs.length)) this.count.textContent = String(msgs.length);
    this.model = model;
    const fast = model.playing && model.speed >= FAST_SPEED;
    const shown = msgs.slice(0, fast ? INFLIGHT_FAST : this.showAll ? msgs.length : 60);
    const keys = shown.map((f) => `${f.msg.id} ${f.at}`);
    const want = new Set(keys);
    this.lines ??= new Map(); // key -> its li
    // A drop button focused as its message goes hands the focus to the next line's
    // (or the last one's, or the list's region): never to the page's body.
    let focusAt = -1;
    for (const [key, li] of this.lines) {
      if (want.has(key)) continue;
      if (li.contains(document.activeElement)) focusAt = [...this.list.children].indexOf(li);
      li.remove();
      this.lines.delete(key);
    }
    const tailFocused = this.tail?.contains(document.activeElement);
    this.tail?.remove();
    // The lines left are in the order wanted: walk both, putting in the new ones.
    let next = this.list.firstElementChild;
    shown.forEach((f, k) => {
      const li = this.lines.get(keys[k]);
      if (li) {
        next = li.nextElementSibling;
        return;
      }
      const made = this.line(f);
      this.lines.set(keys[k], made);
      this.list.insertBefore(made, next);
    });
    this.tail = null;
    if (msgs.length > shown.length) {
      // Paused, the rest can be listed, so that the keyboard reaches every message (on
      // a crowded stage the messages are painted, not focusable).
      const all = fast ? "" : htmlEl("button", { type: "button", class: "inflight-all", text: `list all ${msgs.length}` });
      if (all) {
        all.addEventListener("click", () => {
          this.showAll = true;
          const k = shown.length;
          this.showInflight(this.model);
          this.list.querySelectorAll("button")[k]?.focus({ preventScroll: true });
        });
      }
      this.tail = htmlEl("li", { class: "muted" }, `and ${msgs.length - shown.length} more `, all);
    }
    if (!msgs.length) this.tail = htmlEl("li", { class: "muted" }, "nothing in the network");
    if (this.tail) this.list.append(this.tail);
    if (tailFocused && focusAt < 0) focusAt = this.list.children.length - 1;
    if (focusAt >= 0) {
      const buttons = [...this.list.querySelectorAll("button")];
      const to = buttons[Math.min(focusAt, buttons.length - 1)] || this.list.closest("[tabindex]");
      to?.focus({ preventScroll: true });
    }
  }

  line(f) {
    const li = htmlEl("li");
    li.append(htmlEl("span", { class: `chip ${this.msgClass.get(f.msg.type) || "m6"}` }));
    const when = f.at < 0 ? "held" : `arrives t=${f.at}`;
    li.append(htmlEl("span", { class: "what" }, `#${f.msg.id} ${f.msg.type}${payloadText(f.msg)} P${f.msg.from}→P${f.msg.to} · ${when}`));
    const m = f.msg;
    const b = htmlEl("button", { type: "button", title: "Drop this message (an intervention)", "aria-label": `drop ${m.type} from P${m.from} to P${m.to} (#${m.id})` }, "drop");
    b.addEventListener("click", () => this.onDrop(f.msg.id));
    li.append(b);
    return li;
  }
}

// Narration: one plain line per trace event, in the words of the rules' own texts.
// tieText is what a process says when it weighs a request against its own and both
// carry the same timestamp (theirs ts, its own own): the ids decide, and the line says
// so instead of calling one request older. null when the timestamps differ.
export function tieText(why, ts, own, from, self) {
  if ((why !== "older" && why !== "younger") || ts === undefined || ts === null || ts !== own) return null;
  return why === "younger"
    ? `answers P${from}'s request at once: both carry timestamp ${ts}, and P${from}'s smaller id breaks the tie`
    : `defers P${from}'s request: both carry timestamp ${ts}, and its own smaller id (P${self}) breaks the tie`;
}

export class Narrator {
  constructor(list, spec) {
    this.list = list;
    this.pageRules = spec.rules;
    this.setRules(null);
    this.lastFrom = new Map(); // node id -> sender of the message it is handling
    this.lastTs = new Map(); // node id -> timestamp of the message it is handling
    this.ownTs = new Map(); // node id -> timestamp of its own latest REQUEST
    this.family = spec.family;
  }

  // setRules takes the run's own rules' texts (hello.rules), or the page's without them.
  setRules(rules) {
    const list = rules || this.pageRules;
    this.says = new Map(list.map((r) => [r.label, r.says]));
    this.why = new Map(list.map((r) => [r.label, r.why || {}]));
  }

  line(ev, model) {
    const who = (id) => {
      const i = model.index.get(id) ?? 0;
      return htmlEl("span", { class: `who p${i % 8}` }, `P${id}`);
    };
    const li = htmlEl("li");
    li.dataset.seq = ev.seq;
    li.append(htmlEl("span", { class: "t" }, `t=${ev.t}`));
    const text = (...parts) => li.append(htmlEl("span", {}, ...parts));
    const m = ev.msg;
    switch (ev.type) {
      case "rule": {
        // A rule with cases says which applied, naming the sender being answered.
        const why = ev.why && this.why.get(ev.rule)?.[ev.why];
        const from = this.lastFrom.get(ev.node);
        let said = why && from !== undefined ? why.replaceAll("{from}", `P${from}`) : this.says.get(ev.rule) || "follows " + ev.rule;
        // Two requests with the same timestamp: the ids break the tie, not their age.
        const tie = from !== undefined && tieText(ev.why, this.lastTs.get(ev.node), this.ownTs.get(ev.node), from, ev.node);
        if (tie) said = tie;
        text(who(ev.node), ` ${said} `, htmlEl("span", { class: "lbl" }, ev.rule));
        break;
      }
      case "send":
        if (m.type === "REQUEST" && m.ts !== undefined) this.ownTs.set(m.from, m.ts);
        li.classList.add("net");
        text(who(m.from), ` sends ${m.type}${payloadText(m)} to `, who(m.to));
        break;
      case "deliver":
        this.lastFrom.set(m.to, m.from);
        this.lastTs.set(m.to, m.ts);
        li.classList.add("net");
        text(who(m.to), ` receives ${m.type}${payloadText(m)} from `, who(m.from));
        break;
      case "drop":
        li.classList.add("net");
        text(`${m.type} from `, who(m.from), " to ", who(m.to), ` is lost (${ev.reason || "dropped"})`);
        break;
      case "partition":
        text("The network splits: " + groupsText(ev.groups, " | "));
        break;
      case "heal":
        text("The network heals");
        break;
      case "violation":
        li.classList.add("violation");
        // The monitor's "deadlock" without a wait-for cycle is a stall: say which.
        text(ev.property === "deadlock" && !ev.cycle?.length ? `⚠ stalled, no wait-for cycle (deadlock monitor): ${ev.detail}` : `⚠ ${ev.property}: ${ev.detail}`);
        break;
      case "end":
        text(`The run ends: ${ev.messages} messages, ${ev.entries} entries`);
        break;
      default: {
        const did = narration(ev);
        if (did === null) text(ev.type);
        else text(who(ev.node), did);
        // The default workload Play started says so on each of its actions.
        const sc = model.scenario;
        if (sc?.title === WORKLOAD_TITLE && sc.events?.some((e) => e.do === ev.type && e.node === ev.node && e.at === ev.t)) {
          li.append(htmlEl("span", { class: "lbl workload" }, "default workload"));
        }
      }
    }
    return li;
  }

  // rebuild shows exactly the model's recent events (after a snapshot).
  rebuild(model) {
    this.lastFrom.clear(); this.lastTs.clear(); this.ownTs.clear();
    this.list.setAttribute("aria-busy", "true");
    this.list.replaceChildren(...model.recent.map((ev) => this.line(ev, model)));
    this.list.setAttribute("aria-busy", "false");
    this.stick = true;
  }

  // append adds the lines of new events and trims to the model's limit. Only the
  // lines that stay are made (the panels follow a fast run in batches of more events
  // than that); each still reads the events before it, for the sender a rule answers.
  // It returns each event's line as text, null for those not made.
  append(events, model) {
    const limit = model.recentMax;
    const from = Math.max(0, events.length - limit);
    const texts = new Array(events.length).fill(null);
    for (let k = 0; k < from; k++) {
      const e = events[k];
      if (e.type === "deliver") { this.lastFrom.set(e.msg.to, e.msg.from); this.lastTs.set(e.msg.to, e.msg.ts); }
      if (e.type === "send" && e.msg.type === "REQUEST" && e.msg.ts !== undefined) this.ownTs.set(e.msg.from, e.msg.ts);
    }
    for (let k = from; k < events.length; k++) {
      const li = this.line(events[k], model);
      this.list.appendChild(li);
      texts[k] = lineText(li);
    }
    while (this.list.children.length > limit) this.list.firstChild.remove();
    this.stick = true;
    return texts;
  }

  // latest is the text of the log's newest line ("" when empty).
  latest() {
    const li = this.list.lastElementChild;
    return li ? lineText(li) : "";
  }

  // fast says whether the run plays fast (FAST_SPEED and up): the log then lays out
  // only its latest lines (app.css, .log[data-fast]); it sticks to its end and takes a
  // hundred new lines each round, of which a box of a hundred-odd pixels shows five,
  // and laying out the hundred made the page's costliest frames (docs/benchmarks.md,
  // "Heavy traffic at 4x"). Every line stays in the list, the hidden ones too.
  fast(on) {
    const v = on ? "true" : "false";
    if (this.list.dataset.fast !== v) this.list.dataset.fast = v;
  }

  // settle scrolls the log to its newest line. It reads the layout, so the page calls
  // it at the start of a frame, before changing anything: reading it right after the
  // panels changed forced the browser to lay the whole page out again, each frame.
  settle() {
    if (this.stick) this.list.scrollTop = this.list.scrollHeight;
    this.stick = false;
  }
}

// lineText is a log line in words, without its time: "P1 follows RA2 …".
function lineText(li) {
  return [...li.children].filter((c) => !c.classList.contains("t")).map((c) => c.textContent).join(" ").replace(/\s+/g, " ").trim();
}
