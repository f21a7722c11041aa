package engine

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// MaxFileBytes bounds one table file. The shipped files are a few kilobytes;
// a file a thousand times larger is a mistake (or an attack on the checker,
// whose work grows with the rows), so it is refused before it is parsed.
const MaxFileBytes = 1 << 20

// tooLarge is the finding for a file over MaxFileBytes.
func tooLarge(file string, size int64) Finding {
	return Finding{Pos: Pos{File: file, Line: 1, Column: 1}, Severity: SevError, Check: "schema",
		Message: fmt.Sprintf("file is %d bytes, more than the %d-byte limit for a table file", size, MaxFileBytes),
		Hint:    "split the tables over several files, or check that this is the file you meant"}
}

// refuseAnchors reports every YAML anchor, alias and merge key in a document.
// A row must read on its own in a review and in the rendered docs; with an
// alias its meaning lives somewhere else in the file, and a merge key silently
// lets later fields override earlier ones. Aliases are also how a small file
// expands into a huge one. It returns false when it found any.
func refuseAnchors(file string, doc *yaml.Node, findings *Findings) bool {
	table := ""
	if doc.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "metadata" && doc.Content[i+1].Kind == yaml.MappingNode {
				m := doc.Content[i+1]
				for j := 0; j+1 < len(m.Content); j += 2 {
					if m.Content[j].Value == "name" {
						table = m.Content[j+1].Value
					}
				}
			}
		}
	}
	clean := true
	var walk func(n *yaml.Node, row string)
	walk = func(n *yaml.Node, row string) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "id" && n.Content[i+1].Kind == yaml.ScalarNode {
					row = n.Content[i+1].Value
				}
			}
		}
		add := func(msg string) {
			clean = false
			*findings = append(*findings, Finding{Pos: Pos{File: file, Line: n.Line, Column: n.Column}, Severity: SevError,
				Check: "schema", Table: table, Row: row, Message: msg,
				Hint: "write the value out in full: krtt tables do not use YAML anchors, aliases or merge keys"})
		}
		switch {
		case n.Kind == yaml.AliasNode:
			add(fmt.Sprintf("YAML alias *%s", n.Value))
			return // the anchored node is reported where it is defined
		case n.Anchor != "":
			add(fmt.Sprintf("YAML anchor &%s", n.Anchor))
		case n.Tag == "!!merge":
			add("YAML merge key <<")
		}
		for _, c := range n.Content {
			walk(c, row)
		}
	}
	walk(doc, "")
	return clean
}
