package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/grade"
	"github.com/teach-dist/playground/runtime/sandbox"
)

const gradeUsage = `usage: playground grade [flags] ASSIGNMENT SUBMISSION
       playground grade pack [flags] ASSIGNMENT -o autograder.zip

Checks a submission (a .star file, or a folder holding one) against an assignment with
the explorer, in sandbox workers under the assignment's limits, and prints its score.
ASSIGNMENT is a curated assignment (challenge-ra-tie-break ...) or an assignment file
(docs/assignments.md). Exit status: 0 when it graded, whatever the score; 1 on bad input.

'grade pack' builds a Gradescope autograder for the assignment (docs/assignments.md).

curated assignments: `

func gradeCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "pack" {
		return packCmd(args[1:], stdout, stderr)
	}
	fs := newFlags("grade", stderr)
	gradescope := fs.String("gradescope", "", "write Gradescope's results.json to this file")
	jsonOut := fs.String("json", "", "write the report as JSON to this file")
	junit := fs.String("junit", "", "write the report as JUnit XML to this file")
	url := fs.String("url", "", "prefix counterexample links with this address (e.g. https://play.example.edu)")
	quiet := fs.Bool("quiet", false, "no summary on stdout and no progress on stderr")
	fs.Usage = func() {
		fmt.Fprintln(stderr, gradeUsage+strings.Join(grade.Names(), ", ")+"\n")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args, 2, "grade: expected an ASSIGNMENT and a SUBMISSION")
	if err != nil {
		return err
	}
	// Whatever goes wrong, Gradescope shows results.json: a grader that cannot grade
	// says why there, and still exits 1.
	fail := func(err error) error {
		if *gradescope != "" {
			var b bytes.Buffer
			if werr := grade.NotGraded(err.Error()).Write(&b); werr == nil {
				_ = os.WriteFile(*gradescope, b.Bytes(), 0o644)
			}
		}
		return err
	}
	a, err := loadAssignment(pos[0])
	if err != nil {
		return fail(err)
	}
	sub, err := readSubmission(pos[1])
	if err != nil {
		return fail(err)
	}
	// The submission is a student's code: it loads and is searched in sandbox workers
	// with the bounds the server's sources have (runtime/sandbox's defaults), at this
	// process's CPU priority rather than below it: the grader does nothing else
	// meanwhile, and a score must not depend on what else the machine runs.
	box, done := loadSourcesIn(sandbox.Options{Workers: 1, Nice: -1})
	defer done()
	opt := grade.Options{Explorer: box, URL: strings.TrimSuffix(*url, "/")}
	if !*quiet {
		opt.Progress = func(check string) { fmt.Fprintf(stderr, "grade: checking %s\n", check) }
	}
	r, err := grade.Grade(ctx, a, sub, opt)
	if err != nil {
		return fail(err)
	}
	writers := []struct {
		path  string
		write func(io.Writer) error
	}{{*gradescope, r.WriteGradescope}, {*jsonOut, r.WriteJSON}, {*junit, r.WriteJUnit}}
	for _, w := range writers {
		if w.path == "" {
			continue
		}
		var b bytes.Buffer
		if err := w.write(&b); err != nil {
			return err
		}
		if err := os.WriteFile(w.path, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if !*quiet {
		return r.WriteSummary(stdout)
	}
	return nil
}

// parseInterspersed parses flags placed before, between or after the positional
// arguments (grade pack NAME -o FILE), and returns the positional ones: n of them,
// or the error whatN says.
func parseInterspersed(fs *flag.FlagSet, args []string, n int, whatN string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != n {
		return nil, errors.New(whatN)
	}
	return pos, nil
}

// loadAssignment reads an assignment file, or takes a curated one by name.
func loadAssignment(arg string) (*grade.Assignment, error) {
	if _, err := os.Stat(arg); err == nil {
		return grade.ReadFile(arg)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if a, ok := grade.Lookup(arg); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%q is neither a file nor a curated assignment (curated: %s)", arg, strings.Join(grade.Names(), ", "))
}

// readSubmission reads a .star file, or the one .star file in a folder (Gradescope's
// /autograder/submission). A folder without exactly one is graded with the problem
// said; a path that does not exist is bad input.
func readSubmission(path string) (grade.Submission, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return grade.Submission{}, err
	}
	name := path
	if fi.IsDir() {
		var found []string
		err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			base := d.Name()
			if d.IsDir() && p != path && (strings.HasPrefix(base, ".") || base == "__MACOSX") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(base, ".star") && !strings.HasPrefix(base, ".") {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return grade.Submission{}, err
		}
		slices.Sort(found)
		switch len(found) {
		case 0:
			return grade.Submission{Name: filepath.Base(path), Problem: "the submission has no .star file: hand in your algorithm's source"}, nil
		case 1:
			name = found[0]
		default:
			rel := make([]string, len(found))
			for k, f := range found {
				rel[k], _ = filepath.Rel(path, f)
			}
			return grade.Submission{Name: filepath.Base(path), Problem: fmt.Sprintf("the submission has %d .star files (%s): hand in one", len(found), strings.Join(rel, ", "))}, nil
		}
	}
	f, err := os.Open(name)
	if err != nil {
		return grade.Submission{}, err
	}
	defer f.Close()
	limit := starlarkalg.DefaultLimits.Source
	src, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return grade.Submission{}, err
	}
	sub := grade.Submission{Name: filepath.Base(name), Source: string(src)}
	if len(src) > limit {
		sub.Source, sub.Problem = "", fmt.Sprintf("the source is larger than %d bytes", limit)
	}
	return sub, nil
}
