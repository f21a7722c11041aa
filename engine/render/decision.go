package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/krtt-dev/krtt/engine"
)

// DecisionMarkdown writes the documentation page of a decision table:
// its header, the decision table itself (one line per row: the item, the
// condition, the verdict and what is done, with the scenarios that make the
// row fire when opts gives coverage), each row's machine part, and a
// glossary of its facts and verdicts. The output depends only on its inputs.
func DecisionMarkdown(w io.Writer, t *engine.DecisionTable, opts Options) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	if t.Title != "" {
		p("# %s — %s\n\n", t.Name, t.Title)
	} else {
		p("# %s\n\n", t.Name)
	}
	if t.Description != "" {
		p("%s\n\n", strings.TrimSpace(t.Description))
	}
	p("| | |\n|:---|:---|\n")
	p("| Table | %s (a stateless decision table: one verdict per %s) |\n", mdCell(mdCode(t.Name)), mdCell(mdOrDash(strings.ToLower(t.Subject))))
	if t.Source != "" {
		p("| Source | %s |\n", mdCell(t.Source))
	}
	if t.Pos.File != "" {
		p("| Defined in | %s |\n", mdCell(mdCode(mdPos(t.Pos))))
	}
	p("| Hit policy | %s |\n", mdCell(mdHitPolicy(t.HitPolicy)))
	if t.SetName != "" {
		p("| Consulted by | the controller of set %s |\n", mdCode(t.SetName))
	}
	if t.Registry != "" {
		p("| Registry | %s |\n", mdCell(mdCode(t.Registry)))
	}
	p("| Rows | %d |\n\n", len(t.Rows))

	p("## Decision table\n\n")
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = []string{r.ID, r.Observed, r.Trigger, mdCode(r.Verdict), r.Action}
	}
	p("%s", mdRowsTable([]string{"Row", mdOrDash(t.Subject), "Condition", "Verdict", "Action"}, rows, opts.Coverage))

	p("## Machine-checkable rows\n\n")
	for _, r := range t.Rows {
		p("### %s — %s\n\n", r.ID, mdOneLine(r.Trigger))
		if r.Pos.File != "" {
			p("- **Defined at:** %s\n", mdCode(mdPos(r.Pos)))
		}
		if r.Cites != "" {
			p("- **Cites:** %s\n", mdOneLine(r.Cites))
		}
		p("- **When:** %s\n", mdWhen(r.When))
		p("- **Verdict:** %s\n", mdCode(r.Verdict))
		if opts.Coverage != nil {
			p("%s", mdScenariosItem(opts.Coverage[r.ID]))
		}
		p("\n")
	}

	p("## Glossary\n\n### Verdicts\n\n| Verdict | Given by rows | Description |\n|:---|:---|:---|\n")
	for _, v := range t.Verdicts {
		var rows []string
		for _, r := range t.Rows {
			if r.Verdict == v.Name {
				rows = append(rows, r.ID)
			}
		}
		p("| %s | %s | %s |\n", mdCell(mdCode(v.Name)), mdCell(mdOrDash(strings.Join(rows, ", "))), mdCell(v.Description))
	}
	p("\n### Facts\n\n| Fact | Type | Values | Description |\n|:---|:---|:---|:---|\n")
	for _, f := range t.Facts {
		vals := make([]string, len(f.Values))
		for i, v := range f.Values {
			vals[i] = mdCode(v.Name)
			if v.Description != "" {
				vals[i] += ": " + mdOneLine(v.Description)
			}
		}
		p("| %s | %s | %s | %s |\n", mdCell(mdCode(f.Name)), f.Type, mdCell(strings.Join(vals, "\n")), mdCell(mdOneLine(f.Description)))
	}
	if len(t.Impossible) > 0 {
		p("\n### Impossible combinations\n\nNo cluster produces these combinations, so the checks ignore them.\n\n")
		p("| Name | When | Description |\n|:---|:---|:---|\n")
		for _, im := range t.Impossible {
			p("| %s | %s | %s |\n", mdCell(mdCode(im.Name)), mdCell(mdWhen(im.When)), mdCell(mdOrDash(im.Description)))
		}
	}
	out := strings.TrimRight(b.String(), "\n") + "\n"
	_, err := io.WriteString(w, out)
	return err
}
