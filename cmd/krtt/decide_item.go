package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/krtt-dev/krtt/engine"
	krttexplain "github.com/krtt-dev/krtt/engine/explain"
)

// itemReport is krtt decide's answer for a decision table; -o json prints
// it as is.
type itemReport struct {
	Table   string            `json:"table"`
	Subject string            `json:"subject,omitempty"`
	Facts   map[string]string `json:"facts"`
	// Decides is the row that gives the verdict; null when it is not known.
	Decides *itemRow `json:"decides"`
	// Error says why no row decides.
	Error  string      `json:"error,omitempty"`
	Others []itemOther `json:"others"`

	factsString string
}

// itemRow is the row that gives the verdict, with its human columns.
type itemRow struct {
	Row                string `json:"row"`
	File               string `json:"file"`
	Line               int    `json:"line"`
	Cites              string `json:"cites"`
	Observed           string `json:"observed"`
	Trigger            string `json:"trigger"`
	Action             string `json:"action"`
	When               string `json:"when"`
	Verdict            string `json:"verdict"`
	VerdictDescription string `json:"verdictDescription,omitempty"`
}

// itemOther says why a row does not give the verdict.
type itemOther struct {
	Row     string `json:"row"`
	Line    int    `json:"line"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// decideItem asks a decision table for one item's verdict from the facts
// given (engine.DecisionTable.Check) and prints it.
func decideItem(stdout io.Writer, dt *engine.DecisionTable, given []string, output string) error {
	f := dt.NewFacts()
	for _, kv := range given {
		name, value, ok := strings.Cut(kv, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return usagef("--fact %q: write name=value", kv)
		}
		if err := f.Set(name, value); err != nil {
			if dt.Fact(name) == nil {
				var names []string
				for _, x := range dt.Facts {
					names = append(names, x.Name)
				}
				return usagef("--fact %s: %v; facts of %s: %s", kv, err, dt.Name, strings.Join(names, ", "))
			}
			return usagef("--fact %s: %v", kv, err)
		}
	}
	c, err := krttexplain.CheckDecision(dt, f)
	if err != nil {
		return err
	}
	rep := &itemReport{Table: dt.Name, Subject: dt.Subject, Facts: f.Map(), Error: c.Error, Others: []itemOther{}, factsString: f.String()}
	if rep.Facts == nil {
		rep.Facts = map[string]string{}
	}
	if r := c.Decides; r != nil {
		rep.Decides = &itemRow{Row: r.ID, File: r.Pos.File, Line: r.Pos.Line, Cites: r.Cites, Observed: r.Observed,
			Trigger: r.Trigger, Action: r.Action, When: whenText(r.When), Verdict: r.Verdict}
		if v := dt.Verdict(r.Verdict); v != nil {
			rep.Decides.VerdictDescription = v.Description
		}
	}
	for _, o := range c.Others {
		rep.Others = append(rep.Others, itemOther{Row: o.Row.ID, Line: o.Row.Pos.Line, Verdict: string(o.Verdict), Reason: o.Reason()})
	}
	if err := emitReport(stdout, output, rep, func() { writeItemDecision(stdout, rep) }); err != nil {
		return err
	}
	if rep.Decides == nil {
		return exitCode(1)
	}
	return nil
}

func whenText(ms []engine.Match) string {
	if len(ms) == 0 {
		return "always"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = krttexplain.MatchText(m)
	}
	return strings.Join(parts, ", ")
}

func writeItemDecision(w io.Writer, rep *itemReport) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	subject := rep.Subject
	if subject == "" {
		subject = "item"
	}
	p("decision table %s (one %s), facts: %s\n\n", rep.Table, subject, rep.factsString)
	if d := rep.Decides; d != nil {
		p("verdict: %s", d.Verdict)
		if d.VerdictDescription != "" {
			p(" — %s", d.VerdictDescription)
		}
		p("\ndecided by row %s (%s:%d)\n", d.Row, d.File, d.Line)
		p("  Observed:  %s\n", d.Observed)
		p("  Trigger:   %s\n", d.Trigger)
		p("  Action:    %s\n", d.Action)
		p("  when:      %s\n", d.When)
		p("  cites:     %s\n", d.Cites)
	} else {
		p("no verdict: %s\n", rep.Error)
	}
	if len(rep.Others) > 0 {
		p("\nother rows:\n")
		for _, o := range rep.Others {
			p("  %s (line %d): %s\n", o.Row, o.Line, o.Reason)
		}
	}
}
