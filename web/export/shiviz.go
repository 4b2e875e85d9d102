package export

import (
	"net/http"

	"github.com/teach-dist/playground/runtime/shiviz"
	"github.com/teach-dist/playground/runtime/sim"
)

// shiviz streams a run as a ShiViz log (runtime/shiviz) while it replays. Cut by its
// budget, the log's last event, on the first process, says where it stopped and how to
// ask for less.
func (a *API) shiviz(w http.ResponseWriter, r *http.Request, j job) {
	out := output(w, r, j, "text/plain; charset=utf-8", "shiviz.log")
	b := a.budget(r.Context(), out, j.step)
	cfg := j.rec.Config
	var log *shiviz.Writer
	s, err := replayed(b, cfg, j.rec.Interventions, j.step, func(enc *sim.Encoder) sim.Sink {
		log = shiviz.New(out, enc, cfg.IDs)
		return log.Sink()
	})
	if err == sim.ErrStopped {
		log.Note(s.Now(), b.note())
		err = nil
	}
	if err == nil && log != nil {
		err = log.Close()
	}
	if err != nil {
		fail(w, out, err)
	}
}
