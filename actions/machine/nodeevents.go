package machine

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// nodeChangedBeyondHeartbeat drops the Node updates that only renew the
// kubelet's heartbeat (conditions' lastHeartbeatTime, and with it the
// resourceVersion and managedFields): no fact reads them, yet every one
// woke the Node's Machine. A kubelet heartbeats each Node every few
// seconds to minutes for as long as it lives, so these wake-ups grew with
// fleet size times run length: at N = 5,000 they outnumbered every other
// reconcile. Any other change (a condition's status, reason or message,
// labels, annotations, spec, volumes, deletion) still wakes the Machine;
// waits that need time to pass requeue themselves (rows' requeueAfter).
func nodeChangedBeyondHeartbeat() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*corev1.Node)
			n, ok2 := e.ObjectNew.(*corev1.Node)
			if !ok1 || !ok2 {
				return true
			}
			return !onlyHeartbeat(o, n)
		},
	}
}

// onlyHeartbeat: o and n differ at most in metadata the observers never
// read (resourceVersion, managedFields, generation) and in the conditions'
// lastHeartbeatTime.
func onlyHeartbeat(o, n *corev1.Node) bool {
	om, nm := o.ObjectMeta, n.ObjectMeta
	om.ResourceVersion, nm.ResourceVersion = "", ""
	om.ManagedFields, nm.ManagedFields = nil, nil
	om.Generation, nm.Generation = 0, 0
	if !equality.Semantic.DeepEqual(om, nm) || !equality.Semantic.DeepEqual(o.Spec, n.Spec) {
		return false
	}
	os, ns := o.Status, n.Status
	os.Conditions, ns.Conditions = nil, nil
	if !equality.Semantic.DeepEqual(os, ns) || len(o.Status.Conditions) != len(n.Status.Conditions) {
		return false
	}
	for i := range o.Status.Conditions {
		oc, nc := o.Status.Conditions[i], n.Status.Conditions[i]
		oc.LastHeartbeatTime, nc.LastHeartbeatTime = metav1.Time{}, metav1.Time{}
		if !equality.Semantic.DeepEqual(oc, nc) {
			return false
		}
	}
	return true
}
