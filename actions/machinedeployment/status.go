package machinedeployment

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// registerStatus registers what every reconcile mirrors from the observed
// MachineSets and Machines.
func registerStatus(r *engine.Registry[*Scope]) {
	r.Mirror("replicaCounts", "status.replicas (every Machine, being deleted included), updatedReplicas (the current MachineSet's Machines not being deleted), readyReplicas, availableReplicas, unavailableReplicas, selector, and progressTime when the counts or the generation changed.", mirrorCounts)
	r.Mirror("availability", "Available is True when at least spec.replicas - maxUnavailable Machines are available; Paused says spec.paused unless a row says otherwise.", mirrorConditions)
}

func mirrorCounts(s *Scope) {
	st, t := &s.MD.Status, s.Totals()
	if s.Progressed {
		st.ProgressTime = &metav1.Time{Time: s.Now}
	}
	st.Replicas = int32(t.Total)
	st.UpdatedReplicas = 0
	if s.New != nil {
		st.UpdatedReplicas = int32(s.New.Live)
	}
	st.ReadyReplicas = int32(t.Ready)
	st.AvailableReplicas = int32(t.Available)
	st.UnavailableReplicas = int32(max(0, s.Replicas()-t.Available))
	st.Selector = labels.SelectorFromSet(s.MD.Spec.Selector.MatchLabels).String()
}

func setCondition(s *Scope, t string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(&s.MD.Status.Conditions, metav1.Condition{
		Type: t, Status: status, Reason: reason, Message: message, ObservedGeneration: s.MD.Generation,
	})
}

func mirrorConditions(s *Scope) {
	_, unavailable := s.Fenceposts()
	want, have := s.Replicas()-unavailable, s.Totals().Available
	if have >= want {
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionTrue, "MinimumReplicasAvailable", fmt.Sprintf("%d Machines available, at least %d wanted", have, want))
	} else {
		setCondition(s, clusterv1.AvailableCondition, metav1.ConditionFalse, "MinimumReplicasUnavailable", fmt.Sprintf("%d Machines available, at least %d wanted", have, want))
	}
	if s.MD.Spec.Paused {
		setCondition(s, clusterv1.PausedCondition, metav1.ConditionTrue, "RolloutPaused", "spec.paused holds rollouts; scaling still applies")
	} else {
		setCondition(s, clusterv1.PausedCondition, metav1.ConditionFalse, "NotPaused", "")
	}
}
