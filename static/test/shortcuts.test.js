import { test } from "node:test";
import assert from "node:assert/strict";
import { parseSettings, checkKeys, keyAction, digitsOn, defaults, keyName } from "../shortcuts.js";

test("the default keys fire their actions; the settings turn them all off", () => {
  const s = defaults();
  assert.equal(keyAction(s, "r"), "request");
  assert.equal(keyAction(s, "R"), "restart");
  assert.equal(keyAction(s, "="), "faster");
  assert.equal(keyAction(s, "T"), "theme");
  assert.equal(keyAction(s, "x"), null);
  assert.equal(keyAction(s, "ArrowRight"), null, "not a character");
  assert.ok(digitsOn(s));
  const off = { ...s, on: false };
  assert.equal(keyAction(off, "r"), null);
  assert.ok(!digitsOn(off));
});

test("remapped keys are kept, bad ones refused", () => {
  const s = parseSettings(JSON.stringify({ on: true, digits: false, keys: { crash: "k", request: "c", recover: "" } }));
  assert.equal(keyAction(s, "k"), "crash");
  assert.equal(keyAction(s, "u"), null, "recover has no key");
  assert.equal(s.keys.request, "r", "c is crash's: refused when read");
  assert.ok(!digitsOn(s));
  assert.match(checkKeys(s, "step", "k"), /already the key of crash/);
  assert.match(checkKeys(s, "step", "5"), /Digits/);
  assert.match(checkKeys(s, "step", " "), /No spaces/);
  assert.equal(checkKeys(s, "step", ">"), "");
  assert.deepEqual(parseSettings("not json"), defaults());
  assert.deepEqual(parseSettings(null), defaults());
});

test("keys are named as the help shows them", () => {
  assert.equal(keyName("r"), "R");
  assert.equal(keyName("R"), "Shift+R");
  assert.equal(keyName("+"), "+");
});
