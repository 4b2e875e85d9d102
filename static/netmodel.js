// The Network panel's reasoning (network.js draws it): which held message may go
// first on its channel, how the kernel's groups read as letters, what a dragged
// process's drop does to a draft partition. Pure: no DOM.

export const LETTERS = "ABCDEFGH";

// sameList: two arrays with the same items in the same order.
export const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// groupLetters renumbers the kernel's group per process (0 for the unlisted ones, then
// 1, 2 ...) as 0, 1, 2 ... in order of first appearance, so A is the first process's group.
export function groupLetters(groups) {
  const seen = new Map();
  return groups.map((g) => {
    if (!seen.has(g)) seen.set(g, seen.size);
    return seen.get(g);
  });
}

// byGroup lists, group by group in group order, what each process position gives.
function byGroup(groups, of) {
  const by = new Map();
  groups.forEach((g, i) => {
    if (!by.has(g)) by.set(g, []);
    by.get(g).push(of(i));
  });
  return [...by.entries()].sort((a, b) => a[0] - b[0]);
}

// describeGroups writes a draft partition as "A: P0 P1 | B: P2".
export function describeGroups(groups, ids) {
  return byGroup(groups, (i) => `P${ids[i]}`).map(([g, ps]) => `${LETTERS[g]}: ${ps.join(" ")}`).join(" | ");
}

// partitionOf turns a group per process position into the ids of each group, the
// groups of a partition command.
export function partitionOf(groups, ids) {
  return byGroup(groups, (i) => ids[i]).map(([, members]) => members);
}

// dropGroup is the group process i joins when dropped on process target (-1: on empty
// ground, where it gets a group of its own), or -1 when nothing changes: dropped on
// itself, alone in its group already, or no letter left.
export function dropGroup(groups, i, target) {
  if (target >= 0 && target !== i) return groups[target];
  if (target === i) return -1;
  if (groups.filter((g) => g === groups[i]).length === 1) return -1;
  const used = new Set(groups.filter((_, k) => k !== i));
  let free = 0;
  while (used.has(free)) free++;
  return free < LETTERS.length ? free : -1;
}

// heldQueue lists the held messages ({msg, sent, at} with at < 0) in id order, each
// with behind: under FIFO, the id of its channel's oldest held message when that is
// another one (it must go first), else 0.
export function heldQueue(inflight, fifo) {
  const held = [...inflight.values()].filter((f) => f.at < 0).sort((a, b) => a.msg.id - b.msg.id);
  const head = new Map();
  return held.map((f) => {
    const ch = `${f.msg.from}>${f.msg.to}`;
    if (!head.has(ch)) head.set(ch, f.msg.id);
    return { ...f, behind: fifo && head.get(ch) !== f.msg.id ? head.get(ch) : 0 };
  });
}

// parkOffset is how far down (view units) a held pill of height h goes at place k in
// its channel's queue: one pill and a gap per place.
export const parkOffset = (k, h) => k * (h + 3);

// queueRanks gives each held message its place in its channel's queue (the first one,
// at 0, is left out): the view fans a channel's held messages out by it.
export function queueRanks(inflight) {
  const rank = new Map();
  const byChannel = new Map();
  for (const f of heldQueue(inflight, false)) {
    const ch = `${f.msg.from}>${f.msg.to}`;
    const k = byChannel.get(ch) || 0;
    byChannel.set(ch, k + 1);
    if (k > 0) rank.set(f.msg.id, k);
  }
  return rank;
}
