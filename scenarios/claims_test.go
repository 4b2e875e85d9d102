package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/teach-dist/playground/runtime/sim"
)

// texts is a curated scenario's about and captions, as the page shows them.
func texts(t *testing.T, name string) (about string, captions map[int64]string) {
	t.Helper()
	sc, ok := Lookup(name)
	if !ok {
		t.Fatalf("no curated scenario %q", name)
	}
	captions = map[int64]string{}
	for _, c := range sc.Captions {
		captions[c.Seq] = c.Text
	}
	return sc.About, captions
}

// captionAt is the caption on screen when the run shows the event of seq: the latest
// one at or before it.
func captionAt(captions map[int64]string, seq int64) string {
	best, text := int64(-1), ""
	for s, c := range captions {
		if s <= seq && s > best {
			best, text = s, c
		}
	}
	return text
}

// The curated texts say things of their runs that can be computed from the runs:
// each such claim is checked here, so a text that stops being true (or never was)
// fails. The notes' figures a text names are checked against the notes' own words
// (TestFidelityQuotesAreTheNotes keeps the docs; these keep the page).
func TestCuratedClaimsHoldInTheirRuns(t *testing.T) {
	t.Run("ring-started-by-17", func(t *testing.T) {
		r := runCurated(t, "ring-started-by-17")
		about, captions := texts(t, r.name)
		if n := r.count(sim.EvSend, "ELECTION") + r.count(sim.EvSend, "ELECTED"); n != 22 || !strings.Contains(about, "22 messages") {
			t.Errorf("%d messages; the about says 22", n)
		}
		// The notes give no best case for the ring: 2N is the project's figure.
		if strings.Contains(about, "notes' best case") {
			t.Errorf("the about gives the notes a best case: %q", about)
		}
		// By CR-3 (and 004: "when forwarding an election message, a process marks itself
		// participant") everyone who forwarded 24 is a participant by the caption that
		// says so.
		seq := r.seqOf(t, "15 forwards 24", func(ev *sim.Event) bool {
			return ev.Type == sim.EvSend && r.id(ev.Node) == 15 && ev.Msg.Arg == 24
		})
		text := captionAt(captions, seq)
		var participants []int
		for _, id := range r.ids {
			var st struct{ Participant bool }
			r.state(t, seq, id, &st)
			if st.Participant {
				participants = append(participants, id)
				if !strings.Contains(text, fmt.Sprint(id)) {
					t.Errorf("P%d is a participant at seq %d, the caption does not say so: %q", id, seq, text)
				}
			}
		}
		wantEqual(t, "participants when 15 forwards 24", participants, []int{17, 4, 24, 9, 1, 15})
	})
	t.Run("lamport-normal-run", func(t *testing.T) {
		r := runCurated(t, "lamport-normal-run")
		about, captions := texts(t, r.name)
		// Who was still waiting when P0 asked.
		waiting := map[int]bool{}
		var others []int
		var entered int64
		for _, ev := range r.events {
			switch {
			case ev.Type == sim.EvRequest && r.id(ev.Node) == 0:
				for id, w := range waiting {
					if w {
						others = append(others, id)
					}
				}
			case ev.Type == sim.EvRequest:
				waiting[r.id(ev.Node)] = true
			case ev.Type == sim.EvEnter:
				waiting[r.id(ev.Node)] = false
				if r.id(ev.Node) == 0 {
					entered = ev.Seq
				}
			}
		}
		wantEqual(t, "waiting when P0 asks", others, []int{3})
		for where, text := range map[string]string{"about": about, "caption at P0's entry": captionAt(captions, entered)} {
			if strings.Contains(text, "alone") {
				t.Errorf("%s says P0 asked alone, but P3 was waiting: %q", where, text)
			}
		}
		if c := captionAt(captions, entered); !strings.Contains(c, "P3") {
			t.Errorf("the caption at P0's entry does not say whom it queued behind: %q", c)
		}
	})
	t.Run("bully-best-case", func(t *testing.T) {
		r := runCurated(t, "bully-best-case")
		about, captions := texts(t, r.name)
		n := len(r.ids)
		coord, all := r.count(sim.EvSend, "COORDINATOR"), r.totals(t).Messages
		wantEqual(t, "COORDINATOR messages: the notes' n-2", coord, n-2)
		wantEqual(t, "messages in all", all, n-1)
		for where, text := range map[string]string{"about": about, "last caption": captionAt(captions, 1<<40)} {
			// Seven messages are not the notes' best case (n-2 = 6): no text may call
			// them the cheapest election.
			if strings.Contains(text, "cheapest") {
				t.Errorf("%s calls %d messages the cheapest election, the notes' best case is n-2 = %d: %q", where, all, n-2, text)
			}
			if !strings.Contains(text, "n-2") && !strings.Contains(text, "N-2") {
				t.Errorf("%s does not give the notes' n-2: %q", where, text)
			}
		}
	})
	t.Run("ricart-agrawala-tanenbaum", func(t *testing.T) {
		r := runCurated(t, "ricart-agrawala-tanenbaum")
		about, captions := texts(t, r.name)
		ts := map[int]int{}
		for _, ev := range r.events {
			if ev.Type == sim.EvSend && ev.Msg.Type == "REQUEST" && ev.T >= 20 {
				ts[r.id(ev.Msg.From)] = ev.Msg.TS
			}
		}
		wantEqual(t, "the timestamps of P0 and P2", ts, map[int]int{0: 4, 2: 6})
		// The notes' text gives no timestamps (001's figure is not in it): 4 and 6 are
		// the run's, and no text may say they are the notes'.
		for _, text := range append([]string{about}, captionAt(captions, 1<<40)) {
			if strings.Contains(text, "notes' figure") {
				t.Errorf("a text gives the timestamps to the notes' figure: %q", text)
			}
		}
	})
}

// bully-async-two-leaders shows two leaders that last because a COORDINATOR goes to
// the lower ids only (the project's RE1; the notes' RE1 tells all processes): no
// COORDINATOR ever reaches a higher id, and the texts say so.
func TestBullyTwoLeadersSaysWhyTheSplitLasts(t *testing.T) {
	r := runCurated(t, "bully-async-two-leaders")
	about, captions := texts(t, r.name)
	up := 0
	for _, ev := range r.events {
		if ev.Type == sim.EvSend && ev.Msg.Type == "COORDINATOR" && r.id(ev.Msg.To) > r.id(ev.Msg.From) {
			up++
		}
	}
	if up != 0 {
		t.Fatalf("%d COORDINATOR messages went to a higher id", up)
	}
	if len(r.violations()) == 0 {
		t.Error("no disagreement reported")
	}
	for where, text := range map[string]string{"about": about, "last caption": captionAt(captions, 1<<40)} {
		if !strings.Contains(text, "lower ids only") {
			t.Errorf("the %s does not say a COORDINATOR goes to the lower ids only: %q", where, text)
		}
	}
	if !strings.Contains(about, "all processes") {
		t.Errorf("the about does not say what the notes' RE1 does: %q", about)
	}
}

// 003's heartbeat: "declared dead if not observed in last T+D seconds"; "D too large ⇒
// Incomplete: dead reported alive (zombies!)". The same crash of the coordinator, with
// the watchers' D the network's largest delay (3) and then far too large (60): the first
// suspicion comes T+D after the last beat heard, and until then everyone follows the
// dead coordinator.
func TestHeartbeatDTooLargeReportsTheDeadAlive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		silent int // T+D
	}{
		{"bully-heartbeat-crash-then-election", 4 + 3},
		{"bully-heartbeat-zombie", 4 + 60},
	} {
		r := runCurated(t, tc.name)
		crash := r.seqOf(t, "the coordinator crashes", func(ev *sim.Event) bool { return ev.Type == sim.EvCrash })
		suspect := r.seqOf(t, "a watcher suspects", func(ev *sim.Event) bool { return ev.Type == sim.EvRule && ev.Rule == "FD-3" })
		var crashT, suspectT, lastBeat int
		for _, ev := range r.events {
			switch {
			case ev.Seq == crash:
				crashT = ev.T
			case ev.Seq == suspect:
				suspectT = ev.T
			case ev.Type == sim.EvSend && ev.Msg.Type == "HEARTBEAT" && ev.Seq < crash:
				lastBeat = ev.T
			}
		}
		// The beat sent last reaches its watcher within the largest delay; the watcher
		// that suspects first heard it at least a delay after it was sent.
		if wait := suspectT - lastBeat; wait < tc.silent || wait > tc.silent+3 {
			t.Errorf("%s: suspected %d after the last beat was sent, want T+D = %d (plus its delay)", tc.name, wait, tc.silent)
		}
		zombie := false
		for _, v := range r.violations() {
			zombie = zombie || strings.HasPrefix(v, "leader: all take P5 as leader, but P5 is crashed")
		}
		if !zombie {
			t.Errorf("%s: nobody was reported following the dead P5", tc.name)
		}
		t.Logf("%s: dead from %d, suspected at %d", tc.name, crashT, suspectT)
	}
}

// 002 on the ring election: "If multiple processes start an election at the same
// time, a single winner is eventually announced"; "in case of network partition?
// Multiple new leaders, one per partition".
func TestRingElectionsConcurrentStartersAndPartitions(t *testing.T) {
	finalLeaders := func(r *notesRun) map[int]int {
		out := map[int]int{}
		for _, ev := range r.events {
			if ev.Type == sim.EvLeader {
				out[r.id(ev.Node)] = ev.Leader
			}
		}
		return out
	}
	rules := func(r *notesRun, label string) []int {
		var who []int
		for _, ev := range r.events {
			if ev.Type == sim.EvRule && ev.Rule == label {
				who = append(who, r.id(ev.Node))
			}
		}
		return who
	}
	t.Run("ring-concurrent-starters", func(t *testing.T) {
		r := runCurated(t, "ring-concurrent-starters")
		wantEqual(t, "who started an election", rules(r, "CR-2"), []int{0, 2, 3})
		wantEqual(t, "who won (CR-6)", rules(r, "CR-6"), []int{4})
		wantEqual(t, "ELECTED messages: one round", r.count(sim.EvSend, "ELECTED"), 5)
		if len(rules(r, "CR-5")) < 2 {
			t.Errorf("swallowed %v: the smaller elections did not die out", rules(r, "CR-5"))
		}
		wantEqual(t, "final leaders", finalLeaders(r), map[int]int{0: 4, 1: 4, 2: 4, 3: 4, 4: 4, 5: 5})
		wantEqual(t, "violations", r.violations(), []string{})
	})
	t.Run("ring-partition", func(t *testing.T) {
		r := runCurated(t, "ring-partition")
		wantEqual(t, "who won (CR-6)", rules(r, "CR-6"), []int{5, 2})
		wantEqual(t, "final leaders", finalLeaders(r), map[int]int{0: 2, 1: 2, 2: 2, 3: 5, 4: 5, 5: 5})
		wantEqual(t, "violations (one leader per connected group)", r.violations(), []string{})
	})
}

// 003: the leader is "p_j ... largest non-crashed process". ring-winner-crashes: the
// would-be winner P4 crashes while its ELECTED goes round; P0 finds it crashed and
// starts a new election (CR-12), and everyone ends following P3.
func TestRingWinnerCrashesWhileAnnounced(t *testing.T) {
	r := runCurated(t, "ring-winner-crashes")
	final := map[int]int{}
	crashed := map[int]bool{}
	for _, ev := range r.events {
		switch ev.Type {
		case sim.EvLeader:
			final[r.id(ev.Node)] = ev.Leader
		case sim.EvCrash:
			crashed[r.id(ev.Node)] = true
		}
	}
	for id, leader := range final {
		if !crashed[id] && leader != 3 {
			t.Errorf("P%d ends following P%d, want P3", id, leader)
		}
	}
	restarted := r.seqOf(t, "P0 finds the announced leader crashed", func(ev *sim.Event) bool {
		return ev.Type == sim.EvRule && ev.Rule == "CR-12" && r.id(ev.Node) == 0
	})
	crash := r.seqOf(t, "P4 crashes", func(ev *sim.Event) bool { return ev.Type == sim.EvCrash && r.id(ev.Node) == 4 })
	if restarted < crash {
		t.Errorf("CR-12 at %d before P4's crash at %d", restarted, crash)
	}
	wantEqual(t, "violations", r.violations(), []string{})
}
