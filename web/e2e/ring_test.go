package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// The lecture's case, in the browser with no setup at all (the case a lecture shows): the
// leader P5, the highest id, crashes and P0 calls an election. Before, the ELECTION
// was lost at the crashed P5 and everyone kept following it; by default a ring
// election now skips the crashed process, so every live process ends with P4.
func TestRingElectionsSkipTheCrashedLeaderByDefault(t *testing.T) {
	needBrowser(t)
	for _, slug := range []string{"ring", "ring-list"} {
		t.Run(slug, func(t *testing.T) {
			ts := server(t)
			ctx := tab(t, ts.URL, 1280, 900)
			run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+slug+"?n=6"))
			ready(t, ctx)
			clickProcessAction(t, ctx, 5, "crash")
			clickProcessAction(t, ctx, 0, "elect")
			run(t, ctx, chromedp.Evaluate[chromedp.Void](`(() => {
				const s = document.getElementById("speed");
				s.value = "16";
				s.dispatchEvent(new Event("change"));
				if (document.getElementById("btn-play").getAttribute("aria-pressed") !== "true") document.getElementById("btn-play").click();
			})()`))
			// P0 to P3 each take P4, the highest live id, as leader, and P4 takes itself.
			waitFor(t, ctx, `[0, 1, 2, 3, 4].every((k) => [...document.querySelectorAll("#log li")].some((li) => li.textContent.includes(k === 4 ? "P4 is now the leader" : "P" + k + " now takes P4 as leader")))`)
			screenshot(t, ctx, slug+"-crashed-leader.png")
		})
	}
}
