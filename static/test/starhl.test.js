// starhl.js: the rules editor's Starlark highlighter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { tokens, lines } from "../starhl.js";

const src = `def on_REQUEST(ctx, s, m):
    # RH1
    s.clock = max(s.clock, m.ts) + 1
    if s.state == "HELD" and 'x' != """a
b""":
        ctx.rule("RH1", "held")
`;

test("the tokens give the source back exactly", () => {
  assert.equal(tokens(src).map(([, t]) => t).join(""), src);
});

test("each kind is found where it is", () => {
  const kinds = (kind) => tokens(src).filter(([k]) => k === kind).map(([, t]) => t);
  assert.deepEqual(kinds("kw"), ["def", "if", "and"]);
  assert.deepEqual(kinds("def"), ["on_REQUEST"]);
  assert.deepEqual(kinds("comment"), ["# RH1"]);
  assert.deepEqual(kinds("string"), ['"HELD"', "'x'", '"""a\nb"""', '"RH1"', '"held"']);
  assert.deepEqual(kinds("number"), ["1"]);
  assert.deepEqual(kinds("builtin"), ["ctx", "max", "ctx"]);
});

test("lines follow the source's lines, a multi-line string split across two", () => {
  const rows = lines(src);
  assert.equal(rows.length, src.split("\n").length);
  assert.deepEqual(rows[4], [["string", 'b"""'], ["punct", ":"]]);
});

test("an unfinished string stops at its line's end", () => {
  const t = tokens('x = "abc\ny = 1');
  assert.deepEqual(t.find(([k]) => k === "string"), ["string", '"abc']);
  assert.deepEqual(t.filter(([k]) => k === "number"), [["number", "1"]]);
});
