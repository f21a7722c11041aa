package engine

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// reader decodes YAML nodes by hand so that every error carries the file,
// line and column of the offending node, unknown fields are refused, and the
// current table and row are named.
type reader struct {
	file     string
	table    string
	row      string
	findings *Findings
}

func (r *reader) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: r.file}
	}
	return Pos{File: r.file, Line: n.Line, Column: n.Column}
}

func (r *reader) errorf(n *yaml.Node, hint, format string, args ...any) {
	*r.findings = append(*r.findings, Finding{
		Pos: r.pos(n), Severity: SevError, Check: "schema",
		Table: r.table, Row: r.row,
		Message: fmt.Sprintf(format, args...), Hint: hint,
	})
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// fields walks a mapping, calling the handler for each known key. Unknown
// and repeated keys are errors that list the fields the mapping accepts.
func (r *reader) fields(n *yaml.Node, what string, handlers map[string]func(*yaml.Node)) bool {
	if n.Kind != yaml.MappingNode {
		r.errorf(n, "", "%s must be a mapping, found %s", what, kindName(n))
		return false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		h, ok := handlers[k.Value]
		if !ok {
			r.errorf(k, withDidYouMean(k.Value, sortedKeys(handlers), "known fields: "+strings.Join(sortedKeys(handlers), ", ")), "unknown field %q in %s", k.Value, what)
			continue
		}
		if seen[k.Value] {
			r.errorf(k, "remove one of them", "field %q repeated in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		h(v)
	}
	return true
}

func sortedKeys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (r *reader) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		r.errorf(n, "", "%s must be a string, found %s", what, kindName(n))
		return ""
	}
	return n.Value
}

func (r *reader) boolean(n *yaml.Node, what string) bool {
	if n.Kind != yaml.ScalarNode {
		r.errorf(n, "", "%s must be true or false, found %s", what, kindName(n))
		return false
	}
	b, err := strconv.ParseBool(n.Value)
	if err != nil {
		r.errorf(n, "", "%s must be true or false, found %q", what, n.Value)
	}
	return b
}

func (r *reader) duration(n *yaml.Node, what string) time.Duration {
	s := r.str(n, what)
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		r.errorf(n, "write a Go duration such as 30s or 2m", "%s: %q is not a duration", what, s)
	}
	return d
}

// strings accepts a single scalar or a list of scalars.
func (r *reader) strs(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, "", "%s must be a string or a list of strings, found %s", what, kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		out = append(out, r.str(c, what))
	}
	return out
}

func (r *reader) list(n *yaml.Node, what string, each func(*yaml.Node)) {
	if n.Kind != yaml.SequenceNode {
		r.errorf(n, "", "%s must be a list, found %s", what, kindName(n))
		return
	}
	for _, c := range n.Content {
		each(c)
	}
}

// matches reads a `when` mapping: fact name → value or list of values.
// Document order is kept so messages and renderings follow the author.
func (r *reader) matches(n *yaml.Node, what string) []Match {
	if n.Kind != yaml.MappingNode {
		r.errorf(n, "", "%s must be a mapping of fact: value, found %s", what, kindName(n))
		return nil
	}
	var out []Match
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			r.errorf(k, "list the allowed values once, e.g. fact: [a, b]", "fact %q repeated in %s", k.Value, what)
			continue
		}
		seen[k.Value] = true
		vals := r.strs(v, fmt.Sprintf("%s.%s", what, k.Value))
		if len(vals) == 0 {
			r.errorf(v, "drop the fact to match any value", "%s.%s lists no values", what, k.Value)
			continue
		}
		out = append(out, Match{Fact: k.Value, Values: vals, Pos: r.pos(k)})
	}
	return out
}
