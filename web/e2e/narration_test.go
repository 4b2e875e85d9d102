package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// observeLive records, in the page, every write to the page's live regions: the
// narration's (#announce), the status pill's and the caption's, with when the
// narration says it wrote (data-at, performance.now()) and whether the run played.
const observeLive = `(() => {
  window.__said = [];
  for (const id of ["announce", "status", "caption"]) {
    const el = document.getElementById(id);
    new MutationObserver(() => {
      window.__said.push({ id, text: el.textContent, at: Number(el.dataset.at || -1),
        playing: document.getElementById("btn-play").getAttribute("aria-pressed") === "true" });
    }).observe(el, { childList: true, characterData: true, subtree: true });
  }
  return true;
})()`

type said struct {
	ID      string  `json:"id"`
	Text    string  `json:"text"`
	At      float64 `json:"at"`
	Playing bool    `json:"playing"`
}

// What a screen reader hears of a run at 1x on the real server: while it plays, at
// most one narration every two seconds, each a summary of the steps since the last;
// the status says "Playing" once; no region says the same thing twice in a row.
// Paused, a step is said at once in full, with the lit rule; with the space-time
// diagram open on a laptop's screen the narration stays, on screen and live.
func TestScreenReaderNarration(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/token-ring?n=5"))
	ready(t, ctx)
	if eval[bool](t, ctx, `document.getElementById("log").closest("[aria-live]") !== null`) {
		t.Fatal("the narration log is a live region: every line of it would be read")
	}
	eval[bool](t, ctx, observeLive)

	// Play at 1x until the narration has given three summaries: the page's clock says
	// when each was written; the machine's speed only changes how long the test waits.
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `window.__said.filter((s) => s.id === "announce" && s.playing).length >= 3`)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `document.getElementById("btn-play").getAttribute("aria-pressed") === "false"`)
	log := eval[[]said](t, ctx, `window.__said`)
	for _, s := range log {
		t.Logf("%s %.0f %v %s", s.ID, s.At, s.Playing, s.Text)
	}
	var played []said
	last := map[string]string{}
	for _, s := range log {
		if last[s.ID] == s.Text {
			t.Errorf("%s said %q twice in a row", s.ID, s.Text)
		}
		last[s.ID] = s.Text
		if s.ID == "announce" && s.Playing {
			played = append(played, s)
		}
	}
	for i := 1; i < len(played); i++ {
		if gap := played[i].At - played[i-1].At; gap < 2000 {
			t.Errorf("two narrations %.0f ms apart while playing: %q, then %q", gap, played[i-1].Text, played[i].Text)
		}
	}
	for _, s := range played[1:] {
		if !strings.HasPrefix(s.Text, "Steps ") || !strings.Contains(s.Text, "latest: ") {
			t.Errorf("a narration while playing is not a summary of the steps since the last: %q", s.Text)
		}
	}
	playing := 0
	for _, s := range log {
		if s.ID == "status" && strings.HasPrefix(s.Text, "Playing") {
			playing++
		}
	}
	if playing != 1 {
		t.Errorf("the status said Playing %d times in one play", playing)
	}

	// Paused: a step is said in full, with the rule it lit.
	step := eval[int](t, ctx, `Number(document.getElementById("main").dataset.step)`)
	run(t, ctx, rightKey)
	want := fmt.Sprintf("Step %d: ", step+1)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("announce").textContent.startsWith(%q)`, want))
	lit := eval[[]string](t, ctx, `[...document.querySelectorAll("#code-scroll .rule.lit")].map((r) => r.dataset.rule)`)
	text := eval[string](t, ctx, `document.getElementById("announce").textContent`)
	for _, r := range lit {
		if !strings.Contains(text, r) {
			t.Errorf("the step's narration %q does not say the lit rule %s", text, r)
		}
	}

	// The space-time diagram open at 1280x800: the narration is still on screen, and
	// the next step is still said.
	eval[bool](t, ctx, `document.getElementById("st-toggle").click(), true`)
	waitFor(t, ctx, `document.getElementById("spacetime").dataset.state === "ready"`)
	if !eval[bool](t, ctx, `(() => { const r = document.getElementById("log").getBoundingClientRect(); return getComputedStyle(document.querySelector(".log-panel")).display !== "none" && r.height > 0; })()`) {
		t.Fatal("the narration is gone with the space-time diagram open")
	}
	run(t, ctx, rightKey)
	waitFor(t, ctx, fmt.Sprintf(`document.getElementById("announce").textContent.startsWith(%q)`, fmt.Sprintf("Step %d: ", step+2)))
}
