package controller

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"
)

// NodeSync selects Machine labels and annotations the Machine controller
// copies onto the Machine's Node besides those of the domains it always
// copies: a key that matches any of the expressions (Cluster API's
// --additional-sync-machine-labels and --additional-sync-machine-annotations).
type NodeSync struct {
	Labels, Annotations []*regexp.Regexp
}

// CompileNodeSync compiles the expressions of the two flags, naming every
// one that is not a regular expression, with its flag.
func CompileNodeSync(labels, annotations []string) (NodeSync, error) {
	var errs []error
	compile := func(flag string, exprs []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, e := range exprs {
			re, err := regexp.Compile(e)
			if err != nil {
				errs = append(errs, fmt.Errorf("--%s %q is not a regular expression: %w", flag, e, err))
				continue
			}
			out = append(out, re)
		}
		return out
	}
	s := NodeSync{Labels: compile(SyncLabelsFlag, labels), Annotations: compile(SyncAnnotationsFlag, annotations)}
	return s, errors.Join(errs...)
}

// The operator's flags for NodeSync, named as Cluster API's.
const (
	SyncLabelsFlag      = "additional-sync-machine-labels"
	SyncAnnotationsFlag = "additional-sync-machine-annotations"
)

// Matches reports whether key matches one of exprs.
func Matches(exprs []*regexp.Regexp, key string) bool {
	for _, re := range exprs {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// BindNodeSyncFlags defines the two flags on fs, with the words both
// binaries show; the function it returns compiles what they were given.
func BindNodeSyncFlags(fs *flag.FlagSet) func() (NodeSync, error) {
	var labels, annotations listFlag
	fs.Var(&labels, SyncLabelsFlag,
		"Regular expressions (comma-separated, or the flag repeated) selecting Machine labels to copy to the Machine's Node besides node-role.kubernetes.io, node-restriction.kubernetes.io and node.cluster.krtt.dev: a label key that matches any of them is synced.")
	fs.Var(&annotations, SyncAnnotationsFlag,
		"Regular expressions (comma-separated, or the flag repeated) selecting Machine annotations to copy to the Machine's Node besides node.cluster.krtt.dev: an annotation key that matches any of them is synced.")
	return func() (NodeSync, error) { return CompileNodeSync(labels, annotations) }
}

// listFlag is a flag given as a comma-separated list, or repeated, as the
// string-slice flags of Cluster API's manager are: a value with a comma in it
// is quoted ("a{1,3}").
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	if v == "" {
		return nil
	}
	items, err := csv.NewReader(strings.NewReader(v)).Read()
	if err != nil {
		return err
	}
	*l = append(*l, items...)
	return nil
}
