Feature: Deleting a Machine takes it apart in order
  As a platform engineer I delete a Machine and expect the operator to honour
  hooks, drain the Node politely, wait for volumes, and delete the
  infrastructure, the bootstrap object and the Node before letting it go.

  Background:
    Given a Cluster "c1"

  @row:machine-normal:N07 @row:machine-deletion:D01 @row:machine-deletion:D04 @row:machine-deletion:D05
  @row:machine-deletion:D08 @row:machine-deletion:D12 @row:machine-deletion:D13 @row:machine-deletion:D14
  @row:machine-deletion:D15 @row:machine-deletion:D16 @row:machine-deletion:D18 @row:machine-normal:N01
  Scenario: a Machine is drained, waits for its volumes, and takes its objects and Node with it
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And volume "vol-1" is attached to the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "db"
    And the Node of "m1" is cordoned
    And Pod "web" is evicted
    And Pod "db" is still running
    When the PodDisruptionBudget of Pod "db" allows disruption
    Then Pod "db" is evicted
    And the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach"
    When all volumes are detached from the Node of "m1"
    Then the Machine "m1" is gone
    And the infrastructure object of "m1" is gone
    And the bootstrap object of "m1" is gone
    And the Node of "m1" is gone
    And a Normal Event of the Machine "m1" with reason "SuccessfulDrainNode" says "success draining Machine's node"
    And a Normal Event of the Machine "m1" with reason "NodeVolumesDetached" says "success waiting for node volumes detaching Machine's node"
    And the Machine "m1" told only the Events "SuccessfulSetNodeRef, SuccessfulDrainNode, NodeVolumesDetached"

  @row:machine-normal:N31 @row:machine-deletion:D05 @row:machine-deletion:D08
  Scenario: a Machine created, run and deleted without trouble tells two Events, with Cluster API's reasons
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And a Normal Event of the Machine "m1" with reason "SuccessfulSetNodeRef" names its Node
    And the Machine "m1" told only the Events "SuccessfulSetNodeRef, SuccessfulDrainNode"

  # Cluster API v1.14 reconcileDelete: a drain that fails (here the API server refuses the cordon) is told
  # as a FailedDrainNode Warning and retried; the deletion goes on once the drain can be done.
  @row:machine-deletion:D05
  Scenario: a drain whose cordon the API server refuses tells FailedDrainNode and goes on once it is allowed
    Given a running Machine "m1"
    And an admission policy refuses to cordon the Node of "m1"
    When I delete the Machine "m1"
    Then a Warning Event of the Machine "m1" with reason "FailedDrainNode" says "do not allow cordoning"
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "Drain failed: cordon Node"
    And the Node of "m1" exists
    When the admission policy that refuses to cordon the Node of "m1" is removed
    Then the Machine "m1" is gone
    And the Node of "m1" is gone
    And a Normal Event of the Machine "m1" with reason "SuccessfulDrainNode" says "success draining Machine's node"

  Scenario Outline: a <point> hook holds the deletion until it is removed
    Given a running Machine "m1"
    And the Machine "m1" has annotation "<prefix>backup"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "<reason>" and message containing "backup"
    And the Node of "m1" exists
    And the infrastructure object of "m1" exists
    When the annotation "<prefix>backup" is removed from the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

    @row:machine-deletion:D03 @row:machine-deletion:D04
    Examples: before the drain
      | point     | prefix                                          | reason                 |
      | pre-drain | pre-drain.delete.hook.machine.cluster.krtt.dev/ | WaitingForPreDrainHook |

    @row:machine-deletion:D11 @row:machine-deletion:D12
    Examples: before the infrastructure goes
      | point         | prefix                                              | reason                     |
      | pre-terminate | pre-terminate.delete.hook.machine.cluster.krtt.dev/ | WaitingForPreTerminateHook |

  @serial
  @row:machine-deletion:D03
  Scenario: an operator restart while a hook holds the deletion changes nothing
    Given a running Machine "m1"
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook" and message containing "backup"
    When the operator restarts
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook" and message containing "backup"
    And the Node of "m1" exists
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-deletion:D06
  Scenario: the exclude-node-draining annotation skips the drain
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Machine "m1" has annotation "machine.cluster.krtt.dev/exclude-node-draining"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And Pod "db" is still running

  @row:machine-deletion:D09
  Scenario: the exclude-wait-for-node-volume-detach annotation skips the volume wait
    Given a running Machine "m1"
    And volume "vol-1" is attached to the Node of "m1"
    And the Machine "m1" has annotation "machine.cluster.krtt.dev/exclude-wait-for-node-volume-detach"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

  @row:machine-deletion:D07 @row:machine-deletion:D10 @row:machine-deletion:D16 @row:machine-deletion:D19
  Scenario: a Node that vanishes during deletion skips the drain, the volume wait and the Node deletion
    Given a running Machine "m1"
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/hold"
    And the Machine "m1" has finalizer "example.com/keep"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    When the Node of "m1" is deleted
    And the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/hold" is removed from the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DeletionCompleted" and message containing "Deletion completed"
    And the Machine "m1" recorded when its drain and its volume wait started
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-normal:N07 @row:machine-deletion-checks:C02 @row:machine-deletion:D13 @row:machine-deletion:D15
  @row:machine-deletion-checks:C12 @row:machine-normal:N01
  Scenario: a Machine that never got a Node is deleted without touching Nodes, then left to other finalizers
    Given a Machine "m1" with its bootstrap and infrastructure objects and the finalizer "example.com/keep"
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And the Machine "m1" reaches phase "Provisioned"
    When I delete the Machine "m1"
    Then the infrastructure object of "m1" is gone
    And the bootstrap object of "m1" is gone
    And the Machine "m1" has condition "Deleting" with reason "DeletionCompleted" and message containing "the Machine has no Node"
    And the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "NodeDoesNotExist"
    And the Machine "m1" has condition "InfrastructureReady" with reason "ObjectDeleted" and message containing "SimMachine has been deleted"
    And the Machine "m1" has condition "BootstrapConfigReady" with reason "ObjectDeleted" and message containing "SimBootstrapConfig has been deleted"
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-normal:N03
  Scenario: a Machine whose krtt finalizer is removed by hand during its deletion is left alone
    Given a running Machine "m1"
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/hold"
    And the Machine "m1" has finalizer "example.com/keep"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    When the finalizer "cluster.krtt.dev/machine" is removed from the Machine "m1"
    Then the last row of "m1" is "N03"
    And the Node of "m1" exists
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-normal:N07 @row:machine-deletion:D12
  Scenario Outline: deletion leaves the Node alone when <why>
    Given a running <kind> "m1"
    And <situation>
    When I delete the Machine "m1"
    Then row "<row>" fired for "m1" saying "<reason>"
    And the Machine "m1" is gone
    And the Node of "m1" exists
    And the infrastructure object of "m1" is gone

    @row:machine-deletion-checks:C03 @row:machine-deletion-checks:C13
    Examples: the control plane is going
      | why                                | kind    | situation                                         | row | reason                             |
      | the control plane is being deleted | Machine | the control plane of the Cluster is being deleted | C03 | the control plane is being deleted |

  @row:machine-normal:N07 @row:machine-deletion:D12
  Scenario Outline: deletion leaves the Node alone when <why>, and says so naming the objects
    Given a running <kind> "m1"
    And <situation>
    When I delete the Machine "m1"
    Then row "<row>" fired for "m1" saying "<reason>"
    And a Warning Event of the Machine "m1" says "<reason>"
    And a Warning Event of the Machine "m1" says "the Node and its Pods are left alone, as Cluster API does"
    And the Machine "m1" is gone
    And the Node of "m1" exists
    And the infrastructure object of "m1" is gone

    @row:machine-deletion-checks:C04 @row:machine-deletion-checks:C14
    Examples: the last control-plane Machine
      | why                                            | kind                  | situation                                                                                         | row | reason                                                                   |
      | it is the Cluster's last control-plane Machine | control-plane Machine | "m1" is the only control-plane Machine of the Cluster and the control plane is not externally managed | C04 | is the last control-plane Machine of the Cluster c1 and its control plane |

    @row:machine-deletion-checks:C06 @row:machine-deletion-checks:C16
    Examples: no control plane left for a worker
      | why                                                   | kind    | situation                                                                                      | row | reason                                                                  |
      | the Cluster has no control-plane Machine to keep it up | Machine | the Cluster has no control-plane Machine and the control plane is not externally managed | C06 | the Cluster c1 has no control-plane Machine left and its control plane |

  @row:machine-deletion:D18
  Scenario: an externally managed control plane lets the last control-plane Machine's Node be drained and deleted
    Given a running control-plane Machine "m1"
    And "m1" is the only control-plane Machine of the Cluster
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

  @row:machine-deletion-checks:C20 @row:machine-deletion:D05
  Scenario: a pre-drain hook added while draining holds the drain until it is removed
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "db"
    When the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/late"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook" and message containing "late"
    When the PodDisruptionBudget of Pod "db" allows disruption
    Then Pod "db" is still running
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/late" is removed from the Machine "m1"
    Then Pod "db" is evicted
    And the Machine "m1" is gone

  @row:machine-deletion:D11
  Scenario Outline: a pre-drain hook added after the drain holds the deletion where it is (<control plane>)
    Given a running Machine "m1"
    And <situation>
    And the Machine "m1" has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/keep"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreTerminateHook" and message containing "keep"
    When the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/late"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook" and message containing "late"
    And row "<row>" fired for "m1" saying "late"
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/late" is removed from the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreTerminateHook" and message containing "keep"
    And the infrastructure object of "m1" exists
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

    @row:machine-deletion-checks:C26
    Examples: an externally managed control plane
      | control plane      | situation                                      | row |
      | externally managed | the control plane of the Cluster is externally managed | C26 |

    @row:machine-deletion-checks:C25
    Examples: a control plane of Machines
      | control plane       | situation                                                                           | row |
      | control-plane Machines | a running control-plane Machine "cp1" of a control plane that is not externally managed | C25 |

  @row:machine-deletion-checks:C21 @row:machine-deletion:D13
  Scenario: a pre-terminate hook added before the infrastructure is deleted holds it
    Given a running Machine "m1"
    And the Machine "m1" is paused
    And the status of "m1" names the state "WaitingForInfrastructureDeletion"
    And the Machine "m1" has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/late"
    And the Machine "m1" has finalizer "example.com/keep"
    When I delete the Machine "m1"
    And the Machine "m1" is no longer paused
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreTerminateHook" and message containing "late"
    And the infrastructure object of "m1" exists
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/late" is removed from the Machine "m1"
    Then the infrastructure object of "m1" is gone
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-deletion-checks:C21 @row:machine-deletion:D13
  Scenario: a pre-terminate hook added while the infrastructure object is being deleted holds the deletion until it is removed
    Given a running Machine "m1"
    And the infrastructure provider holds the deletion of the infrastructure object of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForInfrastructureDeletion" and message containing "Waiting for SimMachine to be deleted"
    When the Machine "m1" has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/late"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreTerminateHook" and message containing "pre-terminate.delete.hook.machine.cluster.krtt.dev/late"
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/late" is removed from the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForInfrastructureDeletion" and message containing "Waiting for SimMachine to be deleted"
    When the infrastructure object of "m1" is released
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

  @row:machine-deletion-checks:C23
  Scenario: an infrastructure object deleted during the drain ends the drain
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "db"
    When the infrastructure object of "m1" is being deleted
    Then row "C23" fired for "m1" saying "the infrastructure object is being deleted"
    And Pod "db" is still running
    When the infrastructure object of "m1" is released
    Then the Machine "m1" is gone

  @row:machine-deletion-checks:C22
  Scenario: an infrastructure object gone during the volume wait ends the wait
    Given a running Machine "m1"
    And volume "vol-1" is attached to the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach"
    When the infrastructure object of "m1" is deleted
    Then row "C22" fired for "m1" saying "the infrastructure object is gone"
    And the Machine "m1" is gone

  @row:machine-deletion-checks:C05 @row:machine-deletion:D18
  Scenario: a Node that joined without a nodeRef is found by providerID and deleted with the Machine
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And the Machine "m1" reaches phase "Provisioned"
    And the Machine "m1" is paused
    And a Node joins for "m1"
    When I delete the Machine "m1"
    And the Machine "m1" is no longer paused
    Then row "C05" fired for "m1"
    And the Machine "m1" is gone
    And the Node of "m1" is gone

  @row:machine-deletion:D20 @row:machine-deletion-checks:C24 @row:pod-verdict:P03
  Scenario: a Machine whose Node is unreachable is deleted although its Pods never terminate
    Given a running Machine "m1"
    And Pod "web" runs on the Node of "m1"
    And Pod "db" runs on the Node of "m1"
    And volume "vol-1" is attached to the Node of "m1"
    And the Machine "m1" has finalizer "example.com/keep"
    When the Node of "m1" becomes unreachable
    And I delete the Machine "m1"
    Then Pod "web" is evicted
    And the Machine "m1" has condition "Deleting" with reason "DeletionCompleted" and message containing "Deletion completed"
    And the Machine "m1" recorded when its drain and its volume wait started
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-deletion:D18
  Scenario: control-plane Machines labelled with an empty value count as control plane
    Given a running control-plane Machine "m1"
    And a running control-plane Machine "m2"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone
    And the Node of "m2" exists
