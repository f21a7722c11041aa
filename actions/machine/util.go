package machine

import (
	"sort"
	"strconv"
	"strings"

	"github.com/krtt-dev/krtt/actions/contract"
)

func isNoMatch(err error) bool { return contract.IsNoMatch(err) }

// annotationsWithPrefix lists the keys of the annotations that start with
// prefix, sorted, so messages are stable (Cluster API names lifecycle hooks
// by their full keys).
func annotationsWithPrefix(annotations map[string]string, prefix string) []string {
	var out []string
	for k := range annotations {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// fewNames joins at most n names and says how many more there are, as
// Cluster API's lists in condition messages do ("a, b, c, ... (2 more)").
func fewNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + ", ... (" + strconv.Itoa(len(names)-n) + " more)"
}
