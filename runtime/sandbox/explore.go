package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/teach-dist/playground/runtime/explore"
	"github.com/teach-dist/playground/scenarios"
)

// A search of a source runs in a worker of its own: the worker reads one exploreJob
// line and writes exploreLine lines, progress then a result or an error. The server
// kills it when the search's time is up or its client cancels, which frees the
// search's memory and its slot at once, whatever the source is doing.

type exploreJob struct {
	Scenario      json.RawMessage  `json:"scenario"`
	MaxStates     int64            `json:"maxStates"`
	MaxMemory     int64            `json:"maxMemory"`
	Time          explore.TimeMode `json:"time"`
	NoReduce      bool             `json:"noReduce"`
	Timeout       time.Duration    `json:"timeout"`
	ProgressEvery time.Duration    `json:"progressEvery"`
}

type exploreLine struct {
	Progress *explore.Progress `json:"progress,omitempty"`
	Result   *explore.Result   `json:"result,omitempty"`
	Error    string            `json:"error,omitempty"`
	Field    string            `json:"field,omitempty"` // an input error's field
	Input    bool              `json:"input,omitempty"` // the scenario cannot be explored
	Line     int               `json:"line,omitempty"`  // of the source
}

// graceAfterTimeout is how long past its own time limit a search may take to stop by
// itself before its worker is killed.
const graceAfterTimeout = 500 * time.Millisecond

// Explore searches sc (which has a source) in a worker of its own, as explore.Explore
// would, under the search's own bounds and opt's time limit (ctx's deadline), and the
// sandbox's memory limit. A cancelled ctx kills the worker at once: the result is then
// bounded "cancelled". Progress is called on the caller's goroutine.
func (p *Pool) Explore(ctx context.Context, sc *scenarios.Scenario, opt explore.Options) (*explore.Result, error) {
	doc, err := json.Marshal(sc)
	if err != nil {
		return nil, err
	}
	job := exploreJob{Scenario: doc, MaxStates: opt.MaxStates, MaxMemory: opt.MaxMemory, Time: opt.Time,
		NoReduce: opt.NoReduce, ProgressEvery: opt.ProgressEvery}
	if dl, ok := ctx.Deadline(); ok {
		job.Timeout = max(time.Until(dl), time.Millisecond)
	}
	if job.MaxMemory <= 0 || job.MaxMemory > p.opts.Memory/2 {
		job.MaxMemory = p.opts.Memory / 2 // the rest is the runtime's and the source's own
	}
	w, err := p.start("explore")
	if err != nil {
		return nil, err
	}
	defer w.kill("")
	line, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	if _, err := w.in.Write(append(line, '\n')); err != nil {
		return nil, w.failure(err, p.opts)
	}
	if err := w.in.Flush(); err != nil {
		return nil, w.failure(err, p.opts)
	}
	lines := make(chan exploreLine)
	readErr := make(chan error, 1)
	// stop tells the reader that nobody reads lines any more. Not the worker's exit:
	// a worker exits as soon as it has written its result, and a reader that gave up
	// on seeing it gone would drop that last line, leaving the search to its kill.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer func() { _ = w.closeOut() }()
		sc := bufio.NewScanner(w.stdout)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			var l exploreLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				readErr <- err
				return
			}
			select {
			case lines <- l:
			case <-stop:
				return
			}
		}
		err := sc.Err()
		if err == nil {
			err = io.EOF
		}
		readErr <- err
	}()
	done := ctx.Done()
	var kill <-chan time.Time
	if job.Timeout > 0 {
		t := time.NewTimer(job.Timeout + graceAfterTimeout)
		defer t.Stop()
		kill = t.C
	}
	for {
		select {
		case l := <-lines:
			switch {
			case l.Progress != nil:
				if opt.Progress != nil {
					opt.Progress(*l.Progress)
				}
			case l.Result != nil:
				return l.Result, nil
			default:
				return nil, exploreError(&l, sc)
			}
		case err := <-readErr:
			return nil, w.failure(err, p.opts)
		case <-kill:
			w.kill("time")
			return &explore.Result{Result: "bounded", Bound: explore.BoundTime, Algorithm: sc.Algorithm,
				Message: fmt.Sprintf("the search did not stop by itself within its %v: the sandbox stopped it", job.Timeout.Round(time.Second))}, nil
		case <-done:
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// The search's own time limit: its worker answers with its bounded
				// result, or the kill timer stops it.
				done = nil
				continue
			}
			w.kill("cancelled")
			return &explore.Result{Result: "bounded", Bound: explore.BoundCancelled, Algorithm: sc.Algorithm, Message: "cancelled"}, nil
		}
	}
}

// exploreError turns a worker's error line back into the error explore.Explore gives.
func exploreError(l *exploreLine, sc *scenarios.Scenario) error {
	if l.Line > 0 {
		return &scenarios.Error{Field: "source", Reason: l.Error, Line: l.Line}
	}
	if l.Input {
		return &explore.InputError{Field: l.Field, Reason: l.Error}
	}
	return errors.New(l.Error)
}

// serveExplore is the explore worker: one job, then it exits.
func serveExplore(in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return err
	}
	var job exploreJob
	if err := json.Unmarshal(line, &job); err != nil {
		return err
	}
	bw := bufio.NewWriter(out)
	enc := json.NewEncoder(bw)
	emit := func(l exploreLine) {
		_ = enc.Encode(l)
		_ = bw.Flush()
	}
	sc, err := scenarios.Parse(job.Scenario)
	if err != nil {
		emit(errorLine(err))
		return nil
	}
	ctx := context.Background()
	if job.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, job.Timeout)
		defer cancel()
	}
	res, err := explore.Explore(ctx, sc, explore.Options{MaxStates: job.MaxStates, MaxMemory: job.MaxMemory,
		Time: job.Time, NoReduce: job.NoReduce, Workers: 1, ProgressEvery: job.ProgressEvery,
		Progress: func(pr explore.Progress) { emit(exploreLine{Progress: &pr}) }})
	if err != nil {
		emit(errorLine(err))
		return nil
	}
	emit(exploreLine{Result: res})
	return nil
}

func errorLine(err error) exploreLine {
	l := exploreLine{Error: err.Error(), Line: scenarios.SourceLine(err)}
	var ie *explore.InputError
	if errors.As(err, &ie) {
		l.Input, l.Field, l.Error = true, ie.Field, ie.Reason
	}
	var se *scenarios.Error
	if l.Line > 0 && errors.As(err, &se) {
		l.Error = se.Reason
	}
	return l
}
