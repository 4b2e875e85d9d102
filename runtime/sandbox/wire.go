// Package sandbox runs students' Starlark sources outside the server process: in
// worker processes (this same binary, started again with PLAYGROUND_SANDBOX set), each
// under an operating-system memory limit and a lower CPU priority, with a deadline on
// every call that the server enforces by killing the worker. A worker that dies takes
// only the call it was running; the runs it served go on with another worker.
//
// Two kinds of work go to workers:
//
//   - A run's steps (Pool.Load): the server's kernel drives a source's nodes like any
//     other algorithm's, but a node is plain data (its state as bytes) and each step is
//     one call to a pooled worker, which decodes the state, runs the handler and sends
//     back the effects, the new state and what the inspector shows (remote.go). Live
//     sessions, link replays, exports, lectures and challenges all run sources so.
//   - A search (Pool.Explore): the explorer runs in a worker of its own, started for the
//     search and killed when it ends, times out or its client cancels (explore.go).
//
// The workers are few and shared fairly among clients (Options.Share), so one client's
// sources cannot occupy them all.
package sandbox

import (
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
)

// op is what a request asks of a step worker.
type op uint8

const (
	opLoad op = iota + 1 // compile a source and keep it under its key
	opInit               // a node's first state
	opStep               // one step of a node
)

// request is one call to a step worker, gob-encoded on its stdin.
type request struct {
	Op     op
	Key    string // the program: programKey(slug, source)
	Slug   string // opLoad
	Source string // opLoad
	Self   int
	Setup  setupWire
	State  []byte
	Input  sim.Input
	Up     []bool // who is up, for ctx.up (nil: everybody)
}

// setupWire is a run's sim.Setup as data: the params as the scenario gave them (the
// worker decodes them again with the source's declarations).
type setupWire struct {
	IDs      []int
	Params   []byte
	MaxDelay int
}

// response answers a request, gob-encoded on the worker's stdout.
type response struct {
	Unknown bool // the worker does not hold the program: load it, then ask again
	Spec    *specWire
	LoadErr *starlarkalg.Error
	Result  starlarkalg.Result
}

// specWire is a loaded source's Spec without its functions.
type specWire struct {
	Slug, Title, Summary string
	Family               sim.Family
	Rules                []sim.Rule
	Vars                 []sim.Var
	Messages             []sim.MessageType
	Params               []sim.Param
	Defaults             sim.Defaults
	Stage                sim.Stage
	CrashLeaderFirst     bool
	BackgroundTimers     []string
	BackgroundMessages   []string
	HoldsToken           bool
	// Name and Costs are what a source written from scratch declares: its own name,
	// and its costs evaluated in the worker, numbers the server draws without running
	// the source.
	Name  string
	Costs []starlarkalg.CostTable
}

func wireSpec(p *starlarkalg.Program) *specWire {
	s := p.Spec()
	return &specWire{Slug: s.Slug, Title: s.Title, Summary: s.Summary, Family: s.Family, Rules: s.Rules,
		Vars: s.Vars, Messages: s.Messages, Params: s.Params, Defaults: s.Defaults, Stage: s.Stage,
		CrashLeaderFirst: s.CrashLeaderFirst, BackgroundTimers: s.BackgroundTimers,
		BackgroundMessages: s.BackgroundMessages, HoldsToken: p.HoldsToken(), Name: s.Name, Costs: p.Costs()}
}

func (w *specWire) spec() *sim.Spec {
	s := &sim.Spec{Slug: w.Slug, Title: w.Title, Summary: w.Summary, Family: w.Family, Rules: w.Rules,
		Vars: w.Vars, Messages: w.Messages, Params: w.Params, Defaults: w.Defaults, Stage: w.Stage,
		CrashLeaderFirst: w.CrashLeaderFirst, BackgroundTimers: w.BackgroundTimers,
		BackgroundMessages: w.BackgroundMessages, Name: w.Name}
	for _, t := range w.Costs {
		s.Costs = append(s.Costs, t.Cost())
	}
	return s
}
