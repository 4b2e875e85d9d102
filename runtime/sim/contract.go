package sim

// This file is the algorithm contract: what an algorithm implements (Node), what it
// receives (Input), how it acts (Context) and how it describes itself (Spec).
// Algorithms are pure: everything they do goes through Context, so a step can be
// replayed, recorded in a test or explored exhaustively.

// Node is one process's state machine. Step must be deterministic: the same state and
// input give the same effects and the same next state.
type Node interface {
	Step(ctx *Context, in *Input)
	// Clone returns a deep copy; replay, snapshots and the explorer rely on it.
	Clone() Node
	// Encode writes the inspector's variables, canonically (fixed key order).
	Encode(w *StateWriter)
}

// WaitingFor is implemented by nodes that can say whom they wait for; the deadlock
// monitor builds its wait-for graph from it.
type WaitingFor interface {
	WaitingFor() []int
}

// TokenHolder is implemented by token algorithms' nodes, so the view can mark the
// process that holds the token.
type TokenHolder interface {
	HoldsToken() bool
}

// InputKind says what happened to a node.
type InputKind uint8

const (
	// Init is the first input of every node (rules like RI1 fire here).
	Init InputKind = iota
	// Deliver carries a message that arrived.
	Deliver
	// Timer says a timer set with Context.SetTimer fired.
	Timer
	// Request asks the node to enter the critical section.
	Request
	// Release asks a node in the critical section to leave it.
	Release
	// Elect asks the node to start an election (it suspects the coordinator).
	Elect
	// Recover restarts a crashed node; it receives a fresh state first.
	Recover
)

var inputNames = [...]string{"init", "deliver", "timer", "request", "release", "elect", "recover"}

func (k InputKind) String() string { return enumName(inputNames[:], k) }

// enumName is the name of an enumerated value v: names[v], or "unknown" past the end.
func enumName[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return "unknown"
}

// Input is what a node reacts to.
type Input struct {
	Kind  InputKind
	Msg   Message // for Deliver
	Timer string  // for Timer
}

// Message is a message between nodes. From and To are node indexes (0..N-1); the trace
// writes them as the scenario's ids. The payload slots are named per message type by
// MessageType, so one struct serves every algorithm without allocation.
type Message struct {
	ID    int64
	Type  string
	From  int
	To    int
	TS    int   // Lamport timestamp, for algorithms that stamp messages
	Arg   int   // one number: a candidate or leader id, a sequence number, a ticket
	Vec   []int // an array: token[], LN[], an active list
	Queue []int // a queue carried by a token (Suzuki-Kasami)
}

// Clone copies the slices so a held or replayed message never aliases a node's state.
func (m Message) Clone() Message {
	if m.Vec != nil {
		m.Vec = append([]int(nil), m.Vec...)
	}
	if m.Queue != nil {
		m.Queue = append([]int(nil), m.Queue...)
	}
	return m
}

// Family groups algorithms by the problem they solve.
type Family string

const (
	Mutex    Family = "mutex"
	Election Family = "election"
)

// Spec describes an algorithm: identity, pseudocode, inspector variables, messages,
// costs, defaults, and how to build its nodes.
type Spec struct {
	Slug    string
	Title   string
	Family  Family
	Summary string // one line: what it teaches

	// Name, when set, is the algorithm's own name: a Starlark source written from
	// scratch declares one (algorithms/starlarkalg). Such a run is the student's own
	// algorithm, not one of the notes': pages, links and summaries call it by Title
	// and Name and say so, while Slug stays the page it runs on.
	Name string

	Rules    []Rule
	Vars     []Var
	Messages []MessageType
	Costs    []Cost
	Defaults Defaults
	// Params are the fields the scenario's params object accepts, in the order a form
	// shows them; ParseParams decodes exactly these (algorithms/params.Parse).
	Params []Param
	// Stage says how a page draws the processes, as data rather than per-algorithm code.
	Stage Stage
	// CrashLeaderFirst: the notes analyse this election from a crashed leader ("the
	// coordinator has failed": Bully and the ring elections alike), so comparisons
	// crash the highest id before the elections start.
	CrashLeaderFirst bool
	// CostsCountLive: the n of this election's cost formulas is the processes alive when
	// the election starts, not all of them. A ring election's messages go round the live
	// ring, the crashed processes bypassed, one per process on it; Bully's N-2 counts the
	// crashed coordinator, so Bully leaves this false.
	CostsCountLive bool

	// Comparisons are the notes' claims that this algorithm costs less than another by
	// their formulas; /compare checks each against the figures and the runs when both
	// algorithms are compared.
	Comparisons []Comparison

	// DoorwayEnds, for the bakery, is the label of the rule that ends a process's
	// doorway (it has its ticket: it "enters the bakery"). The ordering verdict then
	// judges 002's property of the bakery ("if p_i enters the bakery before p_j enters
	// the doorway, then p_i will enter the CS before p_j") instead of the
	// happened-before order of requests.
	DoorwayEnds string

	// Earlier lists what an old share link must pin to replay as it did: params (and ids)
	// whose defaults changed, with the defaults epoch in which each change landed.
	Earlier []EarlierDefaults

	// BackgroundTimers and BackgroundMessages never stop a run from being quiescent:
	// a failure detector's heartbeats go on for ever, yet an election can settle.
	BackgroundTimers   []string
	BackgroundMessages []string

	// Canon, when set, says which parts of this algorithm's state the explorer may put
	// in a canonical form; nil: none (nothing is assumed).
	Canon *Canon

	// ParseParams decodes the scenario's params strictly; nil means none are accepted.
	ParseParams func(raw []byte, ids []int) (any, error)
	// New builds node self's initial state.
	New func(self int, setup *Setup) Node
}

// Canon is an algorithm's declaration of what in its state only matters up to order
// or shift, or not at all once the workload is over. The explorer stores the canonical
// form instead of the state, so both must behave alike for everything the checked
// properties observe (entering and leaving the CS, leaders, who waits for whom) and
// for every future input: a reduction that merges two states which could still differ
// there is unsound. Each function is pure and returns or changes a copy.
type Canon struct {
	// Node returns a copy of n in canonical form. Quiet is true when no workload event
	// will happen any more (no request, election, crash or recovery): variables that only
	// shape future requests (a Lamport clock) may then be forgotten.
	Node func(n Node, quiet bool) Node
	// Msg puts a copy of a message in canonical form, likewise (nil: messages stay as sent).
	Msg func(m *Message, quiet bool)
	// Inert reports that n, in canonical form once the workload is over, is final:
	// whatever message it is delivered, its canonical state stays the same and all it
	// does is answer the sender (it sends to no one else, never enters or leaves the CS,
	// sets a timer or declares a leader). Deliveries to such a process then commute with every other step, which
	// lets the explorer take one of them alone (partial-order reduction). Nil: never.
	Inert func(n Node) bool
	// Commutes reports that, once the workload is over, delivering m to n, when that
	// step changes nothing the properties see (it neither enters nor leaves the CS
	// nor declares a leader), gives the same as with any other step n may take before
	// or after it, in either order (a delivery of any message, sent yet or not, that
	// the network lets come first; one of its timers firing; leaving the CS), and
	// that no such step disables it. Such a delivery sets and cancels no timer. The
	// explorer then takes such a delivery alone (partial-order reduction, as for
	// Inert, which is the case of every message to n); it checks the claim against
	// the receiver's other steps at hand. Nil: none.
	Commutes func(n Node, m *Message, q Quiet) bool
	// Asynchronous says that the algorithm's properties are meant to hold without any
	// timing assumption: its timers only pace retries (a poll), never stand in for a
	// failure detector. The explorer then answers a timed question first without time,
	// which every timed run is a run of, and keeps that answer only when it proves every
	// property (runtime/explore/untimed.go); otherwise it searches with time as always.
	// The declaration only chooses the order of the two searches: no verdict rests on it.
	Asynchronous bool
	// Horizon, nil for most: see Horizon.
	Horizon *Horizon
}

// RequestStamp is Horizon.Msg for an algorithm whose requests travel as messages of
// type request stamped in TS: their stamp; other messages carry clocks, not requests.
func RequestStamp(request string) func(*Message) int {
	return func(m *Message) int {
		if m.Type == request {
			return m.TS
		}
		return 0
	}
}

// Quiet is what Canon.Commutes may rest on besides the node and the message.
type Quiet struct {
	// FIFO: the network keeps each channel's order, so the receiver's next message
	// from the same sender cannot come first.
	FIFO bool
	// Horizon is what the state's nodes and messages are capped at (Horizon), -1 for
	// an algorithm that declares none.
	Horizon int
}

// Horizon is for an algorithm whose clocks and timestamps only grow (by max and +1)
// and are only ever compared with the timestamps of requests (Lamport's). Once quiet
// no request is made any more, so the largest timestamp of a request still held
// somewhere (by a node, or by a message in flight), h, bounds every comparison still
// to come: a clock at h or above stamps everything it sends above every request, a
// received timestamp above h is later than every request. The explorer then stores
// each node and message with such values at the cap (CapNode, CapMsg), which merges
// states that differ only above the horizon and behave alike. Each function is pure.
type Horizon struct {
	// Node is the largest request timestamp n holds (its own, those it queues); 0: none.
	Node func(n Node) int
	// Msg is the request timestamp m carries; 0 for a message that carries none.
	Msg func(m *Message) int
	// CapNode returns a copy of n with every value above the horizon h at its cap.
	CapNode func(n Node, h int) Node
	// CapMsg puts a copy of a message likewise.
	CapMsg func(m *Message, h int)
}

// Setup is what every node of a run is built from.
type Setup struct {
	IDs      []int  // node index -> id; for ring algorithms, the ring order
	Params   any    // what ParseParams returned
	MaxDelay int    // the network's largest delay, for algorithms that size time-outs by it
	Owner    string // Config.Owner: no algorithm's behaviour may depend on it
}

// Rule is one labelled rule of the pseudocode.
type Rule struct {
	// Label is the notes' own label, written as they write it, when Notes is set
	// ("RH1"); otherwise the project's, of the form TAG-n ("CG-1"), so the two never
	// look alike (docs/labels.md).
	Label string
	// Notes names the course notes that give this label with this meaning (the file
	// numbers of ../shared/seeds, e.g. "000"); empty for a label the project invents.
	// The page marks the latter "not in the notes".
	Notes string
	Group string   // e.g. "Handling an incoming request"
	Lines []string // the pseudocode, one line each
	Says  string   // one plain sentence for the narration log
	// Differs, for a rule under the notes' label, says in one sentence where this
	// implementation does something other than the note's rule of that label, quoting
	// the note; the page shows it beside the rule, marked. Empty: it does what the note
	// says.
	Differs string
	// Why holds sentences for the cases a rule distinguishes (see Context.RuleWhy):
	// the narration says the one that applied. "{from}" stands for the sender of the
	// message being handled.
	Why map[string]string
}

// Var documents one inspector variable (a key written by Encode).
type Var struct {
	Name string
	Doc  string
}

// MessageType names a message and the trace keys of the payload slots it uses
// ("" leaves the slot out of the trace).
type MessageType struct {
	Name string
	// Label is what the stage writes on a message in flight: at most 5 characters,
	// unique within the algorithm (REQUEST is REQ, COORDINATOR is COORD).
	Label string
	Doc   string
	TS    string
	Arg   string
	Vec   string
	Queue string
}

// ParamKind is the type of a params field, which decides its form control.
type ParamKind string

const (
	// ParamInt is an integer within [Min, Max].
	ParamInt ParamKind = "int"
	// ParamBool is true or false.
	ParamBool ParamKind = "bool"
	// ParamChoice is one of the strings in Choices.
	ParamChoice ParamKind = "choice"
	// ParamNode is a node id of the run.
	ParamNode ParamKind = "node"
	// ParamObject is an object: its Fields when it has them (nested params), otherwise
	// a shape of its own that Doc describes (a tree, voting sets).
	ParamObject ParamKind = "object"
)

// Defaults of a ParamNode: which id a field left out takes.
const (
	FirstID   = "first"   // the first id of the scenario's ids (the ring order)
	LowestID  = "lowest"  // the smallest id
	HighestID = "highest" // the largest id
)

// Param describes one field of an algorithm's params: enough for a page to build a
// form control, and for algorithms/params to decode and check it with an error that
// names the field (params.<Name>).
type Param struct {
	Name string // the JSON field
	Kind ParamKind
	Doc  string // one line
	// Default is the value of a field left out, as JSON ("1", "false", `"list"`); for a
	// ParamNode one of FirstID, LowestID, HighestID; "" for an object (Doc says).
	Default string
	// Min and Max bound a ParamInt (Max 0 means MaxTime).
	Min, Max int
	// Zero says what 0 means when Min is 0 and 0 is special ("off").
	Zero string
	// Choices are the values of a ParamChoice.
	Choices []string
	// Fields are the fields of a ParamObject made of params.
	Fields []Param
}

// Stage is how a page decorates the processes of a run. Where it names an inspector
// variable (Var), the page reads that variable from each process's state.
type Stage struct {
	// Ring draws the processes in ring order (the scenario's ids) with the direction
	// messages travel: from each process to the next, the last to the first.
	Ring bool
	// Mark names a variable holding one node id (-1: none); the page marks that node
	// with MarkLabel (central: "coordinator").
	Mark      string
	MarkLabel string
	// Edges names a variable holding the id of a neighbour (-1: none); the page draws
	// an edge from each process to it, and names the edges EdgesLabel in its legend
	// (Raymond: "parent", "tree edge").
	Edges      string
	EdgesLabel string
	// Pointer names a variable holding the id a process points at (itself or -1:
	// none); the page draws it as an arrow, read again at every step since it may move,
	// and names it PointerLabel in its legend (Raymond: "holder", towards the token).
	Pointer      string
	PointerLabel string
	// Group names a variable holding a list of ids; the page highlights the group of
	// the process under the pointer or selected, naming it GroupLabel (Maekawa: "set",
	// "voting set").
	Group      string
	GroupLabel string
	// GroupAbout names a variable holding a sentence about the groups (Maekawa:
	// "construction", what built the voting sets and their K); the page adds it to
	// the note naming a group.
	GroupAbout string
}

// Cost is one figure of an algorithm's cost, from two sources kept apart: what the
// course notes say of it (Notes, each formula as a note writes it) and what the
// project derives for its own implementation (Formula, Value: what a run should
// measure). A figure the notes do not give has no Notes; where the notes' figure
// counts something else (an own vote, a lost message), the two differ and both show.
type Cost struct {
	Name  string // e.g. "messages per CS entry"
	Notes []NoteFormula
	// Formula is the project's derived figure, then its explanation after ": " or
	// " (": "2(N-1): N-1 REQUEST and N-1 REPLY"; "" when the project derives none.
	Formula string
	// Value evaluates Formula for n nodes (nil where it is not a single number);
	// delays are in message times T.
	Value func(n int) float64
	// Low and High, set together in place of Value, make the figure a range: Formula
	// writes it "LOW to HIGH" ("0 to 2(N-1): ..."), Low and High evaluate its bounds
	// for n nodes. Pages show both numbers and /compare draws the band between them.
	Low, High func(n int) float64
	// ValueFor, when set, evaluates Formula for a run's n and params (what ParseParams
	// returned), where the params change the figure (Maekawa's sets: K); a measured
	// run shows it in place of Value, which stays the figure for the defaults.
	ValueFor func(n int, params any) float64

	// The situation the figure describes, so that a run is measured only against the
	// figures that speak of it (runtime/cost.TheoryIn; the /compare page's workloads).
	//
	// Initiators is how many processes the figure has start an election at once: 1
	// for a one-initiator figure (best case, worst case); 0 when it does not say.
	Initiators int
	// ValueK, for a figure that depends on k initiators started at once ("2kN"),
	// evaluates it for n nodes and k initiators.
	ValueK func(n, k int) float64
	// When, if set, says whether the figure holds for a run with these params (the
	// algorithm's own Params value): a variant's figure is not drawn for another.
	When func(params any) bool
}

// Comparison is a note's claim that this algorithm's figure is below another's: Claim
// in the note's words; Metric is the measure (runtime/cost's key, "messages-per-entry")
// whose notes' formulas it compares, Formula this algorithm's and OtherFormula the
// other's (as their NoteFormulas write them).
type Comparison struct {
	Other        string // the other algorithm's slug
	In           []string
	Claim        string
	Metric       string
	Formula      string
	OtherFormula string
}

// NoteFormula is a formula the course notes give for a cost, copied as written (TeX
// set as plain text: \sqrt{N} as √N, \dots as …), with the notes that give it in
// those words.
type NoteFormula struct {
	In      []string // the notes, by number in ../shared/seeds: "000" ... "004"
	Formula string
	// Value evaluates the formula for n nodes, delays in message times T; nil where it
	// is no single number (O(N²), "1 to ∞").
	Value func(n int) float64
}

// Defaults is what a scenario gets when it leaves a field out.
// DefaultsEpoch numbers the playground's defaults: it grows each time a default of
// any algorithm changes (a param's default, default ids, a default variant). A share
// link records the epoch it was made under, so that it replays the same run after a
// change of defaults: the algorithm's Spec.Earlier says what such a link must pin.
const DefaultsEpoch = 3

// EarlierDefaults is one change of an algorithm's defaults, as an old link must undo
// it: links made under an epoch before Epoch pin Params (and the ids) to replay as
// they did.
type EarlierDefaults struct {
	Epoch    int    // the defaults epoch that introduced the change (links made before it pin Params)
	Params   string // JSON object of the params that keep the earlier behaviour, e.g. {"skip":"none"}
	IDsFrom0 bool   // the earlier default ids were 0..N-1 (for an old link that gave no ids)
}

type Defaults struct {
	Nodes int
	Delay [2]int
	FIFO  bool
	CS    int
	Until int
	// FirstID is the first of the default ids FirstID..FirstID+N-1: 0 for most, 1 where
	// the notes number the processes from 1 and a rule depends on it (Maekawa's V_i).
	FirstID int
}

// IDs returns the default ids of n processes.
func (d Defaults) IDs(n int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = d.FirstID + i
	}
	return ids
}

// HasToken reports whether the algorithm's processes say who holds a token
// (TokenHolder): asked of a process built with the defaults, so that a page shows the
// token in its legend only for algorithms that have one.
func (s *Spec) HasToken() bool {
	ids := s.Defaults.IDs(max(s.Defaults.Nodes, 1))
	var p any
	if s.ParseParams != nil {
		var err error
		if p, err = s.ParseParams(nil, ids); err != nil {
			return false
		}
	}
	_, ok := s.New(0, &Setup{IDs: ids, Params: p, MaxDelay: s.Defaults.Delay[1]}).(TokenHolder)
	return ok
}

// RuleLabel reports whether label is one of the spec's rules.
func (s *Spec) RuleLabel(label string) bool {
	for i := range s.Rules {
		if s.Rules[i].Label == label {
			return true
		}
	}
	return false
}

// MessageType returns the schema of a message type, or nil.
func (s *Spec) MessageType(name string) *MessageType {
	for i := range s.Messages {
		if s.Messages[i].Name == name {
			return &s.Messages[i]
		}
	}
	return nil
}
