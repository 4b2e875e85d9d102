package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// Run runs sc (which has a source) to its end in a worker of its own and writes its
// trace, as `playground run` writes one, to w: the whole run inside the worker, at the
// interpreter's own speed, rather than a call per step. ctx's end kills the worker.
func (p *Pool) Run(ctx context.Context, sc *scenarios.Scenario, w io.Writer) error {
	doc, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	wk, err := p.start("run")
	if err != nil {
		return err
	}
	defer wk.kill("")
	if _, err := wk.in.Write(append(doc, '\n')); err != nil {
		return wk.failure(err, p.opts)
	}
	if err := wk.in.Flush(); err != nil {
		return wk.failure(err, p.opts)
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(w, wk.stdout)
		_ = wk.closeOut()
		copied <- err
	}()
	select {
	case err = <-copied:
	case <-ctx.Done():
		wk.kill("cancelled")
		<-copied
		return ctx.Err()
	}
	<-wk.exited
	if code := wk.cmd.ProcessState.ExitCode(); code != 0 {
		text := strings.TrimSpace(wk.stderr.String())
		if msg, ok := strings.CutPrefix(text, "run: "); ok && !strings.Contains(msg, "\n") {
			return errors.New(msg) // the run's own error, as an in-process run words it
		}
		return wk.failure(fmt.Errorf("exit status %d", code), p.opts)
	}
	return err
}

// serveRun is the run worker: one scenario, its trace on out, then it exits; the
// run's error goes to stderr as one line, "run: ...", with exit status 1.
func serveRun(in io.Reader, out io.Writer) error {
	line, err := bufio.NewReader(in).ReadBytes('\n')
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 64<<10)
	err = runTrace(line, bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return &runError{err}
	}
	return nil
}

type runError struct{ err error }

func (e *runError) Error() string { return "run: " + strings.ReplaceAll(e.err.Error(), "\n", " ") }

func runTrace(doc []byte, w io.Writer) error {
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return err
	}
	cfg, err := sc.Config()
	if err != nil {
		return err
	}
	var werr error
	s, err := sim.New(cfg, sim.NewEncoder(cfg.Spec, cfg.IDs).To(w, &werr))
	if err == nil {
		err = s.Run()
	}
	if err != nil {
		return err
	}
	return werr
}
