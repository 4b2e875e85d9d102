package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A follower's panels read the run as the presenter shows it, read-only: the
// timeline, the metrics and the exports stop at the presenter's step, even when the
// presenter has been further (a question must not be answerable by reading ahead).
func TestLectureAPIShowsThePresentersStepAndNoFurther(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=3")
	rig.drive(t, `{"type":"act","do":"request","node":1}`)
	rig.drive(t, steps(5)...)
	rig.drive(t, `{"type":"seek","step":4}`)
	api := rig.ts.URL + "/api/lectures/" + rig.code

	var tl struct {
		Horizon, Step int
		Batches       []struct{ Step int }
	}
	p := get(t, browser(t), api+"/timeline")
	if p.status != http.StatusOK {
		t.Fatalf("timeline: %d %s", p.status, p.body)
	}
	if err := json.Unmarshal([]byte(p.body), &tl); err != nil {
		t.Fatal(err)
	}
	if tl.Step != 4 || tl.Horizon != 4 || len(tl.Batches) == 0 || tl.Batches[len(tl.Batches)-1].Step != 4 {
		t.Fatalf("timeline: step %d, horizon %d, last batch %+v", tl.Step, tl.Horizon, tl.Batches[len(tl.Batches)-1])
	}
	// The presenter's own session still reaches step 5.
	var own struct{ Horizon int }
	if err := json.Unmarshal([]byte(get(t, browser(t), rig.ts.URL+"/api/sessions/"+rig.session+"/timeline").body), &own); err != nil || own.Horizon != 5 {
		t.Fatalf("the presenter's timeline: horizon %d, %v", own.Horizon, err)
	}

	var m struct{ Step int }
	if p := get(t, browser(t), api+"/metrics?step=5"); p.status != http.StatusOK || json.Unmarshal([]byte(p.body), &m) != nil || m.Step != 4 {
		t.Fatalf("metrics asked at step 5: %d %s", p.status, p.body)
	}

	trace := get(t, browser(t), api+"/trace")
	lines := strings.Split(strings.TrimSpace(trace.body), "\n")
	if trace.status != http.StatusOK || !strings.Contains(trace.body, `"rule":"RA1"`) {
		t.Fatalf("trace: %d %s", trace.status, trace.body)
	}
	var last struct{ Step int }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Step > 4 {
		t.Fatalf("the trace goes past step 4: %s", lines[len(lines)-1])
	}
	if p := get(t, browser(t), api+"/shiviz?download=1"); p.status != http.StatusOK || !strings.Contains(p.header.Get("Content-Disposition"), "shiviz") {
		t.Fatalf("shiviz: %d %v", p.status, p.header)
	}

	// The follower's page points its panels here.
	page := get(t, browser(t), rig.ts.URL+"/l/"+rig.code)
	if !strings.Contains(page.body, `data-api="/api/lectures/`+rig.code+`"`) || !strings.Contains(page.body, `/api/lectures/`+rig.code+`/trace?download=1`) {
		t.Fatal("the follower's page does not point its panels at the lecture's API")
	}
}

func TestLectureAPIRefusesWhatIsNotALiveLecture(t *testing.T) {
	rig := startLecture(t, Options{}, "/play/ricart-agrawala?n=3")
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/api/lectures/not-a-code/timeline", http.StatusNotFound},
		{"/api/lectures/BBBBBB/metrics", http.StatusNotFound},
	} {
		if p := get(t, browser(t), rig.ts.URL+tc.path); p.status != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.path, p.status, p.body, tc.want)
		}
	}
	rig.presenter.send(`{"type":"lecture","op":"end"}`)
	for {
		if f := rig.pnext(t, "lecture", "error"); f.Type == "error" || f.State == "ended" {
			break
		}
	}
	p := get(t, browser(t), rig.ts.URL+"/api/lectures/"+rig.code+"/timeline")
	if p.status != http.StatusGone || !strings.Contains(p.body, "ended") {
		t.Fatalf("after the end: %d %s", p.status, p.body)
	}
}
