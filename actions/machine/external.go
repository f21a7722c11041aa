package machine

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/krtt-dev/krtt/actions/contract"
	clusterv1 "github.com/krtt-dev/krtt/api/v1alpha1"
)

// This file reads bootstrap and infrastructure objects by the Cluster API
// provider contract only (v1beta2 fields first, v1beta1 `status.ready` as a
// fallback), so any provider that follows it works without krtt knowing its
// Go types.

func nestedBool(u *unstructured.Unstructured, fields ...string) (bool, bool) {
	if u == nil {
		return false, false
	}
	v, found, err := unstructured.NestedBool(u.Object, fields...)
	return v, found && err == nil
}

func nestedString(u *unstructured.Unstructured, fields ...string) string {
	if u == nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(u.Object, fields...)
	return v
}

// BootstrapDataSecretCreated reports whether a bootstrap object says its data
// secret exists: status.initialization.dataSecretCreated (v1beta2) or
// status.ready (v1beta1).
func BootstrapDataSecretCreated(u *unstructured.Unstructured) bool {
	if v, ok := nestedBool(u, "status", "initialization", "dataSecretCreated"); ok {
		return v
	}
	v, _ := nestedBool(u, "status", "ready")
	return v
}

// BootstrapDataSecretName returns status.dataSecretName.
func BootstrapDataSecretName(u *unstructured.Unstructured) string {
	return nestedString(u, "status", "dataSecretName")
}

// InfrastructureProviderID returns spec.providerID.
func InfrastructureProviderID(u *unstructured.Unstructured) string {
	return nestedString(u, "spec", "providerID")
}

// InfrastructureFailureDomain returns spec.failureDomain, else status.failureDomain.
func InfrastructureFailureDomain(u *unstructured.Unstructured) string {
	if fd := nestedString(u, "spec", "failureDomain"); fd != "" {
		return fd
	}
	return nestedString(u, "status", "failureDomain")
}

// InfrastructureAddresses returns status.addresses.
func InfrastructureAddresses(u *unstructured.Unstructured) []clusterv1.MachineAddress {
	var out []clusterv1.MachineAddress
	for _, m := range contract.Entries(u, "status", "addresses") {
		t, _ := m["type"].(string)
		a, _ := m["address"].(string)
		if t != "" && a != "" {
			out = append(out, clusterv1.MachineAddress{Type: clusterv1.MachineAddressType(t), Address: a})
		}
	}
	return out
}

// ProviderFailure returns what a provider object reports in the v1beta1
// contract's status.failureReason and status.failureMessage: empty when
// neither is set.
func ProviderFailure(u *unstructured.Unstructured) string {
	reason, msg := nestedString(u, "status", "failureReason"), nestedString(u, "status", "failureMessage")
	switch {
	case reason == "" && msg == "":
		return ""
	case msg == "":
		return reason
	case reason == "":
		return msg
	}
	return reason + ": " + msg
}
