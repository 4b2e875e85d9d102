// Lecture mode on the playground page (docs/lecture.md). The page is the same for
// everyone; its socket says who is looking:
//   /ws/present/{token}  the presenter: drives the run, shows the join code and QR,
//                        the follower count, questions and their live tally;
//   /ws/lecture/{code}   a follower: sees the run read-only, answers questions, forks.
// app.js keeps the socket and the model; this module follows the frames app.js hands
// it and asks for commands through page.send.

import { byId, htmlEl, noModifier, typing, controlKey } from "./dom.js";
import { settings, keyAction, digitsOn } from "./shortcuts.js";
import { createProjector } from "./projector.js";

// createLecture starts lecture mode when page.root's socket path says this page is a
// presenter's or a follower's; page.send(frame) sends a command, page.model is the
// run. It returns what follows the run's frames, or null on a page of one's own.
export function createLecture(page) {
  const wsPath = page.root.dataset.ws || "";
  const mode = wsPath.startsWith("/ws/present/") ? "presenter" : wsPath.startsWith("/ws/lecture/") ? "follower" : "";
  if (!mode) return null;
  // The lecture's state as frames tell it.
  const lec = { code: "", display: "", state: "", link: "", followers: 0, q: null, answered: null, step: 0 };
  const ctx = { app: page.root, command: page.send, model: page.model, lec, wsPath, spec: page.spec };
  document.body.classList.add("lecture-" + mode);
  byId("lecture-start")?.closest("form")?.remove();
  const own = mode === "presenter" ? presenter(ctx) : follower(ctx);
  const projector = createProjector(page, mode); // the layout: after the bar and the question exist
  return {
    frame: (f, model) => {
      if (f.type === "hello") showRunTitle(f.scenario, page.spec, mode);
      own(f, model);
      projector.frame(f, model);
    },
  };
}

// showRunTitle says which run the lecture shows, for presenter and followers alike:
// the scenario's title and explanation, or that it is a free run. It follows the run
// (hello), so a presenter moving the lecture to another scenario retitles every page.
export function runTitle(sc, spec, mode) {
  if (sc?.title) return { title: sc.title, about: sc.about || "" };
  return {
    title: `${spec?.title || "Free run"}: a free run`,
    about: mode === "presenter"
      ? "Nothing is scheduled: click a process to act, or press Play to start the default workload."
      : "Nothing is scheduled: the presenter acts on the processes.",
  };
}

function showRunTitle(sc, spec, mode) {
  const box = document.querySelector(".run-title");
  if (!box) return;
  const { title, about } = runTitle(sc, spec, mode);
  if (box.dataset.title === title && box.dataset.about === about) return;
  box.dataset.title = title; box.dataset.about = about;
  const details = htmlEl("details", { class: "about", id: "run-about" },
    htmlEl("summary", { id: "run-title", text: title }), htmlEl("p", { id: "run-about-text", text: about }));
  box.replaceChildren(details);
}

// ---- shared: the question card ----

function questionCard(app) {
  const card = htmlEl("section", { class: "lecture-q", id: "lecture-q", "aria-live": "polite", hidden: true });
  app.before(card); // under the lecture bar, above the run
  // The view is drawn in pixels: a strip appearing or going resizes it (app.js's observer redraws).
  return card;
}

function renderQuestion(card, q, opts) {
  card.replaceChildren();
  if (!q) { card.hidden = true; return; }
  card.hidden = false;
  card.dataset.state = q.state;
  card.dataset.id = q.id;
  const head = htmlEl("div", { class: "lecture-q-head" },
    htmlEl("span", { class: "lecture-q-tag", text: q.state === "open" ? "Predict the next step" : q.state === "revealed" ? "Answer" : "Withdrawn" }),
    htmlEl("span", { class: "muted", text: `asked at step ${q.step}` }));
  card.append(head, htmlEl("p", { class: "lecture-q-text", text: q.text }));
  const list = htmlEl("ol", { class: "lecture-choices" });
  const total = (q.tally || []).reduce((a, b) => a + b, 0);
  q.choices.forEach((c, i) => {
    const li = htmlEl("li", { class: "lecture-choice" });
    li.dataset.choice = i;
    if (q.answer === i) li.classList.add("correct");
    if (opts.mine === i) li.classList.add("mine");
    const label = htmlEl("span", { class: "lecture-choice-label" }, htmlEl("kbd", { text: String(i + 1) }), " " + c);
    // Said in words as well as by colour: which is the reader's, which is right.
    if (opts.mine === i) label.append(htmlEl("span", { class: "lecture-mine", text: " (your answer)" }));
    if (q.answer === i) label.append(htmlEl("span", { class: "lecture-right", text: " (the answer)" }));
    if (opts.answerable) {
      const b = htmlEl("button", { type: "button", class: "lecture-choice-btn" }, label);
      b.addEventListener("click", () => opts.answer(i));
      li.append(b);
    } else {
      li.append(label);
    }
    if (q.tally) {
      const n = q.tally[i] || 0;
      const bar = htmlEl("span", { class: "lecture-bar-fill" });
      bar.style.width = total ? `${Math.round((100 * n) / total)}%` : "0%";
      li.append(htmlEl("span", { class: "lecture-tally" }, bar, htmlEl("span", { class: "lecture-count", text: String(n) })));
    }
    list.append(li);
  });
  card.append(list);
  const foot = htmlEl("p", { class: "lecture-q-foot" });
  if (q.state === "withdrawn") foot.textContent = "Withdrawn: " + (q.reason || "");
  else if (q.state === "revealed") {
    let yours = "";
    if (opts.mine !== undefined && opts.mine !== null && q.answer !== undefined) {
      yours = opts.mine === q.answer ? ` Your answer, ${q.choices[opts.mine]}, is right.` : ` Your answer was ${q.choices[opts.mine]}; the answer is ${q.choices[q.answer]}.`;
    }
    foot.textContent = `${q.answers} answered. The run has shown the answer.${yours}`;
  }
  else foot.textContent = opts.footer(q);
  card.append(foot);
}

// ---- presenter ----

// joinPlace reads where students join (the presenter page's data-join, from
// web/lecturehttp/joinurl.go): base is the join links' base. On a loopback address
// (localhost) with no --public-url, lan lists this machine's network addresses and
// the first is chosen; chosen then says the QR code must be asked for that base.
export function joinPlace(attr) {
  let j;
  try { j = JSON.parse(attr || "{}") || {}; } catch { j = {}; }
  const lan = Array.isArray(j.lan) ? j.lan.filter((x) => typeof x === "string") : [];
  const place = { base: typeof j.base === "string" && j.base ? j.base : globalThis.location?.origin || "", loopback: Boolean(j.loopback), lan, chosen: false };
  if (place.loopback && lan.length) { place.base = lan[0]; place.chosen = true; }
  return place;
}

// hostOf is a base URL without its scheme, as a student types it.
export function hostOf(base) {
  return base.replace(/^https?:\/\//, "");
}

const NO_ADDRESS = "This machine has no network address students can reach. Restart the server with --public-url set to the address students reach it at.";

// dismiss is the warning's button that puts it away once read: it floats over the
// run, and the join line and QR code keep the address chosen.
function dismiss(box) {
  const b = htmlEl("button", { type: "button", class: "btn lecture-join-ok", id: "lecture-join-ok", text: "OK" });
  b.addEventListener("click", () => { box.hidden = true; });
  return b;
}

// joinWarning is the presenter's warning that localhost cannot be reached from
// students' phones, with the machine's addresses to choose from (changed() follows a
// choice); null when the join link is one students can reach.
function joinWarning(join, changed) {
  if (!join.loopback) return null;
  const box = htmlEl("p", { class: "lecture-join-warn", id: "lecture-join-warn", role: "alert" },
    htmlEl("strong", { text: "Students' phones cannot reach localhost: " }));
  if (!join.lan.length) {
    box.append(NO_ADDRESS, " ", dismiss(box));
    return box;
  }
  const pick = htmlEl("select", { id: "lecture-join-base", "aria-label": "Address students join at" },
    ...join.lan.map((b) => htmlEl("option", { value: b, text: hostOf(b) })));
  pick.addEventListener("change", () => { join.base = pick.value; changed(); });
  box.append("they join at this machine's ", pick, ", or restart the server with ", htmlEl("code", { text: "--public-url" }), ". ", dismiss(box));
  return box;
}

// presenter builds the presenter's bar and dialogs; it returns its frame handler.
function presenter({ app, command, lec }) {
  const join = joinPlace(app.dataset.join);
  const joinHost = htmlEl("strong", { id: "lecture-join-host", text: `${hostOf(join.base)}/join` });
  const bar = htmlEl("aside", { class: "lecture-bar", id: "lecture-bar", "aria-label": "Lecture" });
  const code = htmlEl("strong", { class: "lecture-code", id: "lecture-code" });
  const count = htmlEl("span", { class: "lecture-followers", id: "lecture-followers", text: "0 following" });
  const link = htmlEl("a", { id: "lecture-link", class: "lecture-link", href: "#", target: "_blank", rel: "noopener", text: "Link to this run" });
  const qBtn = htmlEl("button", { type: "button", class: "btn", id: "lecture-questions-btn" }, "Question ", htmlEl("kbd", { text: "Q" }));
  const joinBtn = htmlEl("button", { type: "button", class: "btn", id: "lecture-join-btn" }, "QR ", htmlEl("kbd", { text: "J" }));
  const endBtn = htmlEl("button", { type: "button", class: "btn lecture-end", id: "lecture-end" }, "End");
  bar.append(
    htmlEl("span", { class: "lecture-join-line" }, "Join: ", joinHost, " code ", code),
    count, joinBtn, qBtn, link, endBtn);
  app.before(bar);
  const warning = joinWarning(join, () => {
    joinHost.textContent = `${hostOf(join.base)}/join`;
    if (big.open) showBig();
  });
  if (warning) bar.append(warning); // floats under the bar: it takes no height from the stage

  const card = questionCard(app);
  const actions = htmlEl("div", { class: "lecture-q-actions" });

  // The Scenarios menu moves the lecture to the run chosen: the followers follow it and
  // the join code stays (a link would have left them on the old run).
  document.querySelector(".scenario-nav")?.addEventListener("click", (e) => {
    const a = e.target.closest?.("a[href]");
    if (!a) return;
    e.preventDefault();
    const m = new URL(a.href, location.href).pathname.match(/^\/s\/([^/]+)$/);
    command(m ? { type: "reset", curated: decodeURIComponent(m[1]) } : { type: "reset", scenario: { version: 2, algorithm: app.dataset.slug, seed: 1 } });
    a.closest("details")?.removeAttribute("open");
    for (const x of document.querySelectorAll(".scenario-nav a")) x.removeAttribute("aria-current");
    a.setAttribute("aria-current", "page");
  });

  // The join code large, with the QR code, for the projector.
  const big = htmlEl("dialog", { class: "lecture-big", id: "lecture-big", "aria-label": "Join this lecture" });
  document.body.append(big);
  function showBig() {
    const qr = `/l/${lec.code}/qr.svg` + (join.chosen ? `?base=${encodeURIComponent(join.base)}` : "");
    big.replaceChildren(
      htmlEl("p", { class: "lecture-big-url", text: `${join.base}/join` }),
      htmlEl("p", { class: "lecture-big-code", text: lec.display }),
      htmlEl("img", { class: "lecture-qr", id: "lecture-qr", src: qr, alt: `QR code of ${join.base}/l/${lec.code}` }),
      join.loopback && !join.lan.length ? htmlEl("p", { class: "lecture-join-warn", text: NO_ADDRESS }) : "",
      htmlEl("form", { method: "dialog" }, htmlEl("button", { class: "btn", text: "Close (Esc)" })));
    if (!big.open) big.showModal();
  }
  joinBtn.addEventListener("click", showBig);

  // The questions to choose from.
  const pick = htmlEl("dialog", { class: "lecture-pick", id: "lecture-pick", "aria-label": "Questions" });
  document.body.append(pick);
  let items = [];
  function showPick(f) {
    items = f.items || [];
    const list = htmlEl("ol", { class: "lecture-pick-list" });
    items.forEach((it, i) => {
      const b = htmlEl("button", { type: "button", class: "lecture-pick-item" },
        htmlEl("kbd", { text: String(i + 1) }), " ", htmlEl("span", { text: it.text }),
        htmlEl("span", { class: "muted lecture-pick-choices", text: it.choices.join(" · ") }));
      b.dataset.index = i;
      b.addEventListener("click", () => ask(i));
      list.append(htmlEl("li", {}, b));
    });
    pick.replaceChildren(htmlEl("h2", { text: `Questions at step ${f.step}` }),
      f.error ? htmlEl("p", { class: "muted", text: f.error }) : "", list,
      htmlEl("form", { method: "dialog" }, htmlEl("button", { class: "btn", text: "Cancel (Esc)" })));
    if (!pick.open) pick.showModal();
  }
  function ask(i) {
    if (i < 0 || i >= items.length) return;
    command({ type: "lecture", op: "ask", question: i });
    pick.close();
  }
  const questions = () => command({ type: "lecture", op: "questions" });
  qBtn.addEventListener("click", questions);

  endBtn.addEventListener("click", () => {
    if (confirm("End the lecture for everyone? Followers keep a link to the run.")) command({ type: "lecture", op: "end" });
  });

  function renderCard() {
    renderQuestion(card, lec.q, {
      answerable: false, mine: null,
      footer: (q) => `${q.answers} of ${lec.followers} answered. Step to the answer, or press V to reveal it.`,
    });
    if (lec.q && lec.q.state === "open") {
      const reveal = htmlEl("button", { type: "button", class: "btn", id: "lecture-reveal" }, "Reveal ", htmlEl("kbd", { text: "V" }));
      reveal.addEventListener("click", () => command({ type: "lecture", op: "reveal" }));
      const withdraw = htmlEl("button", { type: "button", class: "btn", id: "lecture-withdraw", text: "Withdraw" });
      withdraw.addEventListener("click", () => command({ type: "lecture", op: "withdraw" }));
      actions.replaceChildren(reveal, withdraw);
      card.append(actions);
    } else if (lec.q) {
      const close = htmlEl("button", { type: "button", class: "btn", id: "lecture-q-close", text: "Hide" });
      close.addEventListener("click", () => { lec.q = null; renderCard(); });
      actions.replaceChildren(close);
      card.append(actions);
    }
  }

  // A clicker sends PageDown and PageUp; the rest is for the keyboard on the desk.
  window.addEventListener("keydown", (e) => {
    if (!noModifier(e) || typing()) return;
    const keys = settings();
    if (pick.open && digitsOn(keys) && /^[1-9]$/.test(e.key)) {
      e.preventDefault(); e.stopPropagation();
      ask(Number(e.key) - 1);
      return;
    }
    if (big.open || pick.open || byId("help")?.open) return;
    const mine = {
      PageDown: () => command({ type: "step" }),
      PageUp: () => command({ type: "back" }),
      questions, reveal: () => command({ type: "lecture", op: "reveal" }), bigcode: showBig,
    }[e.key === "PageDown" || e.key === "PageUp" ? e.key : keyAction(keys, e.key)];
    if (mine) { e.preventDefault(); e.stopPropagation(); mine(); }
  }, true);

  return (f) => {
    switch (f.type) {
      case "lecture":
        lec.code = f.code; lec.display = f.display; lec.state = f.state; lec.followers = f.followers;
        code.textContent = f.display;
        count.textContent = `${f.followers} following`;
        app.dataset.followers = String(f.followers);
        if (f.link) { lec.link = f.link; link.href = f.link; link.title = `${location.origin}${f.link}`; }
        if (f.state === "ended") {
          bar.classList.add("ended");
          count.textContent = "Lecture ended";
          qBtn.disabled = true; endBtn.disabled = true;
        }
        break;
      case "questions":
        showPick(f);
        break;
      case "question":
        lec.q = f;
        renderCard();
        break;
    }
  };
}

// ---- follower ----

// follower builds the follower's bar and locks the controls; it returns its frame handler.
function follower({ app, command, model, lec, wsPath }) {
  const code = wsPath.split("/").pop().split("?")[0];
  const bar = htmlEl("aside", { class: "lecture-bar", id: "lecture-bar", "aria-label": "Lecture" });
  const state = htmlEl("span", { class: "lecture-state", id: "lecture-state", text: "Joining…" });
  const fork = htmlEl("a", { class: "btn lecture-fork", id: "lecture-fork", href: `/l/${code}/fork`, target: "_blank", rel: "noopener",
    title: "Go on from this step in a tab of your own; this tab keeps following" }, "Fork from here ", htmlEl("kbd", { text: "F" }));
  bar.append(htmlEl("span", { class: "lecture-join-line" }, "Following lecture ", htmlEl("strong", { class: "lecture-code", id: "lecture-code", text: code.slice(0, 3) + " " + code.slice(3) })),
    state, fork);
  app.before(bar);
  const card = questionCard(app);

  // Nothing here drives the run: the controls are off, and the server refuses anyway.
  const controls = document.querySelectorAll(".controls button, .controls input, .controls select, #setup-form button, #setup-form input");
  for (const c of controls) c.disabled = true;

  let lseq = 0;
  const answer = (i) => {
    if (!lec.q || lec.q.state !== "open" || lec.answered !== null) return;
    command({ type: "lecture", op: "answer", question: lec.q.id, choice: i });
  };
  // Fork is off while a question is open (its answer is in the run's future), and says so.
  const forkTitle = fork.title;
  const forkWhy = htmlEl("span", { class: "lecture-fork-why muted", id: "lecture-fork-why", hidden: true });
  fork.after(forkWhy);
  fork.setAttribute("aria-describedby", "lecture-fork-why");
  fork.addEventListener("click", (e) => { if (fork.getAttribute("aria-disabled") === "true") e.preventDefault(); });
  function syncFork() {
    const open = Boolean(lec.q && lec.q.state === "open");
    fork.setAttribute("aria-disabled", String(open));
    fork.classList.toggle("disabled", open);
    fork.title = open ? "Fork is off while a question is open: it comes back once the answer is revealed" : forkTitle;
    forkWhy.textContent = open ? "Fork is off until the answer is revealed" : "";
    forkWhy.hidden = !open;
  }
  function renderCard() {
    const open = lec.q && lec.q.state === "open";
    syncFork();
    renderQuestion(card, lec.q, {
      answerable: open && lec.answered === null, mine: lec.answered, answer,
      footer: () => (lec.answered === null ? "Choose your answer: click it or press its number." : "Answer sent. The run will show who was right."),
    });
  }

  function ended(f) {
    // app.js reloads a page whose run is gone; this page says so itself, with the link.
    sessionStorage.setItem("reloaded", String(Date.now()));
    bar.classList.add("ended");
    state.textContent = "The lecture has ended";
    fork.remove();
    const note = htmlEl("div", { class: "lecture-ended", id: "lecture-ended", role: "status" },
      htmlEl("strong", { text: "The lecture has ended" }), " " + (f.reason ? `(${f.reason}). ` : ""));
    if (f.link) note.append(htmlEl("a", { href: f.link, id: "lecture-run-link", text: "Open the run of this lecture" }));
    byId("svg-wrap").append(note);
  }

  // The keys that drive a run on the presenter's page; a follower's only hint at F.
  const driving = new Set([" ", "ArrowRight", "ArrowLeft", "Home", "End", "PageDown", "PageUp"]);
  const drivingActions = new Set(["step", "back", "faster", "slower", "restart", "request", "release", "elect", "crash", "recover"]);
  let hinted = 0;
  window.addEventListener("keydown", (e) => {
    if (!noModifier(e) || typing()) return;
    const keys = settings();
    if (lec.q && lec.q.state === "open" && lec.answered === null && digitsOn(keys) && /^[1-9]$/.test(e.key)) {
      e.preventDefault(); e.stopPropagation();
      answer(Number(e.key) - 1);
      return;
    }
    if (controlKey(e.key)) return; // Space on the focused answer activates it
    const id = keyAction(keys, e.key);
    if (id === "fork") { e.preventDefault(); fork.click(); return; }
    if (driving.has(e.key) || drivingActions.has(id)) {
      e.preventDefault(); e.stopPropagation();
      if (Date.now() - hinted > 3000) {
        hinted = Date.now();
        state.textContent = "Only the presenter drives this run: press F to fork it";
        setTimeout(() => { if (lec.state === "live") state.textContent = "Live"; }, 3000);
      }
    }
  }, true);

  return (f) => {
    if (f.lseq !== undefined) {
      lseq = f.lseq;
      // Where app.js reconnects: after the last frame taken, so nothing comes twice.
      app.dataset.ws = `/ws/lecture/${code}?proto=2&after=${lseq}`;
      app.dataset.lseq = String(lseq);
      if (f.type !== "hello" && model.nodes.length) app.dataset.ready = "true";
    }
    switch (f.type) {
      case "lecture":
        lec.state = f.state; lec.link = f.link || lec.link;
        if (f.state === "ended") ended(f);
        else state.textContent = "Live";
        break;
      case "question":
        if (!lec.q || lec.q.id !== f.id) lec.answered = null;
        lec.q = f;
        renderCard();
        break;
      case "answered":
        if (lec.q && f.question === lec.q.id) { lec.answered = f.choice; renderCard(); }
        break;
    }
    if (model.step !== lec.step || !fork.search) {
      lec.step = model.step;
      fork.href = `/l/${code}/fork?step=${model.step}`;
    }
  };
}
