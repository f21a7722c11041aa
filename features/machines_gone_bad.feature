Feature: Machines gone bad — a lost Node, forced deletions of undrained Machines, disks the drain does not own
  A Machine whose Node was deleted is unhealthy, as in the machine-controller-manager, so
  its health timeout applies. A forced deletion of a Machine that must not be drained
  leaves its Pods alone but still deletes its VolumeAttachments. A disk attached to the
  Node that no claim binds is not a Pod's volume: it does not hold the serial drain.

  Background:
    Given a Cluster "c1"

  @serial @row:machine-errors:E04 @row:machine-errors:E20
  Scenario: a Machine whose Node was deleted fails once its health timeout has passed
    Given a running Machine "m1"
    When the Node of "m1" is deleted
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with reason "NodeDeleted" and message containing "has been deleted while the Machine still exists"
    And the Machine "m1" has condition "NodeReady" with reason "NodeDeleted" and message containing "has been deleted while the Machine still exists"
    And the Machine "m1" records since when it is unhealthy
    When the health timeout of "m1" has passed
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "UnhealthyNode"

  @row:machine-deletion:D24
  Scenario: a forced deletion of a Machine that must not be drained leaves the Pods but deletes the VolumeAttachments
    Given a running Machine "m1"
    And Pod "db" runs on the Node of "m1"
    And a VolumeAttachment "va-1" attaches volume "vol-1" to the Node of "m1"
    And the Machine "m1" has annotation "machine.cluster.krtt.dev/exclude-node-draining"
    And the Machine "m1" carries the force-deletion label
    When I delete the Machine "m1"
    Then row "D24" fired for "m1"
    And the Machine "m1" is gone
    And the VolumeAttachment "va-1" is gone
    And Pod "db" is still running

  @row:pod-verdict:P16 @row:pod-verdict:P09
  Scenario: a disk no claim binds does not hold the serial drain; the volume wait still waits for it
    Given a running Machine "m1"
    And Pod "db-high" with priority 100 and a volume "vol-high" runs on the Node of "m1"
    And Pod "db-low" with priority 10 and a volume "vol-low" runs on the Node of "m1"
    And a PersistentVolume "disk" that no claim binds is attached to the Node of "m1" through VolumeAttachment "va-disk"
    When I delete the Machine "m1"
    Then Pod "db-high" is evicted
    And Pod "db-low" is still running
    When Pod "db-high" has terminated
    And volume "vol-high" is detached from the Node of "m1"
    Then Pod "db-low" is evicted
    When Pod "db-low" has terminated
    And volume "vol-low" is detached from the Node of "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach" and message containing "disk"
    When the VolumeAttachment "va-disk" is detached
    Then the Machine "m1" is gone

  @row:pod-verdict:P09
  Scenario: a volume the Node lists that matches no PersistentVolume does not hold the serial drain; the volume wait still waits for it
    Given a running Machine "m1"
    And volume "stray" is attached to the Node of "m1"
    And Pod "db" with priority 10 and a volume "vol-db" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then Pod "db" is evicted
    When Pod "db" has terminated
    And volume "vol-db" is detached from the Node of "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach" and message containing "* Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/csi/sim^stray"
    When volume "stray" is detached from the Node of "m1"
    Then the Machine "m1" is gone

  @row:pod-verdict:P16 @row:pod-verdict:P09
  Scenario: a claimed PersistentVolume a Pod left holds the next Pod's turn until it is detached
    Given a running Machine "m1"
    And Pod "db-high" with priority 100 and a volume "vol-high" runs on the Node of "m1"
    And Pod "db-low" with priority 10 and a volume "vol-low" runs on the Node of "m1"
    And the PersistentVolume of volume "vol-high" is bound to its claim and attached to the Node of "m1" through VolumeAttachment "va-high"
    When I delete the Machine "m1"
    Then Pod "db-high" is evicted
    And Pod "db-low" is still running
    When Pod "db-high" has terminated
    And volume "vol-high" is detached from the Node of "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "vol-high to detach"
    And Pod "db-low" is still running
    When the VolumeAttachment "va-high" is detached
    Then Pod "db-low" is evicted
    When Pod "db-low" has terminated
    And volume "vol-low" is detached from the Node of "m1"
    Then the Machine "m1" is gone
