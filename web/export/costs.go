package export

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/teach-dist/playground/runtime/cost"
	"github.com/teach-dist/playground/runtime/session"
	"github.com/teach-dist/playground/runtime/sim"
)

// costs answers the run measured against the notes up to the job's step, by replay
// off the session's goroutine. Its answer is small (a few counts per process); the
// gate bounds the replays at once, and its deadline the replay's time: past it the
// answer is a 503 naming the step reached and how to ask for less.
func (a *API) costs(w http.ResponseWriter, r *http.Request, j job) {
	ctx := r.Context()
	res, err := measureRecipe(j.rec, j.step, func(*sim.Sim) bool { return ctx.Err() == nil })
	if errors.Is(err, sim.ErrStopped) {
		w.Header().Set("Retry-After", "60")
		http.Error(w, fmt.Sprintf("measuring this run stopped at step %d of the %d asked for: it took longer than the %s a measure may take. Ask for less with an earlier step: ?step=%d or below",
			res.Step, j.step, a.opts.Gate.Timeout, res.Step), http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, "replay: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", j.cache)
	_ = json.NewEncoder(w).Encode(res)
}

// measureRecipe replays a session's run up to step as the live session runs it, while
// goOn says so (sim.ErrStopped when it stops it).
func measureRecipe(rec session.Recipe, step int, goOn func(*sim.Sim) bool) (cost.Result, error) {
	// The live run's configuration: no end time, the live event limit.
	res, err := cost.ReplayWhile(rec.Config, rec.Interventions, step, goOn)
	var ae *sim.ActionError
	if err != nil && !errors.As(err, &ae) && !errors.Is(err, sim.ErrEventLimit) {
		return res, err
	}
	return res, nil
}
