package scenarios

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/teach-dist/playground/algorithms"
	"github.com/teach-dist/playground/runtime/sim"
)

// LinkFormat is the newest share-link format this package writes. It reads formats
// 1..LinkFormat; a code from a newer playground gets a *LinkError saying so. Format 2
// adds the defaults epoch the link was made under (format 1 links are epoch 1).
// Format 3 is format 2 whose scenario carries a source (a student's rules in
// Starlark): only such links are written as format 3, so that a link without one
// stays what earlier builds read, and a build that cannot run sources says the link
// is newer instead of calling it altered.
const LinkFormat = 3

// linkFormatOf is the format a link is written in.
func linkFormatOf(sc *Scenario) int {
	if sc.Source != "" {
		return 3
	}
	return 2
}

// Limits of a link. A code is part of a URL, so it is small, but it decompresses:
// the caps keep a crafted code (a zip bomb, a million interventions) from costing
// more than an honest one.
const (
	MaxLinkCode          = 64 << 10 // characters of a code
	MaxLinkBytes         = MaxBytes // its JSON, decompressed
	MaxLinkInterventions = MaxEvents
)

// Link is a whole run as a URL can carry it: the scenario, every live intervention
// with the step it was made at, and the step to show. Node ids, not indexes.
type Link struct {
	Scenario      *Scenario
	Interventions []Intervention
	Step          int
}

// Intervention is a live action taken just before step Step (sim.Intervention in the
// scenario's vocabulary). Event.At is unused.
type Intervention struct {
	Step  int
	Event Event
}

// LinkErrorKind says why a code cannot be read.
type LinkErrorKind uint8

const (
	// LinkInvalid: the code was altered, or describes a run that cannot be.
	LinkInvalid LinkErrorKind = iota
	// LinkTruncated: the code is cut short (a partial copy).
	LinkTruncated
	// LinkNewer: the code was written by a newer playground in a format this one
	// cannot read.
	LinkNewer
)

// LinkError is a code that cannot be read, with a reason a person can act on.
type LinkError struct {
	Kind   LinkErrorKind
	Format int    // the code's format, when it could be read
	Slug   string // the algorithm named by the code, when it could be read (even if newer)
	Field  string // the culprit inside the code (e.g. "interventions[3].node"), if any
	Reason string
	Line   int // for scenario.source: the line in the source, if any
}

func (e *LinkError) Error() string {
	if e.Field == "" {
		return "link: " + e.Reason
	}
	return "link: " + e.Field + ": " + e.Reason
}

// Code layout: "v<format>.<algorithm slug>.<payload>". Every format keeps the first
// two parts, so that any version can say which format a code has and which
// algorithm it runs (to offer /play/{slug} when it cannot read the rest). Format 1's
// payload is base64url (no padding) of DEFLATE of the JSON of wireLink.
const codePrefix = "v"

// wireLink is the JSON of formats 1 and 2 (Defaults only in 2).
type wireLink struct {
	Scenario      *Scenario          `json:"scenario"`
	Interventions []wireIntervention `json:"interventions,omitempty"`
	Step          int                `json:"step"`
	// Defaults is the defaults epoch (sim.DefaultsEpoch) the link was made under: a
	// later playground pins what has changed since, so the link replays the same run.
	Defaults int `json:"defaults,omitempty"`
}

// wireIntervention is a scenario event with "step" instead of "at". Event is embedded
// so that fields added to events later flow into links without a change here; At
// shadows Event.At, which an intervention does not have.
type wireIntervention struct {
	Step int  `json:"step"`
	At   *int `json:"at,omitempty"`
	Event
}

// deflaters keeps compressors for reuse: one at the best level holds most of a
// megabyte of tables.
var deflaters = sync.Pool{New: func() any {
	zw, _ := flate.NewWriter(nil, flate.BestCompression) // the level is valid
	return zw
}}

// EncodeLink returns the link's code, URL-safe. The link must be valid.
func EncodeLink(l Link) (string, error) {
	if err := l.Validate(); err != nil {
		return "", err
	}
	w := wireLink{Scenario: l.Scenario, Step: l.Step, Defaults: sim.DefaultsEpoch}
	for _, iv := range l.Interventions {
		e := iv.Event
		e.At = 0
		w.Interventions = append(w.Interventions, wireIntervention{Step: iv.Step, Event: e})
	}
	data, err := json.Marshal(w)
	if err != nil {
		return "", &LinkError{Reason: err.Error()}
	}
	var buf bytes.Buffer
	zw := deflaters.Get().(*flate.Writer)
	zw.Reset(&buf)
	_, _ = zw.Write(data) // a bytes.Buffer does not fail
	_ = zw.Close()
	deflaters.Put(zw)
	return codePrefix + strconv.Itoa(linkFormatOf(l.Scenario)) + "." + l.Scenario.Algorithm + "." +
		base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// Path is the link's URL path, "/r/<code>", which the web playground serves.
func (l Link) Path() (string, error) {
	code, err := EncodeLink(l)
	if err != nil {
		return "", err
	}
	return "/r/" + code, nil
}

// DecodeLink reads a code. Every failure is a *LinkError that says what is wrong:
// a newer format, a code cut short, or one that was altered or names a run that
// cannot be.
func DecodeLink(code string) (Link, error) { return DecodeLinkCharged(code, nil) }

// DecodeLinkCharged is DecodeLink that asks charge before loading the link's source
// when it is not yet cached; charge's error is returned as it is.
func DecodeLinkCharged(code string, charge LoadCharge) (Link, error) {
	format, slug, payload, err := splitCode(code)
	if err != nil {
		return Link{}, err
	}
	bad := func(kind LinkErrorKind, format string, args ...any) error {
		return &LinkError{Kind: kind, Format: LinkFormat, Slug: slug, Reason: fmt.Sprintf(format, args...)}
	}
	if payload == "" {
		return Link{}, bad(LinkTruncated, "the link is cut short: copy it again whole")
	}
	if len(payload)%4 == 1 {
		// No base64 text has this length: the last character is part of a group the
		// copy lost.
		payload = payload[:len(payload)-1]
		if payload == "" {
			return Link{}, bad(LinkTruncated, "the link is cut short: copy it again whole")
		}
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Link{}, bad(LinkInvalid, "the link was altered: it has characters a link never has")
	}
	zr := flate.NewReader(bytes.NewReader(raw))
	data, err := io.ReadAll(io.LimitReader(zr, MaxLinkBytes+1))
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Link{}, bad(LinkTruncated, "the link is cut short: copy it again whole")
	case err != nil:
		return Link{}, bad(LinkInvalid, "the link was altered: its data does not unpack")
	case len(data) > MaxLinkBytes:
		return Link{}, bad(LinkInvalid, "the link unpacks to more than %d bytes", MaxLinkBytes)
	}
	var w wireLink
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		// The fields of a code are the encoder's, never a person's: any mistake in them
		// means the code was altered.
		le := &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug,
			Reason: "the link was altered: its data is not a run (" + strings.TrimPrefix(err.Error(), "json: ") + ")"}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			le.Field = te.Field
			le.Reason = "the link was altered: expected " + kindName(te.Type.String()) + ", got " + te.Value
		}
		return Link{}, le
	}
	if _, err := dec.Token(); err != io.EOF {
		return Link{}, bad(LinkInvalid, "the link was altered: unexpected data after the run")
	}
	if f := DuplicateKey(data); f != "" {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug, Field: f,
			Reason: "the link was altered: " + f + " is given twice"}
	}
	if len(w.Interventions) > MaxLinkInterventions {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug, Field: "interventions",
			Reason: fmt.Sprintf("%d interventions is more than the limit of %d", len(w.Interventions), MaxLinkInterventions)}
	}
	if w.Scenario == nil {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug, Field: "scenario", Reason: "missing"}
	}
	if w.Scenario.Source != "" && format < 3 {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: format, Slug: slug, Field: "scenario.source",
			Reason: fmt.Sprintf("the link was altered: format %d carries no source", format)}
	}
	epoch, lerr := linkEpoch(format, w.Defaults)
	if lerr != nil {
		lerr.Slug = slug
		return Link{}, lerr
	}
	if w.Scenario.Algorithm != slug {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug, Field: "scenario.algorithm",
			Reason: fmt.Sprintf("%q does not match the link's %q: the link was altered", w.Scenario.Algorithm, slug)}
	}
	l := Link{Scenario: w.Scenario, Step: w.Step}
	for k, iv := range w.Interventions {
		if iv.At != nil {
			return Link{}, &LinkError{Kind: LinkInvalid, Format: LinkFormat, Slug: slug,
				Field: fmt.Sprintf("interventions[%d].at", k), Reason: "an intervention has a step, not a time"}
		}
		l.Interventions = append(l.Interventions, Intervention{Step: iv.Step, Event: iv.Event})
	}
	if err := l.Scenario.charge(charge); err != nil { // before anything loads the source
		return Link{}, err
	}
	if err := l.Scenario.pinDefaults(epoch); err != nil {
		return Link{}, &LinkError{Kind: LinkInvalid, Format: format, Slug: slug, Field: "scenario.params", Reason: err.Error()}
	}
	// Pinned, the scenario says explicitly what it left to defaults since changed: it is
	// a document of today's version, and read again (a run's scenario document, parsed
	// for its link or the explorer) it must not be taken for a version 1 file.
	l.Scenario.Version = Version
	l.normalize()
	if err := l.Validate(); err != nil {
		var le *LinkError
		if errors.As(err, &le) {
			le.Format, le.Slug = LinkFormat, slug
		}
		return Link{}, err
	}
	return l, nil
}

// splitCode reads "v<format>.<slug>.<payload>" and rejects formats it cannot read,
// naming the slug when it can.
func splitCode(code string) (format int, slug, payload string, err error) {
	cut := &LinkError{Kind: LinkTruncated, Reason: "the link is cut short: copy it again whole"}
	altered := &LinkError{Kind: LinkInvalid, Reason: "this is not a playground link: it should start with v" +
		strconv.Itoa(LinkFormat) + ". and the algorithm"}
	if len(code) > MaxLinkCode {
		return 0, "", "", &LinkError{Kind: LinkInvalid, Reason: fmt.Sprintf("the link is longer than %d characters", MaxLinkCode)}
	}
	if code == "" || (len(code) <= len(codePrefix) && strings.HasPrefix(codePrefix, code)) {
		return 0, "", "", cut
	}
	if !strings.HasPrefix(code, codePrefix) {
		return 0, "", "", altered
	}
	rest := code[len(codePrefix):]
	num, rest, found := strings.Cut(rest, ".")
	format, convErr := strconv.Atoi(num)
	if convErr != nil || format < 1 || num != strconv.Itoa(format) {
		if !found && isDigits(num) {
			return 0, "", "", cut
		}
		return 0, "", "", altered
	}
	if !found {
		return format, "", "", cut
	}
	slug, payload, found = strings.Cut(rest, ".")
	if !validSlug(slug) {
		if !found && isSlugPrefix(slug) {
			return format, "", "", cut
		}
		return format, "", "", altered
	}
	if format > LinkFormat {
		return format, slug, "", &LinkError{Kind: LinkNewer, Format: format, Slug: slug,
			Reason: fmt.Sprintf("this link was made by a newer version of the playground (format %d); this server reads format %d", format, LinkFormat)}
	}
	if !found {
		if _, known := algorithms.Lookup(slug); known || isSlugPrefix(slug) {
			return format, slug, "", cut
		}
	}
	if _, known := algorithms.Lookup(slug); !known {
		return format, "", "", &LinkError{Kind: LinkInvalid, Format: format, Field: "algorithm",
			Reason: fmt.Sprintf("%q is unknown (allowed: %s)", slug, strings.Join(algorithms.Slugs(), ", "))}
	}
	if !found {
		return format, slug, "", cut
	}
	return format, slug, payload, nil
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// validSlug is what a slug may look like in any format: lower-case words and hyphens.
func validSlug(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

func isSlugPrefix(s string) bool {
	for _, slug := range algorithms.Slugs() {
		if strings.HasPrefix(slug, s) {
			return true
		}
	}
	return false
}

// normalize gives a decoded link the one form encoding it again gives back, so that
// decode(encode(decode(code))) == decode(code): empty lists become nil, params are
// compacted.
func (l *Link) normalize() {
	s := l.Scenario
	if len(s.Events) == 0 {
		s.Events = nil
	}
	if len(s.Captions) == 0 {
		s.Captions = nil
	}
	if len(s.Params) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, s.Params) == nil {
			s.Params = buf.Bytes()
		}
	}
	if len(l.Interventions) == 0 {
		l.Interventions = nil
	}
}

// Validate checks the scenario, the step and every intervention, with errors that
// name the field inside the link (e.g. "interventions[3].node").
func (l Link) Validate() error {
	if l.Scenario == nil {
		return &LinkError{Field: "scenario", Reason: "missing"}
	}
	if err := l.Scenario.Validate(); err != nil {
		le := &LinkError{Field: "scenario", Reason: err.Error()}
		var se *Error
		if errors.As(err, &se) {
			le.Reason, le.Line = se.Reason, se.Line
			if se.Field != "" {
				le.Field = "scenario." + se.Field
			}
		}
		return le
	}
	if l.Step < 0 || l.Step > sim.MaxTime {
		return &LinkError{Field: "step", Reason: fmt.Sprintf("%d is out of range (0 to %d)", l.Step, sim.MaxTime)}
	}
	if len(l.Interventions) > MaxLinkInterventions {
		return &LinkError{Field: "interventions", Reason: fmt.Sprintf("%d interventions is more than the limit of %d", len(l.Interventions), MaxLinkInterventions)}
	}
	_, err := l.interventions()
	return err
}

// interventions converts the link's interventions to the kernel's (ids to indexes),
// checking each with the scenario's own event rules.
func (l Link) interventions() ([]sim.Intervention, error) {
	spec := l.Scenario.Spec()
	ids := l.Scenario.ids(spec)
	var out []sim.Intervention
	for k, iv := range l.Interventions {
		f := fmt.Sprintf("interventions[%d]", k)
		if iv.Step < 0 || iv.Step > sim.MaxTime {
			return nil, &LinkError{Field: f + ".step", Reason: fmt.Sprintf("%d is out of range (0 to %d)", iv.Step, sim.MaxTime)}
		}
		if k > 0 && iv.Step < l.Interventions[k-1].Step {
			return nil, &LinkError{Field: f + ".step", Reason: fmt.Sprintf("%d is before the previous intervention's step %d", iv.Step, l.Interventions[k-1].Step)}
		}
		a, err := iv.Event.Action(spec, ids)
		if err != nil {
			se := eventErr(f, err)
			return nil, &LinkError{Field: se.Field, Reason: se.Reason}
		}
		out = append(out, sim.Intervention{Step: iv.Step, Action: a})
	}
	return out, nil
}

// Run is the link as the kernel takes it: the scenario's configuration and the
// interventions, ready for sim.Replay(cfg, ivs, l.Step, sink).
func (l Link) Run() (sim.Config, []sim.Intervention, error) {
	if err := l.Validate(); err != nil {
		return sim.Config{}, nil, err
	}
	cfg, err := l.Scenario.Config()
	if err != nil {
		return sim.Config{}, nil, err
	}
	ivs, err := l.interventions()
	if err != nil {
		return sim.Config{}, nil, err
	}
	return cfg, ivs, nil
}

// LinkFromRun makes the link of a live run: the scenario document it was built from,
// its configuration (for the ids), the interventions recorded so far and the step
// shown. It fails on an intervention a link cannot express.
func LinkFromRun(scenarioJSON []byte, cfg sim.Config, ivs []sim.Intervention, step int) (Link, error) {
	sc, err := Parse(scenarioJSON)
	if err != nil {
		return Link{}, &LinkError{Field: "scenario", Reason: err.Error()}
	}
	ids := sc.ids(sc.Spec())
	if cfg.IDs != nil && !slices.Equal(cfg.IDs, ids) {
		return Link{}, &LinkError{Field: "scenario.ids", Reason: "the run's ids differ from its scenario's"}
	}
	l := Link{Scenario: sc, Step: step}
	for k, iv := range ivs {
		e, err := sim.ActionJSONOf(&iv.Action, ids)
		if err != nil {
			return Link{}, &LinkError{Field: fmt.Sprintf("interventions[%d]", k), Reason: err.Error()}
		}
		e.At = 0 // an intervention has a step, not a time
		l.Interventions = append(l.Interventions, Intervention{Step: iv.Step, Event: e})
	}
	if err := l.Validate(); err != nil {
		return Link{}, err
	}
	return l, nil
}

// linkEpoch is the defaults epoch a decoded link was made under: 1 for format 1, which
// has none, and the recorded one for format 2.
func linkEpoch(format, recorded int) (int, *LinkError) {
	switch {
	case format == 1 && recorded != 0:
		return 0, &LinkError{Kind: LinkInvalid, Format: format, Field: "defaults",
			Reason: "the link was altered: format 1 has no defaults epoch"}
	case format == 1:
		return 1, nil
	case recorded < 1:
		return 0, &LinkError{Kind: LinkInvalid, Format: format, Field: "defaults",
			Reason: "the link was altered: it does not say which defaults it was made with"}
	case recorded > sim.DefaultsEpoch:
		return 0, &LinkError{Kind: LinkNewer, Format: format, Field: "defaults",
			Reason: fmt.Sprintf("this link was made by a newer version of the playground (defaults %d); this server knows defaults up to %d", recorded, sim.DefaultsEpoch)}
	}
	return recorded, nil
}
