Feature: The drain asks the pod-verdict table about every Pod
  What the drain does with one Pod is a row of the pod-verdict decision table,
  decided from that Pod's facts alone: DaemonSet, mirror and skip-labelled Pods
  are left alone, finished Pods are removed without waiting, evicted Pods are
  waited for until they are gone.

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
