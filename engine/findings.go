package engine

import (
	"fmt"
	"sort"
	"strings"
)

// Severity of a finding.
type Severity string

const (
	SevError   Severity = "error"
	SevWarning Severity = "warning"
)

// Finding is one problem the loader or a checker found. It always says where
// (file:line:column, table and row) and what to do about it.
type Finding struct {
	Pos      Pos
	Severity Severity
	// Check names the checker: schema, reference, determinism, completeness,
	// masking, reachability, registry.
	Check   string
	Table   string
	Row     string
	Message string
	Hint    string
}

func (f Finding) String() string {
	var b strings.Builder
	if f.Pos.File != "" {
		fmt.Fprintf(&b, "%s:%d:%d: ", f.Pos.File, f.Pos.Line, f.Pos.Column)
	}
	b.WriteString(string(f.Severity))
	if f.Check != "" {
		fmt.Fprintf(&b, " %s", f.Check)
	}
	switch {
	case f.Table != "" && f.Row != "":
		fmt.Fprintf(&b, " [%s row %s]", f.Table, f.Row)
	case f.Table != "":
		fmt.Fprintf(&b, " [%s]", f.Table)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	if f.Hint != "" {
		b.WriteString("; ")
		b.WriteString(f.Hint)
	}
	return b.String()
}

// Findings is a list of findings; as an error it prints one per line.
type Findings []Finding

func (fs Findings) Error() string {
	lines := make([]string, len(fs))
	for i, f := range fs {
		lines[i] = f.String()
	}
	return strings.Join(lines, "\n")
}

// Errors returns only the findings of severity error.
func (fs Findings) Errors() Findings {
	var out Findings
	for _, f := range fs {
		if f.Severity == SevError {
			out = append(out, f)
		}
	}
	return out
}

// HasErrors reports whether any finding is an error.
func (fs Findings) HasErrors() bool { return len(fs.Errors()) > 0 }

// Sort orders findings by file, line, column, then message.
func (fs Findings) Sort() {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].Pos, fs[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		return fs[i].Message < fs[j].Message
	})
}

// AsError returns nil when there are no error findings.
func (fs Findings) AsError() error {
	if errs := fs.Errors(); len(errs) > 0 {
		return errs
	}
	return nil
}
