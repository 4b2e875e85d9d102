package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The pseudocode panel marks the playground's own labels "ours", visibly, and says in
// their tooltip which notes give which labels; the notes' labels are shown plainly.
func TestPseudocodeMarksLabelsNotInTheNotes(t *testing.T) {
	needBrowser(t)
	ts := server(t)
	ctx := tab(t, ts.URL, 1280, 720)
	for _, tc := range []struct {
		slug      string
		ours, all int
		wantKey   bool
	}{
		{"ricart-agrawala", 0, 7, false},
		{"ricart-agrawala-token", 0, 7, false},
		{"central", 7, 7, true},
	} {
		run(t, ctx, chromedp.Navigate(ts.URL+"/play/"+tc.slug))
		ready(t, ctx)
		type panel struct {
			All, Ours, Tags, Key int
			Outline, Title       string
		}
		got := eval[panel](t, ctx, `(() => {
			const ours = document.querySelector(".rule.ours .label");
			const any = document.querySelector(".rule .label");
			return {
				All: document.querySelectorAll("#code-scroll .rule").length,
				Ours: document.querySelectorAll("#code-scroll .rule.ours").length,
				Tags: [...document.querySelectorAll("#code-scroll .ours-tag")].filter((e) => e.getBoundingClientRect().width > 0 && getComputedStyle(e).visibility === "visible").length,
				Key: document.querySelectorAll(".code .ours-key").length,
				Outline: ours ? getComputedStyle(ours).outlineStyle : "",
				Title: any.title,
			};
		})()`)
		if got.All != tc.all || got.Ours != tc.ours || got.Tags != tc.ours || (got.Key == 1) != tc.wantKey {
			t.Errorf("%s: %+v, want %d rules of which %d ours (each with a visible tag), key %v", tc.slug, got, tc.all, tc.ours, tc.wantKey)
		}
		if tc.ours > 0 && got.Outline != "dotted" {
			t.Errorf("%s: an invented label's outline is %q, want dotted", tc.slug, got.Outline)
		}
		if !strings.Contains(got.Title, "Labels from the notes: Ricart-Agrawala (000) RI1 RA1-RA3 RE1 RH1 RR1") {
			t.Errorf("%s: the label's tooltip %q does not say which notes give which labels", tc.slug, got.Title)
		}
	}
}
