package pages

import (
	"fmt"
	"strconv"

	"github.com/a-h/templ"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/algorithms/starlarkalg"
	"github.com/teach-dist/playground/runtime/sim"
	"github.com/teach-dist/playground/scenarios"
)

// View models, shaped like the screen: the templates only lay them out.

type Catalogue struct {
	Families []family
}

type family struct {
	ID      string
	Name    string
	Blurb   string
	Algos   []algoCard
	Curated int
	// NewURL opens an algorithm written from scratch: the family's skeleton on the
	// page of its first algorithm.
	NewURL templ.SafeURL
}

type algoCard struct {
	Slug      string
	Title     string
	Summary   string
	Costs     []sim.Cost
	Scenarios []ScenarioLink
}

type ScenarioLink struct {
	Name  string
	Title string
}

// familyName is how pages name a family of algorithms.
type familyName struct {
	family sim.Family
	name   string
	blurb  string
}

// familyNames are the families in the order pages list them.
func familyNames() []familyName {
	return []familyName{
		{sim.Mutex, "Mutual exclusion", "How processes that share nothing but a network take turns in a critical section."},
		{sim.Election, "Leader election", "How processes agree on one coordinator, and what happens when it crashes."},
	}
}

func BuildCatalogue() Catalogue {
	var c Catalogue
	for _, f := range familyNames() {
		fam := family{ID: string(f.family), Name: f.name, Blurb: f.blurb}
		for _, spec := range algorithms.All() {
			if spec.Family != f.family {
				continue
			}
			fam.Algos = append(fam.Algos, algoCard{
				Slug: spec.Slug, Title: spec.Title, Summary: spec.Summary, Costs: spec.Costs,
				Scenarios: CuratedFor(spec.Slug),
			})
		}
		if len(fam.Algos) > 0 {
			fam.NewURL = templ.URL("/play/" + fam.Algos[0].Slug + "?new=1&fresh=1")
			c.Families = append(c.Families, fam)
		}
	}
	return c
}

func CuratedFor(slug string) []ScenarioLink {
	var out []ScenarioLink
	for _, e := range scenarios.Curated() {
		if e.Scenario.Algorithm == slug {
			title := e.Scenario.Title
			if title == "" {
				title = e.Name
			}
			out = append(out, ScenarioLink{Name: e.Name, Title: title})
		}
	}
	return out
}

// The bounds of Run setup's number of processes: the scenario's own (sim.MinNodes,
// sim.MaxNodes), the same as a /play address's n.
var nodesMin, nodesMax = strconv.Itoa(sim.MinNodes), strconv.Itoa(sim.MaxNodes)

// freshURL is a link that opens a fresh run at path (the catalogue's, the scenario
// menu's): the server starts one whatever this browser had there, then sends it to
// path, where a reload resumes that run (web/play.go, ?fresh).
func freshURL(path string) templ.SafeURL { return templ.URL(path + "?fresh=1") }

type Play struct {
	Spec *sim.Spec
	// PageTitle is the title of the algorithm the page belongs to (Spec's slug's):
	// the heading comes back to it when a run of a source gives way to the Go one.
	PageTitle string
	Groups    []ruleGroup
	Messages  []messageKey
	Session   string
	WS        string
	// API is where the page's panels read the run (metrics, space-time diagram,
	// exports): /api/sessions/{id}, or /api/lectures/{code} for a lecture's follower.
	API       string
	Ring      bool
	Title     string // scenario title, for curated scenarios
	About     string
	Curated   []ScenarioLink
	Current   string // curated name, if any
	Data      clientSpec
	FamilyTag string
	// Params are Run setup's controls of the algorithm's params.
	Params []paramControl
	// OursKey, when some label of the algorithm is the project's own, explains the
	// "ours" mark of the pseudocode panel (docs/labels.md).
	OursKey string
	// Join, on a presenter's page, is where students join, as JSON
	// (lecturehttp.JoinInfo): the base of join links, and this machine's addresses
	// when the presenter's is a loopback one.
	Join string
	// Template is the Starlark source of the algorithm's template ("" when it has
	// none): what "Edit rules" starts from when the run carries no source of its own.
	Template string
	// Explore is the server's bounds of the Explore action (web.ExploreLimits).
	Explore Explore
}

// Explore is what the page says of the server's Explore bounds: the most processes
// its button takes (data-max-nodes, static/explore.js) and the budgets of one
// search, shown in the dialog before it starts.
type Explore struct {
	MaxNodes  int
	MaxStates int64
	MaxMemory int64 // bytes, all searches together
	Timeout   int   // seconds
}

// Budget is the dialog's sentence of the budgets; "" when the server gave none.
func (e Explore) Budget() string {
	if e.MaxStates == 0 {
		return ""
	}
	return fmt.Sprintf("The server's budget for one search: %s states, %d MiB of memory (shared by the searches running at once), %d s.",
		thousands(e.MaxStates), e.MaxMemory>>20, e.Timeout)
}

// thousands writes n with commas, as the page's figures are (toLocaleString("en")).
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

type ruleGroup struct {
	Name  string
	Rules []ruleView
}

type messageKey struct {
	Name  string
	Doc   string
	Class string
}

// clientSpec is what the browser needs of the algorithm, as JSON in the page.
// shownCosts is how many of an algorithm's costs its catalogue card shows at once;
// the others fold under "more costs".
const shownCosts = 3

type clientSpec struct {
	Slug     string          `json:"slug"`
	Title    string          `json:"title"`
	Family   string          `json:"family"`
	Ring     bool            `json:"ring"`
	Rules    []clientRule    `json:"rules"`
	Vars     []clientVar     `json:"vars"`
	Messages []clientMessage `json:"messages"`
	// Group and GroupLabel are Stage.Group and Stage.GroupLabel: the page shows a
	// process's group on hover and selection.
	Group      string `json:"group,omitempty"`
	GroupLabel string `json:"groupLabel,omitempty"`
	// GroupAbout is Stage.GroupAbout: the variable whose sentence the note adds.
	GroupAbout string `json:"groupAbout,omitempty"`
	// The other decorations of sim.Stage, each a variable the page reads from every
	// process at every step: a role mark, tree edges, a pointer arrow.
	Mark         string `json:"mark,omitempty"`
	MarkLabel    string `json:"markLabel,omitempty"`
	Edges        string `json:"edges,omitempty"`
	EdgesLabel   string `json:"edgesLabel,omitempty"`
	Pointer      string `json:"pointer,omitempty"`
	PointerLabel string `json:"pointerLabel,omitempty"`
	// Token: the processes say who holds a token (sim.Spec.HasToken).
	Token bool `json:"token,omitempty"`
}

type clientRule struct {
	Label string            `json:"label"`
	Says  string            `json:"says"`
	Why   map[string]string `json:"why,omitempty"`
}

type clientVar struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
}

type clientMessage struct {
	Name  string `json:"name"`
	Label string `json:"label"` // the short label the stage draws (sim.MessageType.Label)
	Doc   string `json:"doc"`
}

// messageClasses is the number of message colours in the palette (static/app.css).
const messageClasses = 7

func BuildPlay(spec *sim.Spec, session string) Play {
	p := Play{Spec: spec, Session: session, WS: "/ws/" + session, Ring: spec.Stage.Ring,
		Curated: CuratedFor(spec.Slug), FamilyTag: familyTag(spec.Family), PageTitle: spec.Title}
	if page, ok := algorithms.Lookup(spec.Slug); ok {
		p.PageTitle = page.Title // the page's own algorithm, when a run goes back to it
	}
	if session != "" {
		p.API = "/api/sessions/" + session
	}
	p.Params = paramControls(spec.Params)
	p.Template, _ = starlarkalg.Template(spec.Slug)
	legend := NotesLegend()
	for _, r := range spec.Rules {
		rv := newRuleView(r, legend)
		if rv.Ours {
			p.OursKey = "Labels marked ours (TAG-n, with a hyphen) are this playground's own, not the notes'. " + legend
		}
		if n := len(p.Groups); n > 0 && p.Groups[n-1].Name == r.Group {
			p.Groups[n-1].Rules = append(p.Groups[n-1].Rules, rv)
		} else {
			p.Groups = append(p.Groups, ruleGroup{Name: r.Group, Rules: []ruleView{rv}})
		}
	}
	st := spec.Stage
	p.Data = clientSpec{Slug: spec.Slug, Title: spec.Title, Family: string(spec.Family), Ring: p.Ring,
		Group: st.Group, GroupLabel: st.GroupLabel, GroupAbout: st.GroupAbout, Mark: st.Mark, MarkLabel: st.MarkLabel,
		Edges: st.Edges, EdgesLabel: st.EdgesLabel, Pointer: st.Pointer, PointerLabel: st.PointerLabel,
		Token: spec.HasToken()}
	for _, r := range spec.Rules {
		p.Data.Rules = append(p.Data.Rules, clientRule{Label: r.Label, Says: r.Says, Why: r.Why})
	}
	for _, v := range spec.Vars {
		p.Data.Vars = append(p.Data.Vars, clientVar{Name: v.Name, Doc: v.Doc})
	}
	for i, m := range spec.Messages {
		p.Data.Messages = append(p.Data.Messages, clientMessage{Name: m.Name, Label: m.Label, Doc: m.Doc})
		p.Messages = append(p.Messages, messageKey{Name: m.Name, Doc: m.Doc, Class: messageClass(i)})
	}
	return p
}

func messageClass(i int) string { return "m" + strconv.Itoa(i%messageClasses) }

func familyTag(f sim.Family) string {
	for _, x := range familyNames() {
		if x.family == f {
			return x.name
		}
	}
	return string(f)
}

// LinkErrorView is the page for a link that cannot open: why, and the closest runs.
type LinkErrorView struct {
	Heading string
	Reason  string
	Slug    string // the algorithm to offer at /play/{slug}, if this server has it
	Title   string
	Cat     Catalogue
}

// JoinView is the join form of lecture mode, with what was wrong with a code typed.
type JoinView struct {
	Heading string
	Problem string
	Code    string
}

// EndedView is the page of a lecture that has ended.
type EndedView struct {
	Display string
	Reason  string
	Link    string
}
