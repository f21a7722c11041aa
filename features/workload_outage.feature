@workload
Feature: Workload cluster outages and the waits they interrupt
  While a Cluster's workload cluster cannot be used, the Node side of its Machines is unseen: no Node-side
  timeout fires, and nothing is skipped on a Node that cannot be looked up. When the cluster is back, the
  Cluster records since when (status.workloadClusterReconnectTime) and every Node-side wait gets its full
  timeout again from then, as the machine-controller-manager restarts its health timeouts once the target
  API server returns.

  @serial @row:cluster-status:K06 @row:machine-workload-cluster:W01 @row:machine-workload-cluster:W03
  @row:machine-errors:E20 @row:machine-errors:E06
  Scenario: Timeouts that ran out while the workload cluster was unreachable restart when it is back
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And a running Machine "m2"
    And the Machine "m2" has a drain timeout of 60 seconds
    And a kubelet runs on the Node of "m2"
    And Pod "p1" runs on the Node of "m2"
    And a PodDisruptionBudget blocks Pod "p1"
    When the Node of "m1" reports "Ready" as "False" because "KubeletNotReady: PLEG is not healthy"
    Then the Machine "m1" reaches phase "Unknown"
    When I delete the Machine "m2"
    Then the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "PodDisruptionBudget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "WorkloadClusterUnreachable"
    And the Machine "m2" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    When the health timeout of "m1" has passed
    And the drain timeout of "m2" has passed
    And the workload cluster's API server starts again
    Then the Cluster "c1" records when its workload cluster came back
    And the Machine "m1" has condition "NodeHealthy" with status "False" and reason "NodeNotReady"
    And the Machine "m1" is in phase "Unknown"
    And the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "PodDisruptionBudget"
    And Pod "p1" is still running
    # The drain timeout of m2 (60 s) is shorter than the health timeout of m1, so it runs out first: moving the
    # clock past m1's timeout first would also end m2's drain before the step that checks it.
    When the drain timeout of "m2" has passed since its workload cluster came back
    Then row "E06" fired for "m2"
    And the Machine "m2" is gone
    When the health timeout of "m1" has passed since its workload cluster came back
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "UnhealthyNode"

  @serial @row:machine-deletion:D22 @row:machine-workload-cluster:W03
  Scenario: The forced deletion's 5 minutes of an unhealthy Node restart when the workload cluster is back
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Node of "m1" reports Ready=False
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "PodDisruptionBudget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    When 6 minutes pass for "m1"
    And the workload cluster's API server starts again
    Then the Cluster "c1" records when its workload cluster came back
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "PodDisruptionBudget"
    And Pod "db" is still running
    When the forced deletion timeout of "m1" has passed since its workload cluster came back
    Then an Event of the Machine "m1" tells row "D22" with reason "ForceDeletionNodeUnhealthy"
    And the Machine "m1" is gone
    And Pod "db" is gone

  @serial @row:machine-workload-cluster:W04 @row:machine-deletion-checks:C05
  Scenario: The last Node lookup of a Machine being deleted waits for its workload cluster
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a Machine "m1" given the bootstrap data secret "m1-data" directly
    And the infrastructure of "m1" is provisioned
    And the Machine "m1" reaches phase "Provisioned"
    And the Machine "m1" is paused
    And the status of "m1" names the state "WaitingForBootstrapDeletion"
    And a Node joins for "m1" in the workload cluster
    When I delete the Machine "m1"
    And the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    When the Machine "m1" is no longer paused
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And the Machine "m1" has the krtt finalizer
    When the workload cluster's API server starts again
    Then row "C05" fired for "m1"
    And the Machine "m1" is gone
    And the Node of "m1" is gone
