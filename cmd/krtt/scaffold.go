package main

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/krtt-dev/krtt/engine"
)

//go:embed scaffold
var scaffoldFS embed.FS

// scaffold is what the templates of krtt init and krtt create controller
// are filled with.
type scaffold struct {
	Module, KrttDir, Binary            string
	Name, Package, Kind, Lower, Plural string
	Group, Version                     string
}

// render fills the template at name (under scaffold/) and writes it to
// path under dir, refusing to overwrite; .go files are gofmt'ed.
func (s scaffold) render(dir, name, path string) error {
	raw, err := scaffoldFS.ReadFile("scaffold/" + name)
	if err != nil {
		return err
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, s); err != nil {
		return err
	}
	return writeNew(filepath.Join(dir, path), b.Bytes())
}

// writeNew writes a file that must not exist yet; .go files are gofmt'ed.
func writeNew(path string, content []byte) error {
	if strings.HasSuffix(path, ".go") {
		formatted, err := format.Source(content)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		content = formatted
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// initCmd: krtt init --module PATH --krtt DIR [DIR]
func initCmd(stdout io.Writer) *cobra.Command {
	var module, krttDir string
	cmd := &cobra.Command{
		Use:   "init --module PATH --krtt DIR [DIR]",
		Short: "Start a Go module for controllers on krtt in an empty directory",
		Long: `init writes, into DIR (default: the current directory), which must be
empty: go.mod for the module PATH with a replace of github.com/krtt-dev/krtt to
the local krtt checkout --krtt DIR (krtt is not published to a module proxy);
main.go, a manager running the module's controllers, which also writes their
catalog (-dump-catalog FILE) for krtt lint --catalog; transitions/, where
each controller's tables go; and a Makefile with lint, docs and test. Then:

  krtt create controller NAME --kind KIND
  go mod tidy && make test`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("init takes at most one DIR")
			}
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if module == "" || krttDir == "" {
				return usagef("init needs --module PATH and --krtt DIR (a local krtt checkout)")
			}
			abs, err := filepath.Abs(krttDir)
			if err != nil {
				return err
			}
			if _, err := os.Stat(filepath.Join(abs, "engine", "registry.go")); err != nil {
				return usagef("--krtt %s is not a krtt checkout (no engine/registry.go)", krttDir)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				return err
			}
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), ".") {
					return fmt.Errorf("%s is not empty (%s): init starts a module in an empty directory", dir, e.Name())
				}
			}
			s := scaffold{Module: module, KrttDir: abs, Binary: filepath.Base(module)}
			for name, path := range map[string]string{"init/go.mod.tmpl": "go.mod", "init/main.go.tmpl": "main.go",
				"init/Makefile.tmpl": "Makefile", "init/transitions/embed.go.tmpl": "transitions/embed.go"} {
				if err := s.render(dir, name, path); err != nil {
					return err
				}
			}
			if err := writeControllers(dir, module); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote module %s in %s; next: krtt create controller NAME --kind KIND, then go mod tidy\n", module, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&module, "module", "", "the Go module path")
	cmd.Flags().StringVar(&krttDir, "krtt", "", "a local krtt checkout, which go.mod replaces github.com/krtt-dev/krtt with")
	return cmd
}

var (
	controllerName = regexp.MustCompile(`^[a-z][a-z0-9]{0,30}$`)
	kindName       = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,62}$`)
	moduleLine     = regexp.MustCompile(`(?m)^module\s+(\S+)`)
)

// createCmd: krtt create controller NAME --kind KIND
func createCmd(stdout io.Writer) *cobra.Command {
	create := &cobra.Command{Use: "create", Short: "Add to a module krtt init started"}
	var kind, group, version, dir string
	ctl := &cobra.Command{
		Use:   "controller NAME --kind KIND [--group GROUP] [--version V] [--dir DIR]",
		Short: "Add a controller: its tables, registry, API type, Setup and envtest test",
		Long: `create controller NAME writes a working skeleton, which its test walks
through every state (Pending, Ready, Deleting, Gone):

  transitions/NAME/NAME.yaml         the TableSet: states, facts, conditions
  transitions/NAME/NAME-rows.yaml    its table
  controllers/NAME/registry.go       the registry, generated from the tables' facts and actions
  controllers/NAME/api.go            the API type KIND, implementing kit.Status
  controllers/NAME/setup.go          Spec, Setup and the RBAC markers
  controllers/NAME/NAME_test.go      an envtest test walking every state
  controllers/NAME/testdata/crd.yaml the CRD the test installs

and lists the controller in controllers.go, which main.go runs.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !controllerName.MatchString(args[0]) {
				return usagef("create controller needs one NAME of lower-case letters and digits")
			}
			if !kindName.MatchString(kind) {
				return usagef("create controller needs --kind, a Kind such as Gate")
			}
			mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err != nil {
				return fmt.Errorf("no go.mod in %s: run krtt init first", dir)
			}
			m := moduleLine.FindSubmatch(mod)
			if m == nil {
				return fmt.Errorf("%s/go.mod names no module", dir)
			}
			name := args[0]
			s := scaffold{Module: string(m[1]), Name: name, Package: name, Kind: kind, Lower: strings.ToLower(kind),
				Plural: strings.ToLower(kind) + "s", Group: group, Version: version}
			if s.Group == "" {
				s.Group = name + ".example.com"
			}
			pkg := filepath.Join("controllers", name)
			for tmpl, path := range map[string]string{
				"controller/set.yaml.tmpl":  filepath.Join("transitions", name, name+".yaml"),
				"controller/rows.yaml.tmpl": filepath.Join("transitions", name, name+"-rows.yaml"),
				"controller/api.go.tmpl":    filepath.Join(pkg, "api.go"),
				"controller/setup.go.tmpl":  filepath.Join(pkg, "setup.go"),
				"controller/test.go.tmpl":   filepath.Join(pkg, name+"_test.go"),
				"controller/crd.yaml.tmpl":  filepath.Join(pkg, "testdata", "crd.yaml"),
			} {
				if err := s.render(dir, tmpl, path); err != nil {
					return err
				}
			}
			reg, err := registryFromTables(filepath.Join(dir, "transitions", name), s)
			if err != nil {
				return err
			}
			if err := writeNew(filepath.Join(dir, pkg, "registry.go"), reg); err != nil {
				return err
			}
			if err := writeControllers(dir, s.Module); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote controller %s (kind %s) in transitions/%s and %s\n", name, kind, name, pkg)
			return nil
		},
	}
	ctl.Flags().StringVar(&kind, "kind", "", "the Kind of the API type the controller reconciles")
	ctl.Flags().StringVar(&group, "group", "", "its API group (default NAME.example.com)")
	ctl.Flags().StringVar(&version, "version", "v1", "its API version")
	ctl.Flags().StringVar(&dir, "dir", ".", "the module's directory")
	create.AddCommand(ctl)
	return create
}

// writeControllers (re)writes controllers.go: one line per package under
// controllers/, which main.go sets up.
func writeControllers(dir, module string) error {
	entries, err := os.ReadDir(filepath.Join(dir, "controllers"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && controllerName.MatchString(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("// Code generated by krtt create controller; DO NOT EDIT.\n\npackage main\n\n")
	if len(names) > 0 {
		b.WriteString("import (\n")
		for _, n := range names {
			fmt.Fprintf(&b, "\t%q\n", module+"/controllers/"+n)
		}
		b.WriteString("\n\tctrl \"sigs.k8s.io/controller-runtime\"\n)\n\n")
	}
	b.WriteString("// controllers are every package under controllers/.\nvar controllers = []controller{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t{name: %q, addToScheme: %s.AddToScheme, catalogs: %s.Catalogs, setup: func(m ctrl.Manager) error { return %s.Setup(m, %s.Options{}) }},\n", n, n, n, n, n)
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "controllers.go"), out, 0o644)
}

// registryFromTables writes registry.go from what the tables use: an
// observer per fact they declare (not those a wait's timedOut computes),
// each guard and action their rows name, each status field. The names the
// skeleton uses get their code; any other is a stub that says so.
func registryFromTables(dir string, s scaffold) ([]byte, error) {
	lib, fs := engine.LoadPaths(dir)
	if lib == nil || fs.HasErrors() {
		return nil, fmt.Errorf("the tables in %s: %v", dir, fs)
	}
	set := lib.TableSet(s.Name)
	if set == nil {
		return nil, fmt.Errorf("no TableSet %s in %s", s.Name, dir)
	}
	var body bytes.Buffer
	stubs := false
	timed := false
	for _, f := range set.Facts {
		switch {
		case f.Guard:
			continue
		case set.TimedOutWait(f.Name) != nil:
			timed = true
			fmt.Fprintf(&body, "\t// %s: the engine computes it from the wait that names it (timedOut).\n", f.Name)
		case f.Name == "found":
			fmt.Fprintf(&body, "\tr.Bool(\"found\", func(w *World) bool { return w.Object != nil })\n")
		case f.Name == "deleting":
			fmt.Fprintf(&body, "\tr.Bool(\"deleting\", func(w *World) bool { return w.Object != nil && !w.Object.DeletionTimestamp.IsZero() })\n")
		case f.Type == engine.FactBool:
			fmt.Fprintf(&body, "\tr.Bool(%q, func(w *World) bool { return false }) // to do: %s\n", f.Name, f.Description)
		default:
			fmt.Fprintf(&body, "\tr.Enum(%q, func(w *World) string { return %q }) // to do: %s\n", f.Name, f.Values[0].Name, f.Description)
		}
	}
	if timed {
		body.WriteString("\tr.WaitFields(func(w *World) engine.WaitFields {\n\t\tif w.Object == nil {\n\t\t\treturn reconciler.ObjectFields(nil, w.Now)\n\t\t}\n\t\treturn reconciler.ObjectFields(w.Object, w.Now)\n\t})\n")
	}
	seen := map[string]bool{}
	for _, t := range set.Tables {
		for _, row := range t.Rows {
			for _, g := range row.Guards {
				if !seen["guard:"+g] {
					seen["guard:"+g] = true
					fmt.Fprintf(&body, "\tr.Guard(%q, \"to do\", nil, func(w *World) bool { return false })\n", g)
				}
			}
			for _, a := range row.Do {
				if seen[a] {
					continue
				}
				seen[a] = true
				switch a {
				case "AddFinalizer":
					body.WriteString("\t// Pure: the kit's patch saves it, and runs no writing row before.\n")
					body.WriteString("\tr.Action(\"AddFinalizer\", \"Add the finalizer.\", reconciler.AddFinalizer(Finalizer, objectOf), engine.Pure())\n")
				case "RemoveFinalizer":
					body.WriteString("\tr.Action(\"RemoveFinalizer\", \"Remove the finalizer so Kubernetes deletes the object.\", reconciler.RemoveFinalizer(Finalizer, objectOf))\n")
				default:
					stubs = true
					fmt.Fprintf(&body, "\tr.Action(%q, \"to do\", func(_ context.Context, w *World) engine.Outcome {\n\t\treturn engine.Failf(\"action %s is not written yet\")\n\t})\n", a, a)
				}
			}
		}
	}
	for _, sf := range set.StatusFields {
		fmt.Fprintf(&body, "\tr.StatusField(%q, %q, func(w *World, v string) {}) // to do\n", sf.Name, sf.Description)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "package %s\n\nimport (\n", s.Package)
	if stubs {
		b.WriteString("\t\"context\"\n")
	}
	b.WriteString("\t\"time\"\n\n\t\"sigs.k8s.io/controller-runtime/pkg/client\"\n\n\t\"github.com/krtt-dev/krtt/engine\"\n\t\"github.com/krtt-dev/krtt/reconciler\"\n)\n\n")
	fmt.Fprintf(&b, `// World is one %[1]s's world as one reconcile observed it: what the
// facts read and the actions change.
type World struct {
	// Object is nil when the %[1]s is gone.
	Object *%[1]s
	Now    time.Time
	client client.Client
}

func objectOf(w *World) client.Object { return w.Object }

// Registry is the Go side of the %[2]s tables, by name: an observer per
// fact they declare, the actions their rows name. Generated by krtt create
// controller from the tables; yours from now on.
var Registry = engine.LazyRegistry(%[2]q, func(r *engine.Registry[*World]) {
%[3]s})
`, s.Kind, s.Name, body.String())
	return b.Bytes(), nil
}
