// Run setup's params, without the DOM: the controls come from the algorithm's own
// declaration of its params (web/pages/setup.go), so nothing here knows an algorithm.
// A control is { name, kind, def, value, checked }: kind is the sim.ParamKind ("int",
// "bool", "choice", "node", "object"), def the declared default as JSON ("" when the
// algorithm derives it), value the text of the control, checked a checkbox's state.

// readParams turns the controls into the scenario's params object. A control left
// empty, or at its declared default, is left out; problems maps a param's name to
// what is wrong with its text (the server judges the rest and names the field too).
export function readParams(controls) {
  const params = {};
  const problems = {};
  for (const c of controls) {
    let v;
    switch (c.kind) {
      case "bool":
        v = Boolean(c.checked);
        break;
      case "choice":
        v = c.value;
        break;
      case "int":
      case "node": {
        const s = String(c.value ?? "").trim();
        if (s === "") continue;
        v = Number(s);
        if (!Number.isInteger(v)) { problems[c.name] = `params.${c.name}: ${s} is not a whole number`; continue; }
        break;
      }
      default: {
        const s = String(c.value ?? "").trim();
        if (s === "") continue;
        try {
          v = JSON.parse(s);
        } catch (e) {
          problems[c.name] = `params.${c.name}: not JSON (${e.message})`;
          continue;
        }
      }
    }
    if (c.def !== "" && JSON.stringify(v) === c.def) continue;
    params[c.name] = v;
  }
  return { params, problems };
}

// controlState is what a control shows for a scenario's params (undefined: none).
export function controlState(c, params) {
  const v = params ? params[c.name] : undefined;
  switch (c.kind) {
    case "bool":
      return { checked: v === undefined ? c.def === "true" : Boolean(v), value: "" };
    case "choice":
      return { value: v === undefined ? (c.def ? JSON.parse(c.def) : "") : String(v) };
    case "int":
    case "node":
      return { value: v === undefined ? "" : String(v) };
    default:
      return { value: v === undefined ? "" : JSON.stringify(v) };
  }
}

// errorParam is the param a server error names ("scenario: params.tree: ..." gives
// "tree"), or null.
export function errorParam(msg) {
  const m = /\bparams\.([A-Za-z0-9_]+)/.exec(msg || "");
  return m ? m[1] : null;
}

// playQuery is the /play query that sets up scenario sc (docs/links.md): the run's
// size, seed, time in the CS and network, then p.<name> for each of its params
// (objects as JSON). Ids and events have no place in it.
export function playQuery(sc) {
  const q = new URLSearchParams();
  if (sc.nodes !== undefined) q.set("n", String(sc.nodes));
  if (sc.seed !== undefined) q.set("seed", String(sc.seed));
  if (sc.cs !== undefined) q.set("cs", String(sc.cs));
  const nw = sc.network || {};
  if (nw.delay) q.set("delay", nw.delay[0] === nw.delay[1] ? String(nw.delay[0]) : `${nw.delay[0]}-${nw.delay[1]}`);
  for (const k of ["fifo", "loss", "hold"]) if (nw[k] !== undefined) q.set(k, String(nw[k]));
  for (const [name, v] of Object.entries(sc.params || {})) {
    q.set(`p.${name}`, typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
  }
  return q.toString();
}
