package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Library is everything loaded from a group of files: the table sets, each
// with its tables resolved and compiled.
type Library struct {
	Sets []*TableSet
	// Decisions are the stateless decision tables, in load order.
	Decisions []*DecisionTable
}

// Decision returns the named decision table, or nil.
func (l *Library) Decision(name string) *DecisionTable {
	for _, d := range l.Decisions {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// TableSet returns the named table set, or nil.
func (l *Library) TableSet(name string) *TableSet {
	for _, s := range l.Sets {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Table finds a table by name in any set.
func (l *Library) Table(name string) *Table {
	for _, s := range l.Sets {
		if t := s.Table(name); t != nil {
			return t
		}
	}
	return nil
}

// Tables lists every table of every set, sets in load order.
func (l *Library) Tables() []*Table {
	var out []*Table
	for _, s := range l.Sets {
		out = append(out, s.Tables...)
	}
	return out
}

// rawSet is a set as written, before its tables are attached.
type rawSet struct {
	set    *TableSet
	tables []string
	tpos   []Pos
}

// rawTable is a table as written; a standalone table carries its own set.
type rawTable struct {
	table    *Table
	setName  string
	setPos   Pos
	ownSet   *TableSet
	hasOwn   bool
	rowNodes int
}

// source is one file's bytes and the name it is reported under.
type source struct {
	name string
	data []byte
}

// LoadFS loads every .yaml/.yml file below dir in fsys (for tables embedded
// with go:embed).
func LoadFS(fsys fs.FS, dir string) (*Library, Findings) {
	var srcs []source
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !isYAML(p) {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		srcs = append(srcs, source{name: p, data: b})
		return nil
	})
	if err != nil {
		return nil, Findings{{Pos: Pos{File: dir}, Severity: SevError, Check: "schema", Message: err.Error()}}
	}
	return load(srcs)
}

// LoadPaths loads files and directories (directories are walked for
// .yaml/.yml files) from the operating system.
func LoadPaths(paths ...string) (*Library, Findings) {
	var srcs []source
	var out Findings
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			out = append(out, Finding{Pos: Pos{File: p}, Severity: SevError, Check: "schema", Message: err.Error()})
			continue
		}
		if !info.IsDir() {
			if info.Size() > MaxFileBytes {
				out = append(out, tooLarge(p, info.Size()))
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				out = append(out, Finding{Pos: Pos{File: p}, Severity: SevError, Check: "schema", Message: err.Error()})
				continue
			}
			srcs = append(srcs, source{name: p, data: b})
			continue
		}
		err = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !isYAML(fp) {
				return nil
			}
			if info, err := d.Info(); err == nil && info.Size() > MaxFileBytes {
				out = append(out, tooLarge(fp, info.Size()))
				return nil
			}
			b, err := os.ReadFile(fp)
			if err != nil {
				return err
			}
			srcs = append(srcs, source{name: fp, data: b})
			return nil
		})
		if err != nil {
			out = append(out, Finding{Pos: Pos{File: p}, Severity: SevError, Check: "schema", Message: err.Error()})
		}
	}
	if len(out) > 0 {
		return nil, out
	}
	return load(srcs)
}

// LoadBytes loads documents from memory, reported under name.
func LoadBytes(name string, data []byte) (*Library, Findings) {
	return load([]source{{name: name, data: data}})
}

func isYAML(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".yaml" || ext == ".yml"
}

func load(srcs []source) (*Library, Findings) {
	var findings Findings
	var sets []*rawSet
	var tables []*rawTable
	var decisions []*DecisionTable
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].name < srcs[j].name })
	for _, src := range srcs {
		if len(src.data) > MaxFileBytes {
			findings = append(findings, tooLarge(src.name, int64(len(src.data))))
			continue
		}
		dec := yaml.NewDecoder(bytes.NewReader(src.data))
		for {
			var doc yaml.Node
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				findings = append(findings, yamlSyntaxFinding(src.name, err))
				break
			}
			if len(doc.Content) == 0 || !refuseAnchors(src.name, doc.Content[0], &findings) {
				continue
			}
			r := &reader{file: src.name, findings: &findings}
			s, t, d := r.document(doc.Content[0])
			if s != nil {
				sets = append(sets, s)
			}
			if t != nil {
				tables = append(tables, t)
			}
			if d != nil {
				decisions = append(decisions, d)
			}
		}
	}
	if findings.HasErrors() {
		findings.Sort()
		return nil, findings
	}
	lib := link(sets, tables, &findings)
	if findings.HasErrors() {
		findings.Sort()
		return nil, findings
	}
	for _, s := range lib.Sets {
		resolve(s, &findings)
	}
	linkDecisions(lib, decisions, &findings)
	if findings.HasErrors() {
		findings.Sort()
		return nil, findings
	}
	for _, s := range lib.Sets {
		compileSet(s)
	}
	return lib, findings
}

// yamlSyntaxFinding turns a yaml.v3 error ("yaml: line 7: ...") into a
// finding with the line number pulled out.
func yamlSyntaxFinding(file string, err error) Finding {
	msg := err.Error()
	line := 0
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	// The position goes in front of the finding; drop it from the text.
	if line > 0 {
		msg = strings.TrimPrefix(msg, fmt.Sprintf("line %d: ", line))
	}
	if line == 0 {
		// Some errors (nesting deeper than yaml.v3 allows) carry no line;
		// they are found from the top of the file.
		line = 1
	}
	return Finding{Pos: Pos{File: file, Line: line, Column: 1}, Severity: SevError, Check: "schema",
		Message: "YAML syntax: " + msg, Hint: "check the indentation and quoting from this line down (YAML names the start of the block it could not parse)"}
}

// document reads one top-level document.
func (r *reader) document(n *yaml.Node) (*rawSet, *rawTable, *DecisionTable) {
	var apiVersion, kind, name string
	var metaNode, specNode, kindNode, avNode *yaml.Node
	ok := r.fields(n, "the document", map[string]func(*yaml.Node){
		"apiVersion": func(v *yaml.Node) { avNode = v; apiVersion = r.str(v, "apiVersion") },
		"kind":       func(v *yaml.Node) { kindNode = v; kind = r.str(v, "kind") },
		"metadata":   func(v *yaml.Node) { metaNode = v },
		"spec":       func(v *yaml.Node) { specNode = v },
	})
	if !ok {
		return nil, nil, nil
	}
	if avNode == nil {
		r.errorf(n, "add apiVersion: "+APIVersion, "missing apiVersion")
	} else if apiVersion != APIVersion {
		r.errorf(avNode, "use apiVersion: "+APIVersion, "unsupported apiVersion %q", apiVersion)
	}
	if metaNode == nil {
		r.errorf(n, "add metadata.name", "missing metadata")
		return nil, nil, nil
	}
	r.fields(metaNode, "metadata", map[string]func(*yaml.Node){
		"name": func(v *yaml.Node) { name = r.str(v, "metadata.name") },
	})
	if name == "" {
		r.errorf(metaNode, "give the document a name", "metadata.name is empty")
	}
	if specNode == nil {
		r.errorf(n, "add a spec", "missing spec")
		return nil, nil, nil
	}
	switch kind {
	case KindTable:
		r.table = name
		return nil, r.tableSpec(name, specNode, r.pos(n)), nil
	case KindSet:
		return r.setSpec(name, specNode, r.pos(n)), nil, nil
	case KindDecision:
		r.table = name
		return nil, nil, r.decisionSpec(name, specNode, r.pos(n))
	default:
		at := kindNode
		if at == nil {
			at = n
		}
		r.errorf(at, "use kind: "+KindTable+", "+KindSet+" or "+KindDecision, "unknown kind %q", kind)
	}
	return nil, nil, nil
}

// linkDecisions resolves the decision tables and attaches each to the set
// that consults it; names are unique among all tables.
func linkDecisions(lib *Library, decisions []*DecisionTable, findings *Findings) {
	seen := map[string]Pos{}
	for _, t := range lib.Tables() {
		seen[t.Name] = t.Pos
	}
	for _, d := range decisions {
		if prev, dup := seen[d.Name]; dup {
			*findings = append(*findings, Finding{Pos: d.Pos, Severity: SevError, Check: "schema", Table: d.Name,
				Message: fmt.Sprintf("table %q is defined twice (also at %s:%d)", d.Name, prev.File, prev.Line), Hint: "rename one of them"})
			continue
		}
		seen[d.Name] = d.Pos
		resolveDecision(d, findings)
		if d.SetName != "" {
			s := lib.TableSet(d.SetName)
			if s == nil {
				*findings = append(*findings, Finding{Pos: d.setPos, Severity: SevError, Check: "reference", Table: d.Name,
					Message: fmt.Sprintf("decision table names TableSet %q, which was not loaded", d.SetName), Hint: "load the directory that holds the set's file, or drop spec.set"})
				continue
			}
			s.Decisions = append(s.Decisions, d)
		}
		lib.Decisions = append(lib.Decisions, d)
	}
}

// vocabulary holds the handlers shared by sets and standalone tables.
func (r *reader) vocabulary(s *TableSet, h map[string]func(*yaml.Node)) {
	h["description"] = func(v *yaml.Node) { s.Description = r.str(v, "spec.description") }
	h["registry"] = func(v *yaml.Node) { s.Registry = r.str(v, "spec.registry") }
	h["initialState"] = func(v *yaml.Node) { s.InitialState = r.str(v, "spec.initialState") }
	h["states"] = func(v *yaml.Node) {
		r.list(v, "spec.states", func(n *yaml.Node) { s.States = append(s.States, r.state(n)) })
	}
	h["facts"] = func(v *yaml.Node) {
		r.list(v, "spec.facts", func(n *yaml.Node) { s.Facts = append(s.Facts, r.fact(n)) })
	}
	h["impossible"] = func(v *yaml.Node) {
		r.list(v, "spec.impossible", func(n *yaml.Node) { s.Impossible = append(s.Impossible, r.impossible(n)) })
	}
	h["unknownState"] = func(v *yaml.Node) { s.UnknownState = r.str(v, "spec.unknownState") }
	h["conditions"] = func(v *yaml.Node) {
		r.list(v, "spec.conditions", func(n *yaml.Node) {
			ct := &ConditionType{Pos: r.pos(n)}
			r.fields(n, "a condition type", map[string]func(*yaml.Node){
				"type":        func(v *yaml.Node) { ct.Type = r.str(v, "type") },
				"description": func(v *yaml.Node) { ct.Description = r.str(v, "description") },
			})
			if ct.Type == "" {
				r.errorf(n, "give every condition a type", "condition without a type")
			}
			s.Conditions = append(s.Conditions, ct)
		})
	}
	h["statusFields"] = func(v *yaml.Node) {
		r.list(v, "spec.statusFields", func(n *yaml.Node) {
			sf := &StatusField{Pos: r.pos(n)}
			r.fields(n, "a status field", map[string]func(*yaml.Node){
				"name":        func(v *yaml.Node) { sf.Name = r.str(v, "name") },
				"description": func(v *yaml.Node) { sf.Description = r.str(v, "description") },
			})
			s.StatusFields = append(s.StatusFields, sf)
		})
	}
}

func (r *reader) setSpec(name string, n *yaml.Node, pos Pos) *rawSet {
	rs := &rawSet{set: &TableSet{Name: name, Pos: pos}}
	h := map[string]func(*yaml.Node){}
	r.vocabulary(rs.set, h)
	h["tables"] = func(v *yaml.Node) {
		r.list(v, "spec.tables", func(c *yaml.Node) {
			rs.tables = append(rs.tables, r.str(c, "spec.tables item"))
			rs.tpos = append(rs.tpos, r.pos(c))
		})
	}
	r.fields(n, "the TableSet spec", h)
	return rs
}

func (r *reader) tableSpec(name string, n *yaml.Node, pos Pos) *rawTable {
	t := &Table{Name: name, HitPolicy: HitUnique, Pos: pos}
	rt := &rawTable{table: t, ownSet: &TableSet{Name: name, Pos: pos}}
	h := map[string]func(*yaml.Node){}
	r.vocabulary(rt.ownSet, h)
	// A table's own description is the table's, not its private set's.
	h["description"] = func(v *yaml.Node) { t.Description = r.str(v, "spec.description") }
	for _, k := range []string{"registry", "initialState", "unknownState", "states", "facts", "impossible", "statusFields", "conditions"} {
		inner := h[k]
		h[k] = func(v *yaml.Node) { rt.hasOwn = true; inner(v) }
	}
	h["set"] = func(v *yaml.Node) { rt.setName = r.str(v, "spec.set"); rt.setPos = r.pos(v) }
	h["title"] = func(v *yaml.Node) { t.Title = r.str(v, "spec.title") }
	h["source"] = func(v *yaml.Node) { t.Source = r.str(v, "spec.source") }
	h["hitPolicy"] = func(v *yaml.Node) {
		hp := HitPolicy(r.str(v, "spec.hitPolicy"))
		if hp != HitUnique && hp != HitFirst {
			r.errorf(v, "use unique or first", "unknown hitPolicy %q", hp)
		}
		t.HitPolicy = hp
	}
	h["rows"] = func(v *yaml.Node) {
		r.list(v, "spec.rows", func(c *yaml.Node) { t.Rows = append(t.Rows, r.rowNode(c)) })
		rt.rowNodes = len(v.Content)
	}
	r.fields(n, "the TransitionTable spec", h)
	r.row = ""
	if len(t.Rows) == 0 {
		r.errorf(n, "add at least one row under spec.rows", "table %s has no rows", name)
	}
	return rt
}

func (r *reader) state(n *yaml.Node) *State {
	s := &State{Pos: r.pos(n)}
	r.fields(n, "a state", map[string]func(*yaml.Node){
		"name":         func(v *yaml.Node) { s.Name = r.str(v, "state name") },
		"description":  func(v *yaml.Node) { s.Description = r.str(v, "state description") },
		"phase":        func(v *yaml.Node) { s.Phase = r.str(v, "state phase") },
		"terminal":     func(v *yaml.Node) { s.Terminal = r.boolean(v, "state terminal") },
		"parent":       func(v *yaml.Node) { s.Parent = r.str(v, "state parent") },
		"abstract":     func(v *yaml.Node) { s.Abstract = r.boolean(v, "state abstract") },
		"deletionStep": func(v *yaml.Node) { s.DeletionStep = r.boolean(v, "state deletionStep") },
		"quiet":        func(v *yaml.Node) { s.Quiet = r.boolean(v, "state quiet") },
		"wait": func(v *yaml.Node) {
			w := &StateWait{}
			r.fields(v, "a state wait", map[string]func(*yaml.Node){
				"step":      func(v *yaml.Node) { w.Step = r.str(v, "wait step") },
				"on":        func(v *yaml.Node) { w.On = r.str(v, "wait on") },
				"since":     func(v *yaml.Node) { w.Since = r.str(v, "wait since") },
				"timeout":   func(v *yaml.Node) { w.Timeout = r.str(v, "wait timeout") },
				"noTimeout": func(v *yaml.Node) { w.NoTimeout = r.str(v, "wait noTimeout") },
				"object":    func(v *yaml.Node) { w.Object = r.str(v, "wait object") },
				"timedOut":  func(v *yaml.Node) { w.TimedOut = r.str(v, "wait timedOut") },
				"countFrom": func(v *yaml.Node) { w.CountFrom = r.str(v, "wait countFrom") },
				"armedBy":   func(v *yaml.Node) { w.ArmedBy = r.str(v, "wait armedBy") },
			})
			w.Pos = r.pos(v)
			s.Wait = w
		},
	})
	if s.Name == "" {
		r.errorf(n, "give every state a name", "state without a name")
	}
	return s
}

func (r *reader) fact(n *yaml.Node) *Fact {
	f := &Fact{Pos: r.pos(n)}
	var typeNode *yaml.Node
	r.fields(n, "a fact", map[string]func(*yaml.Node){
		"name":        func(v *yaml.Node) { f.Name = r.str(v, "fact name") },
		"description": func(v *yaml.Node) { f.Description = r.str(v, "fact description") },
		"type":        func(v *yaml.Node) { typeNode = v; f.Type = FactType(r.str(v, "fact type")) },
		"values": func(v *yaml.Node) {
			r.list(v, "fact values", func(c *yaml.Node) {
				val := Value{Pos: r.pos(c)}
				r.fields(c, "a fact value", map[string]func(*yaml.Node){
					"name":        func(v *yaml.Node) { val.Name = r.str(v, "value name") },
					"description": func(v *yaml.Node) { val.Description = r.str(v, "value description") },
				})
				f.Values = append(f.Values, val)
			})
		},
	})
	if f.Name == "" {
		r.errorf(n, "give every fact a name", "fact without a name")
	}
	if f.Description == "" {
		r.errorf(n, "say in one line what the fact means", "fact %q has no description", f.Name)
	}
	switch f.Type {
	case FactBool:
		if len(f.Values) > 0 {
			r.errorf(n, "drop values, or make it type: enum", "bool fact %q lists values", f.Name)
		}
		f.Values = []Value{{Name: "false"}, {Name: "true"}}
	case FactEnum:
		if len(f.Values) < 2 {
			r.errorf(n, "list at least two values, or make it type: bool", "enum fact %q needs at least two values", f.Name)
		}
		if len(f.Values) > 64 {
			r.errorf(n, "split the fact", "enum fact %q has more than 64 values", f.Name)
		}
		seen := map[string]bool{}
		for _, v := range f.Values {
			if v.Name == "" || seen[v.Name] {
				r.errorf(n, "give each value a unique name", "enum fact %q has an empty or repeated value %q", f.Name, v.Name)
			}
			seen[v.Name] = true
		}
	default:
		at := typeNode
		if at == nil {
			at = n
		}
		r.errorf(at, "use type: bool or type: enum", "fact %q has unknown type %q", f.Name, f.Type)
	}
	return f
}

func (r *reader) impossible(n *yaml.Node) *Impossible {
	im := &Impossible{Pos: r.pos(n)}
	r.fields(n, "an impossible combination", map[string]func(*yaml.Node){
		"name":        func(v *yaml.Node) { im.Name = r.str(v, "name") },
		"description": func(v *yaml.Node) { im.Description = r.str(v, "description") },
		"when":        func(v *yaml.Node) { im.When = r.matches(v, "impossible.when") },
	})
	if len(im.When) == 0 {
		r.errorf(n, "list the fact values that cannot occur together", "impossible combination %q has no when", im.Name)
	}
	return im
}

// rowID is a row's id, read before its fields so every error inside the
// row names it.
func rowID(n *yaml.Node) string {
	id := ""
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "id" {
				id = n.Content[i+1].Value
			}
		}
	}
	return id
}

func (r *reader) rowNode(n *yaml.Node) *Row {
	row := &Row{Pos: r.pos(n), ID: rowID(n)}
	r.row = row.ID
	r.fields(n, "a row", map[string]func(*yaml.Node){
		"id":         func(v *yaml.Node) { row.ID = r.str(v, "row id") },
		"cites":      func(v *yaml.Node) { row.Cites = r.str(v, "cites") },
		"observed":   func(v *yaml.Node) { row.Observed = r.str(v, "observed") },
		"desired":    func(v *yaml.Node) { row.Desired = r.str(v, "desired") },
		"trigger":    func(v *yaml.Node) { row.Trigger = r.str(v, "trigger") },
		"action":     func(v *yaml.Node) { row.Action = r.str(v, "action") },
		"resulting":  func(v *yaml.Node) { row.Resulting = r.str(v, "resulting") },
		"from":       func(v *yaml.Node) { row.From = r.strs(v, "from") },
		"when":       func(v *yaml.Node) { row.When = r.matches(v, "when") },
		"guards":     func(v *yaml.Node) { row.Guards = r.strs(v, "guards") },
		"do":         func(v *yaml.Node) { row.Do = r.strs(v, "do") },
		"then":       func(v *yaml.Node) { row.Then = r.result(v, "then") },
		"inProgress": func(v *yaml.Node) { res := r.result(v, "inProgress"); row.InProgress = &res },
		"onFailure":  func(v *yaml.Node) { res := r.result(v, "onFailure"); row.OnFailure = &res },
	})
	if row.ID == "" {
		r.errorf(n, "give every row a unique id such as N01", "row without an id")
	}
	for _, col := range []struct{ name, val string }{{"observed", row.Observed}, {"trigger", row.Trigger}, {"action", row.Action}, {"resulting", row.Resulting}} {
		if col.val == "" {
			r.errorf(n, "fill in the human-readable KRTT column", "row has no %q column", col.name)
		}
	}
	if len(row.From) == 0 {
		r.errorf(n, `name the states the row applies to, or "*" for every non-terminal state`, "row has no from")
	}
	return row
}

// eventReasonPattern is the shape of an Event reason a row may give.
var eventReasonPattern = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

func (r *reader) result(n *yaml.Node, what string) Result {
	res := Result{Pos: r.pos(n)}
	r.fields(n, what, map[string]func(*yaml.Node){
		"state":        func(v *yaml.Node) { res.State = r.str(v, what+".state") },
		"requeueAfter": func(v *yaml.Node) { res.RequeueAfter = r.duration(v, what+".requeueAfter") },
		"requeueAt":    func(v *yaml.Node) { res.RequeueAt = r.str(v, what+".requeueAt") },
		"retry":        func(v *yaml.Node) { res.Retry = r.boolean(v, what+".retry") },
		"statusUnchanged": func(v *yaml.Node) {
			res.StatusUnchanged = r.boolean(v, what+".statusUnchanged")
		},
		"warning": func(v *yaml.Node) { res.Warning = r.boolean(v, what+".warning") },
		"quiet":   func(v *yaml.Node) { res.Quiet = r.boolean(v, what+".quiet") },
		"eventReason": func(v *yaml.Node) {
			res.EventReason = r.str(v, what+".eventReason")
			if !eventReasonPattern.MatchString(res.EventReason) {
				r.errorf(v, "write one word in UpperCamelCase, as Kubernetes Event reasons are (MachineCreationFailed)",
					"%s.eventReason %q is not a single UpperCamelCase word", what, res.EventReason)
			}
		},
		"conditions": func(v *yaml.Node) {
			r.list(v, what+".conditions", func(c *yaml.Node) { res.Conditions = append(res.Conditions, r.condition(c, what)) })
		},
		"status": func(v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				r.errorf(v, "", "%s.status must be a mapping of field: value", what)
				return
			}
			res.Status = map[string]string{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k := v.Content[i].Value
				res.Status[k] = r.str(v.Content[i+1], what+".status."+k)
				res.StatusOrder = append(res.StatusOrder, k)
			}
		},
	})
	return res
}

func (r *reader) condition(n *yaml.Node, what string) Condition {
	c := Condition{Pos: r.pos(n)}
	r.fields(n, what+" condition", map[string]func(*yaml.Node){
		"type":    func(v *yaml.Node) { c.Type = r.str(v, "condition type") },
		"status":  func(v *yaml.Node) { c.Status = r.str(v, "condition status") },
		"reason":  func(v *yaml.Node) { c.Reason = r.str(v, "condition reason") },
		"message": func(v *yaml.Node) { c.Message = r.str(v, "condition message") },
	})
	if c.Type == "" || c.Reason == "" {
		r.errorf(n, "every condition needs a type and a reason", "%s condition is missing its type or reason", what)
	}
	switch c.Status {
	case "True", "False", "Unknown":
	default:
		r.errorf(n, `write status: "True", "False" or "Unknown", quoted and capitalised as in metav1.Condition`,
			"condition %s in %s has status %q, which is not \"True\", \"False\" or \"Unknown\"", c.Type, what, c.Status)
	}
	return c
}

// link attaches tables to their sets and wraps standalone tables in sets of
// their own.
func link(sets []*rawSet, tables []*rawTable, findings *Findings) *Library {
	lib := &Library{}
	byName := map[string]*rawSet{}
	for _, rs := range sets {
		if prev, ok := byName[rs.set.Name]; ok {
			*findings = append(*findings, Finding{Pos: rs.set.Pos, Severity: SevError, Check: "schema",
				Message: fmt.Sprintf("TableSet %q is defined twice (also at %s:%d)", rs.set.Name, prev.set.Pos.File, prev.set.Pos.Line), Hint: "rename one of them"})
			continue
		}
		byName[rs.set.Name] = rs
	}
	tablesByName := map[string]*rawTable{}
	for _, rt := range tables {
		if prev, ok := tablesByName[rt.table.Name]; ok {
			*findings = append(*findings, Finding{Pos: rt.table.Pos, Severity: SevError, Check: "schema", Table: rt.table.Name,
				Message: fmt.Sprintf("table %q is defined twice (also at %s:%d)", rt.table.Name, prev.table.Pos.File, prev.table.Pos.Line), Hint: "rename one of them"})
			continue
		}
		tablesByName[rt.table.Name] = rt
	}
	for _, rs := range sets {
		if byName[rs.set.Name] != rs {
			continue
		}
		for i, name := range rs.tables {
			rt, ok := tablesByName[name]
			if !ok {
				*findings = append(*findings, Finding{Pos: rs.tpos[i], Severity: SevError, Check: "reference",
					Message: fmt.Sprintf("TableSet %s lists table %q, which was not loaded", rs.set.Name, name), Hint: "load the table's file too, or remove it from spec.tables"})
				continue
			}
			if rt.setName != rs.set.Name {
				*findings = append(*findings, Finding{Pos: rt.table.Pos, Severity: SevError, Check: "reference", Table: name,
					Message: fmt.Sprintf("table is listed by TableSet %s but its spec.set is %q", rs.set.Name, rt.setName), Hint: "set spec.set: " + rs.set.Name})
				continue
			}
			if rt.hasOwn {
				*findings = append(*findings, Finding{Pos: rt.table.Pos, Severity: SevError, Check: "schema", Table: name,
					Message: "a table in a TableSet declares its own states, facts or registry", Hint: "move them to the TableSet " + rs.set.Name})
			}
			rt.table.set = rs.set
			rs.set.Tables = append(rs.set.Tables, rt.table)
		}
		lib.Sets = append(lib.Sets, rs.set)
	}
	for _, rt := range tables {
		if tablesByName[rt.table.Name] != rt {
			continue
		}
		if rt.setName == "" {
			rt.ownSet.Tables = []*Table{rt.table}
			rt.table.set = rt.ownSet
			lib.Sets = append(lib.Sets, rt.ownSet)
			continue
		}
		rs, ok := byName[rt.setName]
		if !ok {
			*findings = append(*findings, Finding{Pos: rt.setPos, Severity: SevError, Check: "reference", Table: rt.table.Name,
				Message: fmt.Sprintf("table names TableSet %q, which was not loaded", rt.setName), Hint: "load the directory that holds the set's file"})
			continue
		}
		listed := false
		for _, n := range rs.tables {
			listed = listed || n == rt.table.Name
		}
		if !listed {
			*findings = append(*findings, Finding{Pos: rt.setPos, Severity: SevError, Check: "reference", Table: rt.table.Name,
				Message: fmt.Sprintf("TableSet %s does not list this table in spec.tables", rt.setName), Hint: "add it where it should be consulted"})
		}
	}
	return lib
}
