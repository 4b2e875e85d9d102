// The default workload of a free run: what Play starts when the run has nothing
// scheduled, so that a first press of Play shows the algorithm at work. It is a
// function of the run's setup and seed alone, and it is sent as the run's scenario
// events (a reset), so a share link and a replay carry it exactly.

export const WORKLOAD_TITLE = "Default workload";

// rng is a small seeded generator (mulberry32): the same seed, the same times.
function rng(seed) {
  let a = (Number(seed) >>> 0) ^ 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// defaultWorkload gives {events, about} for a run of family ("mutex" or "election")
// over ids with seed: in mutual exclusion every process asks for the critical section
// once, at times drawn from the seed (the first two at t = 0); in an election the highest
// process crashes and the lowest then calls an election.
export function defaultWorkload(family, ids, seed) {
  if (!ids.length) return { events: [], about: "" };
  if (family === "election") {
    const high = Math.max(...ids);
    const low = Math.min(...ids.filter((id) => id !== high));
    if (!Number.isFinite(low)) return { events: [], about: "" };
    return {
      events: [{ at: 0, do: "crash", node: high }, { at: 1, do: "elect", node: low }],
      about: `P${high}, the highest, crashes at t = 0; P${low} notices and calls an election at t = 1.`,
    };
  }
  const next = rng(seed);
  const span = 2 * ids.length;
  const times = ids.map(() => Math.floor(next() * span));
  // The first two ask at t = 0: one of them at least is not a token's holder, so a
  // message moves at once.
  const second = times.length > 1 ? times.slice().sort((a, b) => a - b)[1] : times[0];
  const events = ids.map((id, i) => ({ at: Math.max(0, times[i] - second), do: "request", node: id }))
    .sort((a, b) => a.at - b.at || a.node - b.node);
  const when = events.map((e) => `P${e.node} at t = ${e.at}`).join(", ");
  return { events, about: `Every process asks for the critical section once, at times drawn from seed ${seed}: ${when}.` };
}

// workloadScenario is scenario sc (a free run's) with the default workload as its
// events, or null when sc already schedules something or the family has none.
export function workloadScenario(sc, family, ids, seed) {
  if (!sc || sc.events?.length || sc.title) return null;
  const { events, about } = defaultWorkload(family, ids, seed);
  if (!events.length) return null;
  return {
    ...structuredClone(sc), title: WORKLOAD_TITLE, about, events,
    captions: [{ seq: 0, text: `${WORKLOAD_TITLE}: ${about} Click a process to add moves of your own.` }],
  };
}
