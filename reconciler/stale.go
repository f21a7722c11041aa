package reconciler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// Cluster API calls a Machine's deletion stale past 15 minutes, and a drain
// past 5 long enough to name what holds it.
const (
	StaleDeletion = 15 * time.Minute
	StaleDrain    = 5 * time.Minute
)

// drainHolds are what a drain's Deleting message says about a Pod, each
// with the cause a summary names, in Cluster API's order.
var drainHolds = []struct{ says, cause string }{
	{"cannot evict pod as it would violate the pod's disruption budget.", "PodDisruptionBudgets"},
	{"deletionTimestamp set, but still not removed from the Node", "Pods not terminating"},
	{"failed to evict Pod", "Pod eviction errors"},
	{"waiting for completion", "Pods not completed yet"},
}

// DrainDelays names what likely holds the deletion of m at now, as Cluster
// API's summaries do: nothing unless the deletion is stale and its drain
// has run past StaleDrain; then the causes its Deleting message shows.
func DrainDelays(m *clusterv1.Machine, now time.Time) []string {
	c := meta.FindStatusCondition(m.Status.Conditions, clusterv1.DeletingCondition)
	if m.DeletionTimestamp.IsZero() || now.Sub(m.DeletionTimestamp.Time) <= StaleDeletion ||
		c == nil || c.Status != metav1.ConditionTrue || c.Reason != clusterv1.DeletingDrainingNodeReason ||
		m.Status.Deletion.NodeDrainStartTime.IsZero() || now.Sub(m.Status.Deletion.NodeDrainStartTime.Time) <= StaleDrain {
		return nil
	}
	var out []string
	for _, h := range drainHolds {
		if strings.Contains(c.Message, h.says) {
			out = append(out, h.cause)
		}
	}
	return out
}

// StaleMachines is Cluster API's aggregateStaleMachines: the Machines of ms
// in deletion for more than StaleDeletion (three names, then how many
// more), and what likely delays them; "" when none is.
func StaleMachines(ms []*clusterv1.Machine, now time.Time) string {
	var names, causes []string
	for _, m := range ms {
		if m.DeletionTimestamp.IsZero() || now.Sub(m.DeletionTimestamp.Time) <= StaleDeletion {
			continue
		}
		names = append(names, m.Name)
		for _, c := range DrainDelays(m, now) {
			if !slices.Contains(causes, c) {
				causes = append(causes, c)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	verb, noun := "is", "Machine"
	if len(names) > 1 {
		verb, noun = "are", "Machines"
	}
	list := names
	if len(names) > 3 {
		list = append(slices.Clip(names[:3]), fmt.Sprintf("... (%d more)", len(names)-3))
	}
	msg := fmt.Sprintf("%s %s %s in deletion since more than 15m", noun, strings.Join(list, ", "), verb)
	if len(causes) > 0 {
		slices.SortFunc(causes, func(a, b string) int { return holdOrder(a) - holdOrder(b) })
		msg += ", delay likely due to " + strings.Join(causes, ", ")
	}
	return msg
}

func holdOrder(cause string) int {
	return slices.IndexFunc(drainHolds, func(h struct{ says, cause string }) bool { return h.cause == cause })
}
