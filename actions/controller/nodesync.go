package controller

import (
	"errors"
	"fmt"
	"regexp"
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
