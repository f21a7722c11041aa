Feature: The drain asks the pod-verdict table about every Pod
  What the drain does with one Pod is a row of the pod-verdict decision table,
  decided from that Pod's facts alone: DaemonSet, mirror and skip-labelled Pods
  are left alone (even while they are being deleted, as Cluster API leaves them),
  finished Pods are removed without waiting, evicted Pods are waited for until
  they are gone.

  Background:
    Given a Cluster "c1"

  @row:pod-verdict:P01 @row:pod-verdict:P02 @row:pod-verdict:P05 @row:pod-verdict:P06 @row:pod-verdict:P07 @row:pod-verdict:P09
  Scenario: every Pod on the Node gets its verdict and the drain acts on it
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    And mirror Pod "static" runs on the Node of "m1"
    And Pod "pinned" with label "cluster.krtt.dev/drain=skip" runs on the Node of "m1"
    And DaemonSet Pod "agent" runs on the Node of "m1"
    And Pod "job" has finished on the Node of "m1"
    And Pod "old-job" has finished on the Node of "m1" and is held by a finalizer while it is deleted
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And Pod "web" is gone
    And Pod "job" is gone
    And Pod "static" is still running
    And Pod "pinned" is still running
    And Pod "agent" is still running

  @row:pod-verdict:P05 @row:pod-verdict:P06 @row:pod-verdict:P07 @row:pod-verdict:P13 @row:pod-verdict:P04
  Scenario: Pods the drain leaves alone do not hold it while they are being deleted
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1" and is held by a finalizer while it is deleted
    And DaemonSet Pod "agent" runs on the Node of "m1" and is held by a finalizer while it is deleted
    And mirror Pod "static" runs on the Node of "m1"
    And Pod "static" is being deleted and held there by a finalizer
    And Pod "pinned" with label "cluster.krtt.dev/drain=Skip" runs on the Node of "m1"
    And Pod "pinned" is being deleted and held there by a finalizer
    And a MachineDrainRule "keep-cache" with behavior "Skip" for Pods labelled "tier=cache"
    And Pod "cache" with label "tier=cache" runs on the Node of "m1"
    And Pod "cache" is being deleted and held there by a finalizer
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "web"
    When the hold on Pod "web" is released
    Then the Machine "m1" is gone
