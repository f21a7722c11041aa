package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/krtt-dev/krtt/engine"
)

// TimeFormat is how reports print times (UTC, to the second).
const TimeFormat = "2006-01-02T15:04:05Z"

// JSON writes the report as indented JSON.
func (r *Report) JSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Text writes the report in plain words, in a stable order.
func (r *Report) Text(w io.Writer) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	kind := r.Kind
	if kind == "" {
		kind = "Machine"
	}
	p("%s %s/%s\n", kind, r.Namespace, r.Name)
	if !r.Found {
		found := strings.ToLower(kind[:1]) + kind[1:] + "Found"
		p("  not found (the tables' %s=false row decides)\n", found)
	}
	p("  state:  %s", r.State)
	if r.StateDescription != "" {
		p(" — %s", r.StateDescription)
	}
	p("\n")
	if r.StateNote != "" {
		p("          (%s)\n", r.StateNote)
	}
	p("  phase:  %s\n", r.Phase)
	if ns := r.NodeSide; ns != nil {
		p("  node side: %s", ns.State)
		if ns.Message != "" {
			p(" — %s", ns.Message)
		}
		p("\n")
	}
	if r.DeletionRequested != nil {
		p("  deletion requested: %s\n", r.at(*r.DeletionRequested))
	}
	if r.ObserveError != "" {
		p("  observing failed: %s\n", r.ObserveError)
	}
	if rp := r.Replicas; rp != nil {
		p("  replicas: %d desired, %d in the set (%d working, %d failed, %d being deleted); %d Ready, %d available, %d up to date\n",
			rp.Desired, rp.Total, rp.Working, rp.Failed, rp.Deleting, rp.Ready, rp.Available, rp.UpToDate)
		p("  limits:   maxUnhealthy %d, maxInFlight %d, burst %d per reconcile\n",
			rp.MaxUnhealthy, rp.MaxInFlight, rp.Burst)
		if rp.Orphans > 0 || rp.Strays > 0 {
			p("  claims:   %d orphan(s) to adopt, %d Machine(s) to release\n", rp.Orphans, rp.Strays)
		}
		for _, t := range rp.MissingTemplates {
			p("  missing:  %s\n", t)
		}
	}
	if r.ImpossibleFacts != "" {
		p("  the facts fall into a combination the tables declare impossible: %s\n", r.ImpossibleFacts)
	}

	p("\n")
	if d := r.Fires; d != nil {
		p("Fires now: table %s row %s (%s:%d)\n", d.Table, d.Row, d.File, d.Line)
		for _, l := range d.Columns.Lines() {
			p("  %s\n", l)
		}
		p("  when:                  %s\n", matchesText(d.When))
		if len(d.Do) > 0 {
			p("  do:                    %s (explain runs no actions)\n", strings.Join(d.Do, ", "))
		} else {
			p("  do:                    nothing\n")
		}
		for _, o := range d.Outcomes {
			res := o.Summary(r.State)
			p("  %s\n", res.Line())
			for _, l := range res.Details() {
				p("      %s\n", l)
			}
		}
	} else {
		p("No row fires: %s\n", r.DecideError)
	}

	if wt := r.WaitingOn; wt != nil {
		p("\nWaiting on: %s — %s\n", wt.Step, wt.On)
		switch {
		case wt.Since != nil:
			p("  since:   %s", r.at(*wt.Since))
			if wt.StartField != "" {
				p(" (%s)", wt.StartField)
			}
			p("\n")
		case wt.StartField != "":
			p("  since:   not recorded yet (%s is empty)\n", wt.StartField)
		}
		p("  timeout: %s\n", wt.Timeout)
		if wt.CountsFrom != nil {
			p("  counted: from %s, when the workload cluster came back (Node-side timeouts restart then)\n", r.at(*wt.CountsFrom))
		}
		if wt.EndsAt != nil {
			if wt.Overdue {
				p("  ends:    %s (passed %s ago; the error table moves on)\n", wt.EndsAt.Format(TimeFormat), strings.TrimPrefix(wt.EndsIn, "-"))
			} else {
				p("  ends:    %s (in %s)\n", wt.EndsAt.Format(TimeFormat), wt.EndsIn)
			}
		}
		if f := wt.Forced; f != nil {
			switch {
			case f.Since == nil:
				p("  forced:  when the Node has been Ready=False/Unknown or ReadonlyFilesystem=True for %s (row %s); it is neither now\n", f.After, f.Row)
			case f.Overdue:
				p("  forced:  the Node has been %s since %s, more than %s: row %s forces the deletion (since %s)\n",
					f.Condition, r.at(*f.Since), f.After, f.Row, f.EndsAt.Format(TimeFormat))
			default:
				p("  forced:  the Node has been %s since %s; after %s, at %s (in %s), row %s forces the deletion\n",
					f.Condition, r.at(*f.Since), f.After, f.EndsAt.Format(TimeFormat), f.EndsIn, f.Row)
			}
			if f.CountsFrom != nil {
				p("           the %s count from %s, when the workload cluster came back\n", f.After, r.at(*f.CountsFrom))
			}
		}
	}
	if len(r.Hooks) > 0 {
		p("\nHooks:\n")
		for _, h := range r.Hooks {
			p("  %s hook %s (%s", h.Point, h.Name, h.Annotation)
			if h.Owner != "" {
				p("=%s", h.Owner)
			}
			p(")\n")
		}
	}
	if c := r.Deleting; c != nil {
		p("\nDeleting condition: %s reason %s", c.Status, c.Reason)
		if c.Since != nil {
			p(" since %s", r.at(*c.Since))
		}
		p("\n")
		if c.Message != "" {
			p("  %s\n", indented(c.Message))
		}
	}
	if lt := r.LastTransition; lt != nil {
		if len(lt.Via) > 0 {
			p("\nThe reconcile that made the last transition passed through (rows whose actions left the observation true, decided again at once):\n")
			for _, v := range lt.Via {
				p("  table %s row %s, %s -> %s", v.Table, v.Row, v.From, v.To)
				if v.Action != "" {
					p(", %s", v.Action)
				}
				if v.Message != "" {
					p(": %s", oneLine(v.Message))
				}
				p("\n")
			}
		}
		p("\nLast transition: table %s row %s, %s -> %s", lt.Table, lt.Row, lt.From, lt.To)
		if lt.Action != "" {
			p(", %s %s", lt.Action, lt.Outcome)
		}
		p(", at %s\n", r.at(lt.Time))
		if lt.Message != "" {
			p("  %s\n", indented(lt.Message))
		}
	}

	if r.Fires != nil {
		p("\nWhat would make another row fire:\n")
		for _, rel := range r.Releases {
			p("  %s=%s → %s: row %s %s: %s", rel.Fact, rel.From, rel.To, rel.Table, rel.Row, rel.Action)
			if rel.Then != r.State {
				p(" (→ %s)", rel.Then)
			}
			p("\n")
		}
		for _, o := range r.Fires.Outcomes {
			if o.Branch == "then" && o.Changed && len(r.Fires.Do) > 0 {
				p("  or the row's own actions finish: %s → %s\n", r.State, o.To)
			}
		}
		if len(r.Releases) == 0 {
			p("  no single fact change of this row's when clause\n")
		}
	}

	if len(r.Others) > 0 {
		p("\nWhy the other rows of state %s do not fire:\n", r.State)
		for _, o := range r.Others {
			p("  %s %s (line %d): %s\n", o.Table, o.Row, o.Line, o.Reason)
		}
	}

	p("\nFacts:\n")
	width := 0
	for _, f := range r.FactOrder {
		width = max(width, len(f))
	}
	for _, f := range r.FactOrder {
		if v, ok := r.Facts[f]; ok {
			p("  %-*s %s\n", width, f, v)
		}
	}

	if r.Found {
		p("\nEvents (last %d, oldest first):\n", MaxEvents)
		if r.EventsError != "" {
			p("  could not list Events: %s\n", r.EventsError)
		}
		if len(r.Events) == 0 && r.EventsError == "" {
			p("  none\n")
		}
		for _, e := range r.Events {
			p("  %s  %-7s %s: %s", e.Time.Format(TimeFormat), e.Type, e.Reason, oneLine(e.Note))
			if e.Count > 1 {
				p(" (seen %d times)", e.Count)
			}
			p("\n")
		}
	}
}

// at prints a time and how long ago it was.
func (r *Report) at(t time.Time) string {
	d := r.Now.Sub(t)
	if d < 0 {
		return fmt.Sprintf("%s (in %s)", t.Format(TimeFormat), shortDuration(-d))
	}
	return fmt.Sprintf("%s (%s ago)", t.Format(TimeFormat), shortDuration(d))
}

func matchesText(ms []Match) string {
	if len(ms) == 0 {
		return "always"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = MatchText(engine.Match{Fact: m.Fact, Values: m.Values})
	}
	return strings.Join(parts, ", ")
}

// indented keeps the lines of a message that has several (a drain's, one
// per reason) under its first.
func indented(msg string) string { return strings.ReplaceAll(msg, "\n", "\n  ") }

// oneLine puts a message of several lines on the one line of a listing.
func oneLine(msg string) string { return strings.ReplaceAll(msg, "\n", " ") }
