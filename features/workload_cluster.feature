@workload
Feature: Workload clusters
  The Nodes, Pods, budgets and volumes of a Cluster live in the cluster its Secret <cluster>-kubeconfig
  (key value) names; without that Secret, in the management cluster itself (when the operator serves
  self-hosted Clusters, as the harness does unless a scenario restarts it without). The operator keeps one
  connection per Cluster, probes it, and holds every Node-side step while the workload cluster cannot
  be used, saying why, until the step's own timeout; it never takes an unseen Node for a deleted one.

  @row:cluster-status:K02 @row:cluster-status:K01
  Scenario: A Machine of a remote Cluster runs and is deleted with a drain in the workload cluster
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    Then the Machine "m1" references its Node
    And the Node of "m1" is not in the management cluster
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to https://127.0.0.1"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded"
    And the Cluster "c1" counts 1 Machine, 1 Ready
    And the Cluster "c1" has condition "MachinesReady" with status "True" and reason "MachinesReady" and message containing "All 1 Machines are Ready"
    Given a kubelet runs on the Node of "m1"
    And Pod "p1" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then Pod "p1" is evicted
    And the Machine "m1" is gone
    And the Node of "m1" is gone
    And the Cluster "c1" counts 0 Machines, 0 Ready
    When the Cluster "c1" is deleted
    Then row "K01" fired for "c1"

  @serial @row:machine-workload-cluster:W05 @row:machine-workload-cluster:W01 @row:machine-workload-cluster:W10 @row:cluster-status:K04
  Scenario: The workload API server stops during a drain: the Machine waits, says so, and resumes
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And a running Machine "m2"
    And a kubelet runs on the Node of "m1"
    And Pod "p1" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "p1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message containing "Remote connection probe failed, probe last succeeded at 20"
    # A Running Machine keeps its Node conditions as last seen for 5 minutes (Cluster API's
    # remoteConditionsGracePeriod), then they turn Unknown: the operator wakes it at the end of the 5 minutes.
    And row "W05" fired for "m2"
    And the Machine "m2" has condition "NodeHealthy" with status "True" and reason "NodeHealthy"
    And the Machine "m2" has condition "NodeReady" with status "True" and reason "NodeReady"
    When 5 minutes pass for "m2"
    Then the Machine "m2" has condition "NodeHealthy" with status "Unknown" and reason "ConnectionDown"
    And the Machine "m2" has condition "NodeHealthy" with reason "ConnectionDown" and message containing "Last successful probe at 20"
    And the Machine "m2" has condition "NodeReady" with status "Unknown" and reason "ConnectionDown"
    And the Machine "m2" reaches phase "Running"
    And the infrastructure object of "m1" exists
    And the Machine "m1" has the krtt finalizer
    When the workload cluster's API server starts again
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    And the Machine "m2" has condition "NodeHealthy" with status "True" and reason "NodeHealthy"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"
    And Pod "p1" is still running
    When the PodDisruptionBudget of Pod "p1" allows disruption
    Then Pod "p1" is evicted
    And the Machine "m1" is gone
    And the Node of "m1" is gone

  # m1 has a providerID but no nodeRef (its Node joined while the workload cluster refused access): its
  # deletion skips the drain, as Cluster API's does when its last Node lookup fails, and waits in the Node
  # deletion for the lookup; a Node deletion timeout of 0 waits for as long as it takes.
  @row:machine-workload-cluster:W02 @row:machine-workload-cluster:W03 @row:cluster-status:K25 @row:cluster-status:K05
  @row:machine-workload-cluster:W04 @row:machine-workload-cluster:W12 @row:machine-deletion-checks:C05
  Scenario: A kubeconfig Secret whose credentials the workload cluster refuses
    Given a Cluster "c1" whose kubeconfig Secret has credentials the workload cluster refuses
    # The first refusal is not yet a failed probe: the operator tries again (Cluster API counts 5 attempts,
    # the harness 2) before RemoteConnectionProbe says it failed.
    Then row "K25" fired for "c1" saying "refused the credentials of Secret"
    And a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has a Node deletion timeout of 0 seconds
    When the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And a Node joins for "m1" in the workload cluster
    Then the Machine "m1" has condition "NodeHealthy" with reason "ConnectionDown" and message containing "refused the credentials of Secret"
    And the Machine "m1" has condition "NodeReady" with reason "ConnectionDown" and message containing "Remote connection not established yet"
    And the Machine "m1" reaches phase "Provisioned"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "NoAccess" and message containing "refused the credentials of Secret"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message "Remote connection probe failed"
    And the Cluster "c1" has condition "MachinesReady" with status "False" and reason "MachinesNotReady" and message containing "1 of 1 Machines are not Ready: m1"
    When I delete the Machine "m1"
    Then row "W03" fired for "m1" saying "refuses access"
    And the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "refuses access"
    And row "W04" fired for "m1"
    And the Node of "m1" exists
    When the kubeconfig Secret of Cluster "c1" is fixed for the workload cluster
    Then row "C05" fired for "m1"
    And the Machine "m1" is gone
    And the Node of "m1" is gone

  @row:cluster-status:K24 @row:cluster-status:K04 @row:cluster-status:K06
  Scenario: A workload cluster that never answered is not established yet, then failed, until its Secret is fixed
    Given a Cluster "c1" whose kubeconfig Secret names an API server that does not answer
    # Cluster API's setRemoteConnectionProbeCondition: "Remote connection not established yet" until its
    # ClusterCache has tried often enough (the harness fails a connection after 2 attempts).
    Then row "K24" fired for "c1" saying "does not answer"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message "Remote connection probe failed"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "https://127.0.0.1:1 does not answer"
    When the kubeconfig Secret of Cluster "c1" is fixed for the workload cluster
    Then row "K06" fired for "c1"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "through Secret"

  @row:cluster-status:K03 @row:cluster-status:K02
  Scenario: A kubeconfig Secret created after the Machine is picked up without a restart
    Given a Cluster "c1"
    And a Machine "m1" with its bootstrap and infrastructure objects
    When the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And a Node joins for "m1" in the workload cluster
    Then the Machine "m1" has condition "NodeHealthy" with reason "InspectionFailed" and message containing "Waiting for a Node with spec.providerID sim://"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "SelfHosted" and message containing "the Node side is the management cluster"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded"
    When the kubeconfig Secret of Cluster "c1" is created for the workload cluster
    Then the Machine "m1" reaches phase "Running"
    And the Machine "m1" references its Node
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "through Secret"

  # Cluster API v1.14 setControlPlaneInitializedCondition: the object's status.initialization, kept once True;
  # setControlPlaneAvailableCondition: the object's Available condition, else whether it is initialized;
  # setAvailableCondition counts it; setControlPlaneReplicas: the object's counters, or without one the control-plane Machines.
  @row:cluster-status:K13 @row:cluster-status:K14
  Scenario: A Cluster naming a control plane object that does not exist says so until it exists, then mirrors its availability
    Given a Cluster "c1" whose controlPlaneRef names the SimControlPlane "cp" that does not exist
    Then the Cluster "c1" has condition "ControlPlaneAvailable" with status "False" and reason "ObjectDoesNotExist" and message containing "SimControlPlane does not exist"
    And a Warning Event of the Cluster "c1" with reason "ObjectDoesNotExist" says "SimControlPlane does not exist"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "SelfHosted" and message containing "the management cluster"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "Unknown" and reason "ObjectDoesNotExist" and message containing "SimControlPlane does not exist"
    When the SimControlPlane "cp" is created
    Then the Cluster "c1" has condition "ControlPlaneAvailable" with status "False" and reason "NotAvailable" and message containing "SimControlPlane status.initialization.controlPlaneInitialized is false"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "False" and reason "NotInitialized" and message containing "Control plane not yet initialized"
    And the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "* ControlPlaneAvailable: SimControlPlane status.initialization.controlPlaneInitialized is false"
    When the control plane provider reports the SimControlPlane "cp" initialized
    Then the Cluster "c1" has condition "ControlPlaneInitialized" with status "True" and reason "Initialized"
    And the Cluster "c1" has condition "ControlPlaneAvailable" with status "True" and reason "Available" and message containing ""
    When the control plane provider reports the SimControlPlane "cp" "Available" with status "False", reason "EtcdUnhealthy" and message "1 of 3 etcd members is unhealthy"
    Then the Cluster "c1" has condition "ControlPlaneAvailable" with status "False" and reason "EtcdUnhealthy" and message containing "1 of 3 etcd members is unhealthy"
    And the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "1 of 3 etcd members is unhealthy"
    When the control plane provider reports the SimControlPlane "cp" "Available" with status "True", reason "Available" and message ""
    Then the Cluster "c1" has condition "ControlPlaneAvailable" with status "True" and reason "Available" and message containing ""
    And the Cluster "c1" reports its control plane as "unset desired, unset current, unset ready, unset available and unset up-to-date"
    When someone deletes the SimControlPlane "cp"
    Then the Cluster "c1" has condition "ControlPlaneAvailable" with status "False" and reason "ObjectDeleted" and message containing "SimControlPlane has been deleted while the cluster still exists"
    And a Warning Event of the Cluster "c1" with reason "ObjectDeleted" says "SimControlPlane has been deleted while the cluster still exists"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "True" and reason "Initialized"
    When the controlPlaneRef of the Cluster "c1" is removed
    Then the Cluster "c1" has no condition "ControlPlaneAvailable"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "True" and reason "Initialized"
    When a running control-plane Machine "cp-0"
    Then the Cluster "c1" reports its control plane as "1 desired, 1 current, 1 ready, 1 available and unset up-to-date"
    And the operator logged no error about the scenario's objects

  @serial @row:machine-workload-cluster:W02 @row:cluster-status:K05 @row:cluster-status:K06
  Scenario: Without self-hosted Clusters a Cluster without a kubeconfig Secret says how to enable them
    Given the operator restarts without self-hosted Clusters
    And a Cluster "c1"
    And a Machine "m1" with its bootstrap and infrastructure objects
    When the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And a Node joins for "m1" in the workload cluster
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "NoAccess" and message containing "apply config/rbac-self-hosted and start the operator with --self-hosted-clusters"
    And the Machine "m1" has condition "NodeHealthy" with reason "ConnectionDown" and message containing "self-hosted Clusters are not enabled"
    And the Machine "m1" reaches phase "Provisioned"
    When the kubeconfig Secret of Cluster "c1" is created for the workload cluster
    Then the Machine "m1" reaches phase "Running"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "through Secret"
