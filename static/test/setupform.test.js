// setupform.js: Run setup's params controls <-> the scenario's params, and the /play query.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readParams, controlState, errorParam, playQuery } from "../setupform.js";

const ctl = (name, kind, def, value, checked) => ({ name, kind, def, value, checked });

test("controls give params, leaving out the empty and the defaults", () => {
  const cases = [
    [[ctl("denied", "bool", "false", "", true)], { denied: true }, {}],
    [[ctl("denied", "bool", "false", "", false)], {}, {}],
    [[ctl("variant", "choice", '"basic"', "deadlock-free")], { variant: "deadlock-free" }, {}],
    [[ctl("variant", "choice", '"basic"', "basic")], {}, {}],
    [[ctl("hop", "int", "1", "3"), ctl("regenerate", "int", "0", "")], { hop: 3 }, {}],
    [[ctl("answerTimeout", "int", "", "7")], { answerTimeout: 7 }, {}],
    [[ctl("hop", "int", "1", "2.5")], {}, { hop: "params.hop: 2.5 is not a whole number" }],
    [[ctl("holder", "node", "lowest", "3")], { holder: 3 }, {}],
    [[ctl("holder", "node", "lowest", "")], {}, {}],
    [[ctl("tree", "object", "", ' {"1": 0} ')], { tree: { 1: 0 } }, {}],
    [[ctl("tree", "object", "", "")], {}, {}],
  ];
  for (const [controls, params, problems] of cases) {
    assert.deepEqual(readParams(controls), { params, problems });
  }
  const bad = readParams([ctl("tree", "object", "", "{")]);
  assert.match(bad.problems.tree, /^params\.tree: not JSON/);
});

test("a scenario's params fill the controls, and read back the same", () => {
  const controls = [ctl("coordinator", "node", "highest"), ctl("denied", "bool", "false"),
    ctl("variant", "choice", '"basic"'), ctl("hop", "int", "1"), ctl("heartbeat", "object", "")];
  const params = { coordinator: 2, denied: true, variant: "deadlock-free", hop: 4, heartbeat: { period: 5, timeout: 12 } };
  const filled = controls.map((c) => ({ ...c, ...controlState(c, params) }));
  assert.deepEqual(readParams(filled), { params, problems: {} });
  const empty = controls.map((c) => ({ ...c, ...controlState(c, undefined) }));
  assert.deepEqual(empty.map((c) => [c.value, c.checked]), [["", undefined], ["", false], ["basic", undefined], ["", undefined], ["", undefined]]);
  assert.deepEqual(readParams(empty), { params: {}, problems: {} });
});

test("a server error names the param", () => {
  assert.equal(errorParam("scenario: params.tree: 3 is its own parent"), "tree");
  assert.equal(errorParam("params.heartbeat.timeout: needs a period too"), "heartbeat");
  assert.equal(errorParam("scenario: network.delay: min 9 > max 3"), null);
});

test("the /play query of a scenario", () => {
  const sc = { version: 1, algorithm: "raymond", nodes: 4, seed: 7, cs: 2,
    network: { delay: [1, 3], fifo: false, loss: 0, hold: false },
    params: { tree: { 1: 0, 2: 1 }, denied: true, variant: "deadlock-free" } };
  assert.equal(playQuery(sc),
    "n=4&seed=7&cs=2&delay=1-3&fifo=false&loss=0&hold=false&p.tree=%7B%221%22%3A0%2C%222%22%3A1%7D&p.denied=true&p.variant=deadlock-free");
  assert.equal(playQuery({ nodes: 3, network: { delay: [2, 2] } }), "n=3&delay=2");
});
