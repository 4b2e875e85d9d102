// Captions of a curated scenario: each explains the trace event with its seq. The one
// shown is the latest whose seq the run has reached (frames carry `seq`, the seq of
// the last event shown), so scrubbing back takes a caption away again.

import { byId } from "./dom.js";

// captionAt is the index of the caption to show once the run has reached seq (-1:
// none yet); captions are sorted by seq.
export function captionAt(captions, seq) {
  let k = -1;
  for (let i = 0; i < captions.length && captions[i].seq <= seq; i++) k = i;
  return k;
}

function render(st, seq) {
  const k = captionAt(st.captions, seq);
  if (k === st.shown) return; // unchanged: do not announce it again
  st.shown = k;
  const box = st.box;
  if (k < 0) {
    box.hidden = true;
    box.textContent = "";
    delete box.dataset.seq;
    return;
  }
  box.textContent = st.captions[k].text;
  box.dataset.seq = String(st.captions[k].seq);
  box.hidden = false;
}

// createCaptions follows the run's frames with the page's caption box, when it has one.
export function createCaptions() {
  const box = byId("caption");
  if (!box) return null;
  const st = { box, captions: [], shown: -2 };
  return {
    frame(f) {
      if (f.type === "hello") {
        const list = f.scenario && Array.isArray(f.scenario.captions) ? f.scenario.captions : [];
        st.captions = list.slice().sort((a, b) => a.seq - b.seq);
        st.shown = -2;
      }
      if (typeof f.seq === "number") render(st, f.seq);
    },
  };
}
