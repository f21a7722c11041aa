package machine

import (
	"sort"
	"strconv"
	"strings"

	"github.com/krtt-dev/krtt/actions/contract"
)

func isNoMatch(err error) bool { return contract.IsNoMatch(err) }

// annotationsWithPrefix lists the suffixes of annotations that start with
// prefix, sorted, so messages are stable.
func annotationsWithPrefix(annotations map[string]string, prefix string) []string {
	var out []string
	for k := range annotations {
		if strings.HasPrefix(k, prefix) {
			out = append(out, strings.TrimPrefix(k, prefix))
		}
	}
	sort.Strings(out)
	return out
}

// fewNames joins at most n names and says how many more there are.
func fewNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + ", and " + strconv.Itoa(len(names)-n) + " more"
}
