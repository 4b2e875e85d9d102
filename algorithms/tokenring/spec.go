package tokenring

import (
	"github.com/teach-dist/playground/algorithms/params"
	"github.com/teach-dist/playground/runtime/sim"
)

// Spec describes the algorithm for the registry (algorithms.All). Each call builds
// a new one: no caller can change what another sees.
func Spec() *sim.Spec {
	return &sim.Spec{
		Slug:    "token-ring",
		Title:   "Token ring",
		Family:  sim.Mutex,
		Summary: "A single token goes round the ring and whoever holds it may enter: simple and fair, but it costs messages when nobody wants it, and a lost token stops everything until an election regenerates it.",
		Rules: []sim.Rule{
			{Label: "TR-1", Group: "Initialisation", Lines: []string{
				"state := RELEASED; next := my successor in the ring order",
				"the initial holder gets the token (generation 0) and starts its hop time",
				"if regeneration is on: everyone else starts the lost time-out"},
				Says: "starts outside the CS; the initial holder starts with the token"},
			{Label: "TR-2", Group: "Asking for the CS", Lines: []string{
				"state := WANTED",
				"if I hold the token (waiting out its hop):",
				"    stop the hop time; state := HELD; enter the CS",
				"else: wait for the token to come round"},
				Says: "wants the CS: enters at once if the token is here, otherwise waits for it"},
			{Label: "TR-3", Group: "Receiving TOKEN(g)", Lines: []string{
				"keep the token; gen := g; participant := false",
				"stop the lost time-out   // the token is not lost",
				"if state = WANTED: state := HELD; enter the CS",
				"else: start the hop time"},
				Says: "receives the token: enters if it wants the CS, otherwise holds it for the hop time"},
			{Label: "TR-4", Group: "Passing an unwanted token", Lines: []string{
				"when the hop time is over and I still do not want the CS:",
				"    send TOKEN(gen) to next",
				"    start the lost time-out (if regeneration is on)"},
				Says: "does not want the CS and passes the token to its successor"},
			{Label: "TR-5", Group: "Leaving the CS", Lines: []string{
				"state := RELEASED",
				"if a newer generation was announced while I was inside (TR-9):",
				"    destroy my token; send the ELECTED I kept back",
				"else: send TOKEN(gen) to next",
				"start the lost time-out (if regeneration is on)"},
				Says: "leaves the CS and passes the token on at once"},
			{Label: "TR-6", Group: "Regeneration: suspecting a lost token", Lines: []string{
				"when the lost time-out expires (no token for `regenerate` time units):",
				"    participant := true",
				"    send ELECTION(my id, gen) to next",
				"    start the lost time-out again"},
				Says: "has not seen the token for too long and calls an election to regenerate it"},
			{Label: "TR-7", Group: "Regeneration: receiving ELECTION(k, g)", Lines: []string{
				"send ACK to the sender",
				"if I hold the token: drop it   // the token is not lost",
				"else if k > my id:",
				"    if participant and I already passed k on: drop it   // k left the ring",
				"    else participant := true; send ELECTION(k, max(g, gen)) to next",
				"else if k < my id and not participant:",
				"    participant := true; send ELECTION(my id, max(g, gen)) to next",
				"else (k < my id, participant): drop it   // mine or a higher one is out",
				"whenever I pass an ELECTION on: restart the lost time-out   // one is under way"},
				Says: "passes on a higher candidate, replaces a lower one by itself, or stops a duplicate"},
			{Label: "TR-8", Group: "Regeneration: receiving ELECTION(k, g)", Lines: []string{
				"if k = my id and participant:   // my own id came round: I am the highest",
				"    participant := false",
				"    gen := max(g, gen) + 1   // newer than every token the election saw",
				"    send ELECTED(my id, gen) to next"},
				Says: "sees its own id come back: it has the highest id and announces a new token generation"},
			{Label: "TR-9", Group: "Regeneration: receiving ELECTED(k, g)", Lines: []string{
				"send ACK to the sender",
				"if g <= gen: drop it   // already seen, or older",
				"gen := g; participant := false; restart the lost time-out",
				"if I hold an old token: if state = HELD, keep the ELECTED back until TR-5",
				"                        else destroy the token",
				"send ELECTED(k, g) to next (unless kept back)"},
				Says: "learns the new generation, destroys any older token and passes the news on"},
			{Label: "TR-10", Group: "Regeneration: receiving ELECTED(k, g)", Lines: []string{
				"if k = my id and g = gen:   // my ELECTED went all the way round",
				"    create TOKEN(g) and take it as in TR-3"},
				Says: "sees its ELECTED come back: every process knows the new generation, so it creates the new token"},
			{Label: "TR-11", Group: "Regeneration: receiving TOKEN(g)", Lines: []string{
				"if g < gen (or I already hold a token): destroy it   // superseded"},
				Says: "destroys a token of an older generation"},
			{Label: "TR-12", Group: "Regeneration: reaching the successor", Lines: []string{
				"ELECTION and ELECTED go to next one at a time;",
				"on ACK from next: stop the ack time-out, send the next queued one"},
				Says: "has its election message acknowledged and sends the next one"},
			{Label: "TR-13", Group: "Regeneration: reaching the successor", Lines: []string{
				"when the ack time-out expires (the receiver did not answer):",
				"    next := the process after it   // skip it, for the token too",
				"    send the message again to the new next",
				"    (if next comes back to me, I am alone: handle it myself)"},
				Says: "hears nothing from its successor, takes it for crashed and skips it"},
			{Label: "TR-14", Group: "Recovering after a crash", Lines: []string{
				"start as in TR-1 but without any token (one held before the crash is lost)",
				"if regeneration is on:",
				"    send HELLO to every other process; start the lost time-out"},
				Says: "comes back without the token and asks to be let back into the ring"},
			{Label: "TR-15", Group: "Recovering after a crash", Lines: []string{
				"on HELLO from r:",
				"    if I await r's ACK: send r the message again   // lost in its crash",
				"    else if r lies between me and next in ring order:",
				"        next := r   // take it back as successor",
				"        if I hold an idle token alone: start the hop time"},
				Says: "takes a recovered process back as its successor"},
		},
		Vars: []sim.Var{
			{Name: "state", Doc: "RELEASED, WANTED or HELD"},
			{Name: "token", Doc: "whether this process holds the token"},
			{Name: "next", Doc: "id of the successor the token goes to (a skipped, crashed one is left out)"},
			{Name: "gen", Doc: "regeneration only: newest token generation known; older tokens are destroyed"},
			{Name: "participant", Doc: "regeneration only: taking part in an election"},
			{Name: "candidate", Doc: "regeneration only: highest candidate id this process passed on in the current election (-1: none)"},
			{Name: "kept", Doc: "regeneration only: an ELECTED(leader,gen) held back while this process is in the CS with a superseded token, destroyed on leaving (empty: none)"},
			{Name: "outbox", Doc: "regeneration only: ELECTION(candidate,gen) and ELECTED(leader,gen) queued for next, oldest first"},
			{Name: "awaitingAck", Doc: "regeneration only: id of the process whose ACK for the first outbox message is awaited (-1: none)"},
		},
		Messages: []sim.MessageType{
			{Name: MsgToken, Label: "TOKEN", Doc: "the token: its holder may enter the CS", Arg: "gen"},
			{Name: MsgElection, Label: "ELEC", Doc: "regeneration: the highest candidate id so far and the newest generation seen", Arg: "candidate", TS: "gen"},
			{Name: MsgElected, Label: "ELCTD", Doc: "regeneration: the winner and the generation of the token it will create", Arg: "leader", TS: "gen"},
			{Name: MsgAck, Label: "ACK", Doc: "regeneration: the successor received an ELECTION or ELECTED"},
			{Name: MsgHello, Label: "HELLO", Doc: "regeneration: a recovered process asks to be taken back into the ring"},
		},
		Costs: []sim.Cost{
			{Name: "messages per CS entry",
				Notes: []sim.NoteFormula{
					{In: []string{"001"}, Formula: "1 to ∞"},
					{In: []string{"002"}, Formula: "Da 1 a ∞ (se anello bidirezionale)"},
					{In: []string{"003"}, Formula: "1...∞"}},
				Formula: "1 to ∞ (the token keeps moving while nobody wants it)"},
			{Name: "messages to obtain the token",
				Notes: []sim.NoteFormula{
					{In: []string{"000", "004"}, Formula: "from 1 to n-1 messages to obtain a token"},
					{In: []string{"002"}, Formula: "Da 0 a N-1"}},
				Formula: "1 to N-1 (0 when it is already here)",
				Low:     func(int) float64 { return 1 }, High: func(n int) float64 { return float64(n - 1) }},
			{Name: "synchronisation delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "n/2 avg, n-1 worst case", Value: func(n int) float64 { return float64(n) / 2 }}},
				Formula: "1 to N-1 hops, N/2 on average"},
			{Name: "client delay",
				Notes: []sim.NoteFormula{
					{In: []string{"001"}, Formula: "0 to n - 1"},
					{In: []string{"003"}, Formula: "Entry: n/2 avg, n-1 worst case", Value: func(n int) float64 { return float64(n) / 2 }}},
				Formula: "0 to N-1 hops"},
			{Name: "exit delay",
				Notes:   []sim.NoteFormula{{In: []string{"003"}, Formula: "Exit: 1", Value: func(int) float64 { return 1 }}},
				Formula: "T (the token to the successor)", Value: func(int) float64 { return 1 }},
			{Name: "messages to regenerate the token (one caller)", Formula: "4N to 6N-2: N to 2N-1 ELECTION and N ELECTED, each acknowledged; more with several callers"},
		},
		Defaults:    sim.Defaults{Nodes: 5, Delay: [2]int{1, 3}, FIFO: false, CS: 2, Until: 500},
		Params:      paramList,
		Stage:       sim.Stage{Ring: true},
		ParseParams: ParseParams,
		New:         newNode,
	}
}

// Params are the algorithm's settings.
type Params struct {
	Holder     int `param:"holder"`     // id of the initial token holder
	Hop        int `param:"hop"`        // time an unwanted token stays before it is passed on (>= 1)
	Regenerate int `param:"regenerate"` // lost time-out; 0 turns regeneration off
	AckTimeout int `param:"ackTimeout"` // how long a sender waits for an ACK; 0 derives 2*max delay + 1
}

// holderParam gives the token to the first id in ring order by default.
var holderParam = sim.Param{Name: "holder", Kind: sim.ParamNode, Default: sim.FirstID,
	Doc: "the process that starts with the token"}

// paramList: by default a hop of 1 and no regeneration (the notes' plain algorithm).
var paramList = []sim.Param{
	holderParam,
	// 0 would let the token spin round the ring without time passing.
	{Name: "hop", Kind: sim.ParamInt, Min: 1, Default: "1",
		Doc: "time an unwanted token stays before it is passed on"},
	{Name: "regenerate", Kind: sim.ParamInt, Min: 0, Zero: "off", Default: "0",
		Doc: "no token seen for this long calls an election that regenerates it"},
	{Name: "ackTimeout", Kind: sim.ParamInt, Min: 1,
		Doc: "how long an election message waits for its ACK before the successor is skipped; left out, 2 × the largest delay + 1"},
}

// DefaultParams are the settings of a scenario that gives none.
func DefaultParams(ids []int) Params {
	return Params{Holder: params.DefaultID(holderParam, ids), Hop: 1}
}

// ParseParams decodes {"holder": id, "hop": t, "regenerate": t, "ackTimeout": t}; nil,
// empty or null gives the defaults. Errors name the field.
var ParseParams = params.Parser(paramList, DefaultParams)
