@workload
Feature: Workload cluster outages and the waits they interrupt
  While a Cluster's workload cluster cannot be used, the Node side of its Machines is unseen: no unseen
  Node is taken for a deleted one, and no health or creation timeout fires. The deletion steps that touch
  the Node are held, but their own timeouts run as Cluster API's do, from the step's start, and skip the
  step when they pass; a Machine that has no nodeRef skips the steps that need its Node, as Cluster API's
  does when its last Node lookup fails, and looks for the Node once more within its Node deletion timeout. A Running Machine keeps its Node conditions for 5 minutes before they turn
  Unknown. When the cluster is back, the Cluster records since when (status.workloadClusterReconnectTime)
  and every Node-side wait gets its full timeout again from then, as the machine-controller-manager
  restarts its health timeouts once the target API server returns.

  @serial @row:cluster-status:K06 @row:machine-workload-cluster:W01 @row:machine-workload-cluster:W10
  @row:machine-errors:E20 @row:machine-errors:E06
  Scenario: Timeouts that ran out while the workload cluster was unreachable restart when it is back
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And a running Machine "m2"
    And the Machine "m2" has a drain timeout of 900 seconds
    And a kubelet runs on the Node of "m2"
    And Pod "p1" runs on the Node of "m2"
    And a PodDisruptionBudget blocks Pod "p1"
    When the Node of "m1" reports "Ready" as "False" because "KubeletNotReady: PLEG is not healthy"
    Then the Machine "m1" reaches phase "Unknown"
    When I delete the Machine "m2"
    Then the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "ConnectionDown"
    And the Machine "m2" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    # The health timeout of m1 (600 s) runs out during the outage and does not fail it; the drain timeout
    # of m2 (900 s) has not run out when the cluster comes back, and restarts from then.
    When the health timeout of "m1" has passed
    And the workload cluster's API server starts again
    Then the Cluster "c1" records when its workload cluster came back
    And the Machine "m1" has condition "NodeHealthy" with status "False" and reason "NodeNotHealthy"
    And the Machine "m1" is in phase "Unknown"
    And the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    And Pod "p1" is still running
    # 600 s after the cluster came back m2's drain has run for more than 900 s, but only 600 s of them
    # since the cluster came back.
    When the health timeout of "m1" has passed since its workload cluster came back
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "UnhealthyNode"
    And the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    When the drain timeout of "m2" has passed since its workload cluster came back
    Then row "E06" fired for "m2"
    And the Machine "m2" is gone

  @serial @row:machine-workload-cluster:W10 @row:machine-workload-cluster:W06 @row:machine-workload-cluster:W07
  @row:machine-workload-cluster:W11 @row:machine-workload-cluster:W08 @row:machine-workload-cluster:W12
  @row:machine-workload-cluster:W09
  Scenario: The Node-side timeouts of a deletion end it while the workload cluster stays unreachable
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And the Machine "m1" has a drain timeout of 15 seconds
    And the Machine "m1" has a volume detach timeout of 15 seconds
    And the Machine "m1" has a Node deletion timeout of 15 seconds
    And a kubelet runs on the Node of "m1"
    And Pod "p1" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "p1"
    And a running Machine "m2"
    And the Machine "m2" has a drain timeout of 15 seconds
    And the Machine "m2" forces its deletion when the drain times out
    And the Machine "m2" has a Node deletion timeout of 15 seconds
    And a kubelet runs on the Node of "m2"
    And Pod "p2" runs on the Node of "m2"
    And a PodDisruptionBudget blocks Pod "p2"
    When I delete the Machine "m1"
    And I delete the Machine "m2"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    And the Machine "m2" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And the Machine "m2" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And row "W10" fired for "m1"
    # The operator wakes each Machine at the deadline of the step it holds; nothing touches them.
    # m2 is gone once its drain timeout has passed (its Node deletion timeout has passed by then), so its
    # step goes first; m1's then advances the clock only if m1's drain started later.
    When the drain timeout of "m2" has passed
    And the drain timeout of "m1" has passed
    Then row "W06" fired for "m1" saying "Node drain timed out while the workload cluster could not be used"
    And a Warning Event of the Machine "m1" says "Node drain timed out while the workload cluster could not be used"
    And row "W07" fired for "m2" saying "no Pod or VolumeAttachment was deleted"
    And row "W11" fired for "m1"
    When the volume detach timeout of "m1" has passed
    Then row "W08" fired for "m1" saying "volume detach timed out while the workload cluster could not be used"
    And row "W12" fired for "m1"
    And row "W09" fired for "m1" saying "Node deletion timed out while the workload cluster could not be used"
    And a Warning Event of the Machine "m1" says "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m1" is gone
    And the infrastructure object of "m1" is gone
    And row "W09" fired for "m2" saying "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m2" is gone
    When the workload cluster's API server starts again
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"

  @serial @row:machine-deletion:D22 @row:machine-workload-cluster:W10
  Scenario: The forced deletion's 5 minutes of an unhealthy Node restart when the workload cluster is back
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Node of "m1" reports Ready=False
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    When the workload cluster's API server stops
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    When 6 minutes pass for "m1"
    And the workload cluster's API server starts again
    Then the Cluster "c1" records when its workload cluster came back
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "violate the pod's disruption budget"
    And Pod "db" is still running
    When the forced deletion timeout of "m1" has passed since its workload cluster came back
    Then an Event of the Machine "m1" tells row "D22" with reason "ForceDeletionNodeUnhealthy"
    And the Machine "m1" is gone
    And Pod "db" is gone

  # A Node deletion timeout of 0 retries the Node deletion for as long as it takes, so the lookup waits too.
  @serial @row:machine-workload-cluster:W04 @row:machine-workload-cluster:W12 @row:machine-deletion-checks:C05
  Scenario: The last Node lookup of a Machine being deleted waits for its workload cluster
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a Machine "m1" given the bootstrap data secret "m1-data" directly
    And the Machine "m1" has a Node deletion timeout of 0 seconds
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

  @serial @row:machine-deletion:D01 @row:machine-deletion:D03 @row:machine-deletion:D04
  @row:machine-workload-cluster:W10 @row:machine-workload-cluster:W06 @row:machine-workload-cluster:W11
  @row:machine-workload-cluster:W08 @row:machine-workload-cluster:W12 @row:machine-workload-cluster:W09
  Scenario: A deletion that starts while the workload cluster is dark waits for its hooks, then its drain timeout runs
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And the Machine "m1" has a drain timeout of 15 seconds
    And the Machine "m1" has a volume detach timeout of 15 seconds
    And the Machine "m1" has a Node deletion timeout of 15 seconds
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup"
    When the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    # Nothing before the drain reaches the Node side: the hooks are waited for as with a reachable cluster.
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup" is removed from the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And row "W10" fired for "m1"
    When the drain timeout of "m1" has passed
    Then row "W06" fired for "m1" saying "Node drain timed out while the workload cluster could not be used"
    When the volume detach timeout of "m1" has passed
    Then row "W08" fired for "m1" saying "volume detach timed out while the workload cluster could not be used"
    And row "W09" fired for "m1" saying "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m1" is gone
    And row "W03" never fired for "m1"
    When the workload cluster's API server starts again
    Then the Node of "m1" exists

  @serial @row:machine-workload-cluster:W03 @row:machine-workload-cluster:W04 @row:machine-workload-cluster:W12
  @row:machine-workload-cluster:W09
  Scenario: A Machine without a nodeRef deleted while its workload cluster is dark skips its Node steps and gives its Node up at the Node deletion timeout
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has a Node deletion timeout of 60 seconds
    When the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    Then the Machine "m1" reaches phase "Provisioned"
    When the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    When I delete the Machine "m1"
    Then row "W03" fired for "m1" saying "is unreachable"
    And a Warning Event of the Machine "m1" says "its Node cannot be looked up"
    And the infrastructure object of "m1" is gone
    And row "W04" fired for "m1"
    And the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And the Machine "m1" has the krtt finalizer
    When the Node deletion timeout of "m1" has passed
    Then row "W09" fired for "m1" saying "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m1" is gone
    When the workload cluster's API server starts again
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"

  @serial @row:machine-workload-cluster:W13 @row:machine-deletion:D09 @row:machine-workload-cluster:W12
  @row:machine-workload-cluster:W09
  Scenario: The drain and volume wait a Machine excludes by annotation are skipped while its workload cluster is dark
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And the Machine "m1" has a Node deletion timeout of 15 seconds
    And the Machine "m1" has annotation "machine.cluster.krtt.dev/exclude-node-draining"
    And the Machine "m1" has annotation "machine.cluster.krtt.dev/exclude-wait-for-node-volume-detach"
    When the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    When I delete the Machine "m1"
    Then row "W13" fired for "m1"
    And row "D09" fired for "m1"
    And the infrastructure object of "m1" is gone
    And row "W12" fired for "m1"
    When the Node deletion timeout of "m1" has passed
    Then row "W09" fired for "m1" saying "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m1" is gone
    And row "W10" never fired for "m1"
    And row "W11" never fired for "m1"
    When the workload cluster's API server starts again
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"

  @serial @row:machine-workload-cluster:W10 @row:machine-deletion-checks:C23
  Scenario: A held drain ends when the infrastructure object is being deleted while the workload cluster is dark
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And the Machine "m1" has a Node deletion timeout of 15 seconds
    When the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForWorkloadCluster" and message containing "is unreachable"
    And row "W10" fired for "m1"
    # Cluster API skips the drain and the volume wait of a Machine whose infrastructure object is being
    # deleted or gone before its drain reaches the workload cluster.
    When the infrastructure object of "m1" is being deleted
    Then row "C23" fired for "m1" saying "the infrastructure object is being deleted"
    When the infrastructure object of "m1" is released
    Then row "W12" fired for "m1"
    When the Node deletion timeout of "m1" has passed
    Then row "W09" fired for "m1" saying "Node deletion timed out while the workload cluster could not be used"
    And the Machine "m1" is gone
    And row "W11" never fired for "m1"
    When the workload cluster's API server starts again
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"

  @serial @row:machine-deletion-checks:C02 @row:machine-deletion-checks:C12
  Scenario: A Machine without a providerID is deleted while its workload cluster is dark, as it would be otherwise
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has a Node deletion timeout of 0 seconds
    When the workload cluster's API server stops
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "does not answer"
    # With neither a nodeRef nor a providerID there is no Node to look up, so nothing waits for the cluster.
    When I delete the Machine "m1"
    Then row "C02" fired for "m1" saying "the Machine has no Node"
    And the Machine "m1" is gone
    And row "W03" never fired for "m1"
    When the workload cluster's API server starts again
    Then the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected" and message containing "connected to"
