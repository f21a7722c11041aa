package machine

import (
	"context"
	"fmt"

	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
	"github.com/krtt-dev/krtt/engine"
)

// explainNodeSkip names the objects behind a deletion that leaves the Node
// alone because no control-plane Machine is left (rows C04, C06, C14, C16:
// Cluster API's isDeleteNodeAllowed, errNoControlPlaneNodes). The facts
// only say that it is so; a person reading the Machine needs to know which
// Cluster and control plane, or the skipped drain looks like a bug.
func explainNodeSkip(_ context.Context, s *Scope) engine.Outcome {
	cluster := s.Machine.Spec.ClusterName
	who := fmt.Sprintf("the Cluster %s has no control-plane Machine left", cluster)
	if hasKey(s.Machine.Labels, clusterv1.ControlPlaneLabel) {
		who = fmt.Sprintf("the Machine %s is the last control-plane Machine of the Cluster %s", s.Machine.Name, cluster)
	}
	var cp string
	switch ref := controlPlaneRef(s); {
	case ref == nil:
		cp = "it names no control plane object (spec.controlPlaneRef)"
	case s.ControlPlane == nil:
		cp = fmt.Sprintf("its control plane %s/%s does not exist", ref.Kind, ref.Name)
	default:
		cp = fmt.Sprintf("its control plane %s/%s is not externally managed", ref.Kind, ref.Name)
	}
	return engine.OKf("%s and %s: the Node and its Pods are left alone, as Cluster API does", who, cp)
}

// describeMissingCluster names the Cluster a Machine waits for (row N05):
// a typo in spec.clusterName is the usual cause.
func describeMissingCluster(_ context.Context, s *Scope) engine.Outcome {
	return engine.OKf("The Cluster %s named in spec.clusterName does not exist in namespace %s; the Machine waits for it",
		s.Machine.Spec.ClusterName, s.Machine.Namespace)
}

func controlPlaneRef(s *Scope) *clusterv1.ObjectReference {
	if s.Cluster == nil {
		return nil
	}
	return s.Cluster.Spec.ControlPlaneRef
}
