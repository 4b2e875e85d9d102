package export

import (
	"fmt"
	"net/http"

	"github.com/teach-dist/playground/runtime/shiviz"
	"github.com/teach-dist/playground/runtime/sim"
)

// serveShiViz streams a run as a ShiViz log (runtime/shiviz) while it replays. Until
// the first byte goes out, a replay that fails is a 400; after it, the response is
// aborted, so a client never takes a cut log for a whole one.
func serveShiViz(w http.ResponseWriter, r *http.Request, cfg sim.Config, ivs []sim.Intervention, step int, cache string) {
	out := &lazyHeader{w: w, set: func(h http.Header) {
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Cache-Control", cache)
		if r.URL.Query().Get("download") == "1" {
			h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-shiviz.log"`, cfg.Spec.Slug))
		}
	}}
	var log *shiviz.Writer
	err := replayed(cfg, ivs, step, func(enc *sim.Encoder) sim.Sink {
		log = shiviz.New(out, enc, cfg.IDs)
		return log.Sink()
	})
	if err == nil && log != nil {
		err = log.Close()
	}
	switch {
	case err == nil:
	case !out.started:
		http.Error(w, "this run cannot be replayed: "+err.Error(), http.StatusBadRequest)
	default:
		panic(http.ErrAbortHandler)
	}
}

// lazyHeader sets the response's headers at its first write.
type lazyHeader struct {
	w       http.ResponseWriter
	set     func(http.Header)
	started bool
}

func (l *lazyHeader) Write(p []byte) (int, error) {
	if !l.started {
		l.started = true
		l.set(l.w.Header())
	}
	return l.w.Write(p)
}
