package export

import (
	"encoding/json"
	"net/http"

	"github.com/teach-dist/playground/runtime/lecture"
)

// selfCheck is a predict-the-next-step question offered to a reader on their own, with
// its answer: the page keeps the answer hidden until the run reaches Reveal.
type selfCheck struct {
	Kind    lecture.Kind `json:"kind"`
	Text    string       `json:"text"`
	Choices []string     `json:"choices"`
	Answer  int          `json:"answer"`
	Step    int          `json:"step"`
	Reveal  int          `json:"reveal"`
}

// SessionSelfCheck serves GET /api/sessions/{id}/selfcheck[?step=k]: the questions a
// lecture could ask at step k (default: the step shown), with their answers, for a
// guided scenario's self-checks. Lectures have no such route: there the answers stay
// on the server until Reveal.
func (a *API) SessionSelfCheck(w http.ResponseWriter, r *http.Request) {
	a.fromSource("selfcheck", true, true, (*API).selfCheck)(w, r)
}

func (a *API) selfCheck(w http.ResponseWriter, r *http.Request, j job) {
	rec := j.rec
	rec.Step = j.step
	out := []selfCheck{}
	qs, err := lecture.Generate(rec)
	if err == nil {
		for _, q := range qs {
			out = append(out, selfCheck{Kind: q.Kind, Text: q.Text, Choices: q.Choices, Answer: q.Answer, Step: q.Step, Reveal: q.Reveal})
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(out)
}
