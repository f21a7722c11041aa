Feature: The drain waits for Pods that are being deleted
  A Pod that is already being deleted when the drain reaches it is not
  evicted again: the drain waits until it is gone (pod-verdict P04), and
  says so on the Machine's Deleting condition.

  Background:
    Given a Cluster "c1"

  @row:pod-verdict:P04
  Scenario: a Pod still terminating holds the drain until it is gone
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1" and is held by a finalizer while it is deleted
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "deletionTimestamp set, but still not removed from the Node"
    When the hold on Pod "web" is released
    Then the Machine "m1" is gone
