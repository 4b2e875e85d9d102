package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// countFrames counts, in every document of the tab, the socket frames the page takes.
const countFrames = `window.__frames = 0;
window.WebSocket = class extends window.WebSocket {
  constructor(...args) { super(...args); this.addEventListener("message", () => { window.__frames++; }); }
};`

// watchPills records, at every animation frame, where the stage's message pills are
// and how many socket frames had come: a pill that moves with no new frame since the
// animation frame before the last (the page paints a frame at the animation frame
// after it comes, which may run after this one's sample) glided.
const watchPills = `(() => {
  window.__moves = 0; window.__glides = [];
  let last = null, frames = [-1, -1];
  const tick = () => {
    const at = [...document.querySelectorAll("#view g.msg")].map((g) => g.dataset.id + "@" + g.getAttribute("transform")).join(" ");
    if (last !== null && at !== last) {
      if (window.__frames === frames[0]) window.__glides.push(last + " -> " + at);
      else window.__moves++;
    }
    last = at; frames = [frames[1], window.__frames];
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  return true;
})()`

// With prefers-reduced-motion (every tab of these tests asks for it), a playing run's
// messages jump from step to step: they move only when a frame of the run comes, never
// between two.
func TestReducedMotionMessagesJump(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 800)
	run(t, ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: countFrames})
		return err
	}))
	run(t, ctx, chromedp.Navigate(ts.URL+"/play/token-ring?n=5"))
	ready(t, ctx)
	if !eval[bool](t, ctx, `matchMedia("(prefers-reduced-motion: reduce)").matches`) {
		t.Fatal("the tab does not ask for less motion")
	}
	eval[bool](t, ctx, watchPills)
	run(t, ctx, chromedp.KeyEvent(" "))
	waitFor(t, ctx, `window.__moves >= 5 || window.__glides.length > 0`)
	if g := eval[[]string](t, ctx, `window.__glides`); len(g) > 0 {
		t.Fatalf("messages moved between two frames of the run (glided) %d times; first: %s", len(g), g[0])
	}
	run(t, ctx, chromedp.KeyEvent(" "))
}
