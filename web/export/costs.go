package export

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// costs answers the run measured against the notes up to the job's step, by replay
// off the session's goroutine. Its answer is small (a few counts per process); the
// gate bounds the replays at once.
func (a *API) costs(w http.ResponseWriter, r *http.Request, j job) {
	res, err := measureRecipe(j.rec, j.step)
	if err != nil {
		http.Error(w, "replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", j.cache)
	_ = json.NewEncoder(w).Encode(res)
}

// measureRecipe replays a session's run up to step as the live session runs it.
func measureRecipe(rec session.Recipe, step int) (cost.Result, error) {
	// The live run's configuration: no end time, the live event limit.
	res, err := cost.Replay(rec.Config, rec.Interventions, step)
	var ae *sim.ActionError
	if err != nil && !errors.As(err, &ae) && !errors.Is(err, sim.ErrEventLimit) {
		return res, err
	}
	return res, nil
}
