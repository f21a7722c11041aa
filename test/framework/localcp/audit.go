package localcp

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// AuditLogName is the audit log's file in the logs directory.
const AuditLogName = "audit.log"

// auditPolicy logs every write to the objects a Machine's deletion touches,
// with the object as the API server answered it (its resourceVersion is the
// write's etcd revision), and evictions with their answer (201, or 429 when
// a PodDisruptionBudget refused). Secrets at Metadata: their data is none
// of the log's business. Reads and everything else are not logged.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  verbs: [get, list, watch]
- level: Metadata
  resources: [{group: "", resources: [secrets]}]
- level: RequestResponse
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - {group: cluster.krtt.dev}
  - {group: sim.krtt.dev}
  - {group: "", resources: [nodes, nodes/status, pods, pods/status, pods/eviction]}
  - {group: policy, resources: [poddisruptionbudgets, poddisruptionbudgets/status]}
  - {group: storage.k8s.io, resources: [volumeattachments, volumeattachments/status]}
  - {group: events.k8s.io, resources: [events]}
  - {group: "", resources: [events]}
- level: None
`

// configureAudit makes kube-apiserver write its audit log to
// dir/logs/audit.log, one JSON event a line. The log survives restarts
// (kube-apiserver appends to it) and is never rotated: its size limit is
// far beyond any run, so a reader of the file sees every write.
func configureAudit(api *envtest.APIServer, dir string) (string, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "logs", AuditLogName)
	args := api.Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", path)
	args.Set("audit-log-format", "json")
	args.Set("audit-log-mode", "blocking")
	args.Set("audit-log-maxsize", "1000000")
	args.Set("audit-log-maxbackup", "0")
	args.Set("audit-log-maxage", "0")
	return path, nil
}
