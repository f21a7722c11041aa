Feature: Forced deletion
  A Machine's deletion is forced by the label cluster.krtt.dev/force-deletion,
  by a drain timeout with spec.deletion.onDrainTimeout Force, or by a Node that
  has been NotReady or read-only for more than 5 minutes (as the
  machine-controller-manager does). The Node's Pods are then deleted with grace
  period 0 (never DaemonSet or mirror Pods), its VolumeAttachments deleted and
  the volume wait skipped. Hooks still hold the deletion. The Deleting reason of the forced row says why
  (ForceDeletionLabel, ForceDeletionDrainTimeout, ForceDeletionNodeUnhealthy); the row moves on to the
  pre-terminate hooks in the pass that deleted the Pods, so the next reconcile replaces that reason at once,
  and the scenarios read it from the Event of the transition (its action is the row, its reason the reason).

  Background:
    Given a Cluster "c1"

  @row:machine-deletion:D21 @row:pod-verdict:P10 @row:pod-verdict:P11
  Scenario: the force-deletion label deletes the Pods at once despite a PodDisruptionBudget, once the hooks are gone
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And DaemonSet Pod "agent" runs on the Node of "m1"
    And DaemonSet Pod "agent-old" runs on the Node of "m1" and is held by a finalizer while it is deleted
    And a VolumeAttachment "va-1" attaches volume "vol-1" to the Node of "m1"
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup"
    And the Machine "m1" carries the force-deletion label
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    And Pod "db" is still running
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/backup" is removed from the Machine "m1"
    Then an Event of the Machine "m1" tells row "D21" with reason "ForceDeletionLabel"
    And the Machine "m1" is gone
    And Pod "db" is gone
    And the VolumeAttachment "va-1" is gone
    And Pod "agent" is still running

  @serial @row:machine-errors:E13
  Scenario: with onDrainTimeout Force a drain that times out force-deletes the Pods left
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Machine "m1" has a drain timeout of 60 seconds
    And the Machine "m1" forces its deletion when the drain times out
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode"
    When the drain timeout of "m1" has passed
    Then row "E13" fired for "m1"
    And an Event of the Machine "m1" tells row "E13" with reason "ForceDeletionDrainTimeout"
    And Pod "db" is gone
    And the Machine "m1" is gone

  @serial @row:machine-deletion:D22
  Scenario: a Node NotReady for more than 5 minutes forces the deletion
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Node of "m1" reports Ready=False
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode"
    When 6 minutes pass for "m1"
    Then an Event of the Machine "m1" tells row "D22" with reason "ForceDeletionNodeUnhealthy"
    And the Machine "m1" is gone
    And Pod "db" is gone

  @serial @row:machine-deletion:D22
  Scenario: a Node with a read-only filesystem for more than 5 minutes forces the deletion
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Node of "m1" reports "ReadonlyFilesystem" as "True" because "FilesystemIsReadOnly: remounted read-only"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode"
    When 6 minutes pass for "m1"
    Then an Event of the Machine "m1" tells row "D22" with reason "ForceDeletionNodeUnhealthy"
    And the Machine "m1" is gone
    And Pod "db" is gone

  @serial @row:machine-deletion:D22 @row:machine-deletion:D20
  Scenario: a Node whose kubelet stopped reporting (Ready=Unknown) for more than 5 minutes forces the deletion
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the kubelet of "m1" stops reporting
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "cannot evict pod as it would violate the pod's disruption budget"
    And Pod "db" is still running
    When 6 minutes pass for "m1"
    Then an Event of the Machine "m1" tells row "D22" with reason "ForceDeletionNodeUnhealthy"
    And the Machine "m1" is gone
    And Pod "db" is gone

  @row:machine-deletion:D23
  Scenario: a deletion forced while it waits for volumes deletes the VolumeAttachments and skips the wait
    Given a running Machine "m1"
    And a VolumeAttachment "va-1" attaches volume "vol-1" to the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach"
    When the Machine "m1" carries the force-deletion label
    Then the Machine "m1" is gone
    And the VolumeAttachment "va-1" is gone
