import test from "node:test";
import assert from "node:assert/strict";
import { joinPlace, hostOf } from "../lecture.js";

test("joinPlace takes the public or presenter's base as it is", () => {
  const p = joinPlace('{"base":"https://class.example.edu/pg"}');
  assert.deepEqual(p, { base: "https://class.example.edu/pg", loopback: false, lan: [], chosen: false });
  assert.equal(hostOf(p.base), "class.example.edu/pg");
});

test("joinPlace on localhost chooses the first network address and says so", () => {
  const p = joinPlace('{"base":"http://localhost:8080","loopback":true,"lan":["http://192.168.1.20:8080","http://[2001:db8::7]:8080"]}');
  assert.equal(p.base, "http://192.168.1.20:8080");
  assert.equal(p.chosen, true);
  assert.equal(hostOf(p.lan[1]), "[2001:db8::7]:8080");
});

test("joinPlace on localhost without network addresses keeps localhost, and bad JSON is no place", () => {
  const p = joinPlace('{"base":"http://localhost:8080","loopback":true}');
  assert.equal(p.base, "http://localhost:8080");
  assert.equal(p.loopback, true);
  assert.equal(p.chosen, false);
  assert.equal(joinPlace("{not json").loopback, false);
  assert.equal(joinPlace("").chosen, false);
});
