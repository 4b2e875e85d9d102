// Captions of a curated scenario: each explains the trace event with its seq. The one
// shown is the latest whose seq the run has reached (frames carry `seq`, the seq of
// the last event shown), so scrubbing back takes a caption away again.

const el = document.getElementById("caption");
let captions = [];
let shown = -2;

function render(seq) {
  let k = -1;
  for (let i = 0; i < captions.length && captions[i].seq <= seq; i++) k = i;
  if (k === shown) return; // unchanged: do not announce it again
  shown = k;
  if (k < 0) {
    el.hidden = true;
    el.textContent = "";
    delete el.dataset.seq;
    return;
  }
  el.textContent = captions[k].text;
  el.dataset.seq = String(captions[k].seq);
  el.hidden = false;
}

if (el) {
  document.addEventListener("pg:frame", (e) => {
    const f = e.detail.frame;
    if (f.type === "hello") {
      const list = f.scenario && Array.isArray(f.scenario.captions) ? f.scenario.captions : [];
      captions = list.slice().sort((a, b) => a.seq - b.seq);
      shown = -2;
    }
    if (typeof f.seq === "number") render(f.seq);
  });
}
