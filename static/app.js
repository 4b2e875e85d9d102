// The playground page's entry module: makes the run's model, the socket, the stage and
// the panels, and wires them together. Each module exports a create function that
// takes the page (below) and keeps its own state in the object it returns; frames
// reach them in a fixed order, commands leave through page.send. No framework, no
// build step.

import { byId } from "./dom.js";
import { newModel } from "./model.js";
import { createConnection, connect, send } from "./connection.js";
import { createStage, takeFrame, setStatus, toast } from "./stage.js";
import { createMenus, followPlay } from "./menus.js";
import { wireKeys } from "./keys.js";
import { createNetwork } from "./network.js";
import { createShare } from "./share.js";
import { createCaptions } from "./captions.js";
import { createSpacetime } from "./spacetime.js";
import { createMetrics } from "./metrics.js";
import { createLecture } from "./lecture.js";
import { createExplore } from "./explore.js";
import { createEditor } from "./editor.js";
import { wireTopMenu } from "./topmenu.js";

const root = byId("main");

// page is what the modules share: the main element (its data-* attributes say which
// session, API and socket), the algorithm's spec, the run's model, the socket, and
// the two ways to move the run.
const page = {
  root,
  spec: JSON.parse(byId("spec").textContent),
  model: newModel(),
  conn: createConnection(root, { frame: receive, status: setStatus }),
  // send sends a command and returns its ref (0: not connected, which it says).
  send(frame) {
    const r = send(page.conn, frame);
    if (!r) toast(stage, "Not connected yet");
    return r;
  },
  seek(step) {
    return page.send({ type: "seek", step });
  },
};

// The panels, in the order they follow each frame. They are made before the stage, so
// their elements go into the page in the order they always did (the stage's toast last).
const network = createNetwork(page); // Be the network: hold mode, partitions, FIFO/delay/loss live
createShare(page); // Copy link, Export menu (no frames to follow)
const panels = [
  network,
  createCaptions(page), // curated scenarios' captions
  createSpacetime(page), // space-time diagram, clocks, SVG exports
  createMetrics(page), // measured against the notes' formulas
  createLecture(page), // lecture mode: presenter and followers
  createExplore(page), // Explore: every interleaving checked on the server
  createEditor(page), // Edit rules: the algorithm in Starlark, Run and Check
].filter(Boolean);

const stage = createStage(page);
wireTopMenu(); // the header's actions as a menu on a narrow screen
const menus = createMenus(stage);
wireKeys(stage, menus);

// receive takes a frame from the server: the model and the stage first, then the
// panels, each with the frame and the model as it now is.
function receive(f) {
  takeFrame(stage, f);
  followPlay(menus, page.model.playing);
  for (const p of panels) p.frame(f, page.model);
}

// Scripts from outside the page's modules (the browser tests, a console) drive the run
// the way a panel does: document.dispatchEvent(new CustomEvent("pg:command", {detail: frame})).
document.addEventListener("pg:command", (e) => page.send({ ...e.detail }));

connect(page.conn);
