@teardown
Feature: Cluster teardown
  A Cluster carries the finalizer cluster.krtt.dev/cluster. Deleted, it deletes its MachineDeployments,
  then its MachineSets and worker Machines, then its control-plane Machines, then its control plane object, and waits until they are gone: each Machine goes
  through its own deletion (hooks, drain and Node deletion in the workload cluster, whose connection
  stays open meanwhile). Only then does the Cluster go. Its Deleting condition and krtt explain cluster
  name what it waits on.

  @row:cluster-deletion:K07 @row:cluster-deletion:K08 @row:cluster-deletion:K09 @row:cluster-deletion:K10 @row:cluster-deletion:K17 @row:cluster-deletion:K11 @row:machineset-normal:S13
  Scenario: A Cluster with a MachineSet of 3, a lone worker and a control-plane Machine is torn down, workers first
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running control-plane Machine "cp"
    And a running Machine "lone"
    And a MachineSet "workers" of 3 Machines
    And the providers bring every Machine of "workers" to Running
    And a kubelet runs on the Node of "lone"
    And Pod "p1" runs on the Node of "lone"
    And a kubelet runs on the Node of "cp"
    And Pod "p2" runs on the Node of "cp"
    Then the Cluster "c1" has the krtt finalizer
    And the Cluster "c1" has condition "Deleting" with status "False" and reason "NotDeleting" and message containing ""
    And the MachineSet "workers" is owned by the Cluster "c1"
    When I delete the Cluster "c1"
    Then Pod "p1" is evicted
    And Pod "p2" is evicted
    And the Cluster "c1" is gone
    And every worker Machine of the Cluster was gone before a control-plane Machine was deleted
    And the control plane object of the Cluster "c1" was deleted once every Machine it waited for was gone
    And nothing of the Cluster "c1" is left

  # Cluster API v1.14 reconcileDelete: with spec.controlPlaneRef set, the Cluster neither deletes nor waits
  # for the control-plane Machines; it deletes the control plane object after the workers and waits for it.
  Scenario: A Cluster whose control plane object controls its control-plane Machines deletes that object after the workers, and does not wait for its Machines
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running control-plane Machine "cp" controlled by the control plane object
    And a running Machine "lone"
    When I delete the Cluster "c1"
    Then the Cluster "c1" is gone
    And the control plane object of the Cluster "c1" was deleted once every Machine it waited for was gone
    And the Machine "lone" is gone
    And the Machine "cp" is not being deleted

  @row:cluster-deletion:K09 @row:machinedeployment-normal:N09
  Scenario: A Cluster with a MachineDeployment of 2, a MachineSet of 1, a lone worker and a control-plane Machine deletes its workers in one pass, the control plane last
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running control-plane Machine "cp"
    And a running Machine "lone"
    And a MachineSet "workers" of 1 Machine
    And the providers bring every Machine of "workers" to Running
    And a MachineDeployment "md1" of 2 Machines
    And the providers bring every Machine of the deployment "md1" to Running as it comes
    And the MachineDeployment "md1" reports 2 replicas, 2 updated and 2 available
    And the MachineDeployment "md1" is owned by the Cluster "c1"
    When I delete the Cluster "c1"
    Then the Cluster "c1" is gone
    And the MachineDeployment "md1", its MachineSets and its Machines were gone before the Cluster "c1" went, which waited saying "* MachineDeployments: md1"
    And every worker Machine of the Cluster was gone before a control-plane Machine was deleted
    And nothing of the Cluster "c1" is left

  Scenario: A Cluster deleted while a pre-drain hook holds a worker waits for the hook and says so
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running control-plane Machine "cp"
    And a running Machine "lone"
    And the Machine "lone" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup"
    When I delete the Cluster "c1"
    Then the Machine "lone" has condition "Deleting" with reason "WaitingForPreDrainHook"
    And the Machine "lone" has condition "Ready" with reason "NotReady" and message containing "* Deleting: Machine deletion in progress, stage: WaitingForPreDrainHook"
    And the Cluster "c1" has condition "Deleting" with status "True" and reason "WaitingForWorkersDeletion" and message containing "* Control plane Machines: cp"
    And the Cluster "c1" has condition "Deleting" with status "True" and reason "WaitingForWorkersDeletion" and message containing "* Worker Machines: lone"
    And krtt explain cluster "c1" says "lone (WaitingForPreDrainHook)"
    And the Machine "cp" is not being deleted
    And the Node of "lone" exists
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup" is removed from the Machine "lone"
    Then the Cluster "c1" is gone
    And every worker Machine of the Cluster was gone before a control-plane Machine was deleted
    And nothing of the Cluster "c1" is left

  @row:cluster-deletion:K16
  Scenario: A paused Cluster holds its teardown until it is unpaused, as Cluster API does
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "lone"
    And the Cluster "c1" has the krtt finalizer
    When the Cluster "c1" is paused
    Then the Cluster "c1" has condition "Paused" with status "True" and reason "Paused" and message containing "Cluster spec.paused is set to true"
    When I delete the Cluster "c1"
    Then the Cluster "c1" holds its deletion while paused, its Machines untouched
    When the Cluster "c1" is unpaused
    Then the Cluster "c1" is gone
    And nothing of the Cluster "c1" is left

  @row:cluster-deletion:K26
  Scenario: A state the tables do not know restarts the teardown of a Cluster being deleted
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "lone"
    And the Cluster "c1" has the krtt finalizer
    And the Cluster "c1" is paused
    When I delete the Cluster "c1"
    And the status of the Cluster "c1" names the state "Active"
    And the Cluster "c1" is unpaused
    Then the Cluster "c1" is gone
    And nothing of the Cluster "c1" is left

  @row:cluster-deletion:K27
  Scenario: A state the tables do not know restarts a live Cluster from Pending
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And the Cluster "c1" is in state "Provisioned"
    When the status of the Cluster "c1" names the state "Active"
    Then the Cluster "c1" is in state "Provisioned"
    And the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has the krtt finalizer

  @row:machine-deletion-checks:C01 @row:machine-deletion-checks:C11 @row:machine-normal:N05
  Scenario: A Cluster whose finalizer is removed by hand: its Machines skip the Node steps and never take their Node for deleted
    Given a Cluster "c1" whose Nodes live in the workload cluster
    And a running Machine "m1"
    And a running Machine "m2" controlled by another owner
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup"
    When I delete the Cluster "c1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    And the Cluster "c1" has condition "Deleting" with status "True" and reason "WaitingForWorkersDeletion" and message containing "* Worker Machines: m1, m2"
    And krtt explain cluster "c1" says "m2 (left to its owner)"
    When the finalizer "cluster.krtt.dev/cluster" is removed from the Cluster "c1"
    Then the Cluster "c1" is gone
    And row "C01" fired for "m1" saying "the Cluster is gone"
    And the Machine "m1" is gone
    And the Node of "m1" exists
    And the Machine "m2" has condition "Ready" with reason "ClusterNotFound"
    And the Machine "m2" has condition "NodeHealthy" with status "True" and reason "NodeHealthy"
    And row "E04" never fired for "m2"
