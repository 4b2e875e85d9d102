// starhl.js: a small Starlark highlighter for the rules editor (no network, no
// library). tokens() splits source text into [kind, text] pairs whose texts joined
// give the source back exactly; highlight() renders them as spans, one line per
// element, so that the editor can mark a line (an error) and the overlay lines up
// with the textarea above it character for character.

const KEYWORDS = new Set(["and", "break", "continue", "def", "elif", "else", "for", "if", "in",
  "lambda", "load", "not", "or", "pass", "return", "while", "True", "False", "None"]);

// The names a source is given (docs/authoring.md): the declaration builtins, ctx, and
// the handlers the adapter calls.
const BUILTINS = new Set(["rule", "message", "var", "param", "ctx", "len", "range", "min", "max",
  "sorted", "list", "dict", "tuple", "str", "int", "bool", "enumerate", "zip", "any", "all", "fail"]);

const WORD = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /(0[xXoObB][0-9a-fA-F_]+|[0-9][0-9_]*(\.[0-9]*)?([eE][-+]?[0-9]+)?)/y;
const SPACE = /[ \t]+/y;

function matchAt(re, s, i) {
  re.lastIndex = i;
  const m = re.exec(s);
  return m ? m[0] : "";
}

// stringEnd is the index just after the string literal starting at i (quotes ' " and
// triple quotes; an unfinished one runs to the end of its line, or of the text).
function stringEnd(s, i) {
  const q = s[i];
  const triple = s.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  let k = i + close.length;
  while (k < s.length) {
    if (s[k] === "\\") { k += 2; continue; }
    if (!triple && s[k] === "\n") return k;
    if (s.startsWith(close, k)) return k + close.length;
    k++;
  }
  return s.length;
}

// tokens splits source into [kind, text]: kw, builtin, def (the name after def),
// string, comment, number, name, space, newline, punct.
export function tokens(source) {
  const out = [];
  let i = 0;
  let afterDef = false;
  while (i < source.length) {
    const c = source[i];
    let kind;
    let text;
    if (c === "\n") {
      kind = "newline"; text = "\n";
    } else if (c === "#") {
      const nl = source.indexOf("\n", i);
      kind = "comment"; text = source.slice(i, nl < 0 ? source.length : nl);
    } else if (c === '"' || c === "'") {
      kind = "string"; text = source.slice(i, stringEnd(source, i));
    } else if ((text = matchAt(SPACE, source, i))) {
      kind = "space";
    } else if ((text = matchAt(WORD, source, i))) {
      const attr = out.length > 0 && out[out.length - 1][1] === "."; // ctx.rule: a field, not the builtin
      kind = afterDef ? "def" : attr ? "name" : KEYWORDS.has(text) ? "kw" : BUILTINS.has(text) ? "builtin" : "name";
      afterDef = text === "def";
      out.push([kind, text]);
      i += text.length;
      continue;
    } else if (/[0-9]/.test(c) && (text = matchAt(NUMBER, source, i))) {
      kind = "number";
    } else {
      kind = "punct"; text = c;
    }
    if (kind !== "space") afterDef = false;
    out.push([kind, text]);
    i += text.length;
  }
  return out;
}

// lines groups the tokens by line: a multi-line string or a newline splits, so each
// line's pieces can be rendered in its own element.
export function lines(source) {
  const rows = [[]];
  for (const [kind, text] of tokens(source)) {
    const parts = text.split("\n");
    parts.forEach((p, k) => {
      if (k > 0) rows.push([]);
      if (p !== "" && kind !== "newline") rows[rows.length - 1].push([kind, p]);
    });
  }
  return rows;
}

// highlight renders source into el: one div per line (class "hl-line", and "hl-error"
// for errorLine, 1-based), spans with class "t-<kind>".
export function highlight(el, source, errorLine = 0) {
  const doc = el.ownerDocument;
  const frag = doc.createDocumentFragment();
  lines(source).forEach((row, k) => {
    const div = doc.createElement("div");
    div.className = k + 1 === errorLine ? "hl-line hl-error" : "hl-line";
    for (const [kind, text] of row) {
      if (kind === "name" || kind === "punct") {
        div.append(text);
      } else {
        const span = doc.createElement("span");
        span.className = "t-" + kind;
        span.textContent = text;
        div.append(span);
      }
    }
    div.append("\n");
    frag.append(div);
  });
  el.replaceChildren(frag);
}
