package pages

import "github.com/teach-dist/playground/runtime/sim"

// The play page's parts each take only what they show: these are the views of the
// parts that show more than one or two things, cut from Play.

// playHeader is the header of the play page: the algorithm the run is of, and the
// actions of its "more" menu.
type playHeader struct {
	Title     string // the run's algorithm's title
	PageTitle string // Play.PageTitle
	Own       bool   // written from scratch on this page, not one of the notes' algorithms
	Family    sim.Family
	FamilyTag string
	Menu      moreMenu
}

// moreMenu is the header's menu: the algorithm's curated scenarios, and what can be
// done with the run (a lecture, a link, exports, Explore).
type moreMenu struct {
	Slug    string
	Curated []ScenarioLink
	Current string // the curated scenario shown, if any
	// Session is the run's session ("" on a lecture follower's page, who may only read
	// the run at API).
	Session         string
	API             string
	ExploreMaxNodes int
}

func (p Play) header() playHeader {
	return playHeader{Title: p.Spec.Title, PageTitle: p.PageTitle, Own: p.Spec.Name != "", Family: p.Spec.Family, FamilyTag: p.FamilyTag,
		Menu: moreMenu{Slug: p.Spec.Slug, Curated: p.Curated, Current: p.Current, Session: p.Session, API: p.API, ExploreMaxNodes: p.Explore.MaxNodes}}
}

// stageLegend is the key under the stage: the algorithm's messages and the marks its
// processes may wear.
type stageLegend struct {
	Family   sim.Family
	Messages []messageKey
	Token    bool
	Ring     bool
	// The labels of the stage's decorations ("" when the algorithm has none).
	MarkLabel, EdgesLabel, PointerLabel, GroupLabel string
}

func (p Play) legend() stageLegend {
	d := p.Data
	return stageLegend{Family: p.Spec.Family, Messages: p.Messages, Token: d.Token, Ring: d.Ring,
		MarkLabel: d.MarkLabel, EdgesLabel: d.EdgesLabel, PointerLabel: d.PointerLabel, GroupLabel: d.GroupLabel}
}

// pseudocode is the pseudocode panel: the rules by group, the key of the labels that
// are the project's own, and whether the rules can be edited (the algorithm has a
// Starlark template).
type pseudocode struct {
	Groups   []ruleGroup
	OursKey  string
	Editable bool
}

func (p Play) pseudocode() pseudocode {
	return pseudocode{Groups: p.Groups, OursKey: p.OursKey, Editable: p.Template != ""}
}
