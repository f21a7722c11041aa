Feature: maxEvictRetries — a Pod whose eviction is refused too often is deleted
  With spec.deletion.maxEvictRetries the drain counts, per Pod, the evictions its
  PodDisruptionBudget refused (status.deletion.evictionRefusals). Once a Pod was refused
  that many times it is deleted with grace period 0, as the machine-controller-manager
  does; a budget that allows no eviction although all its Pods are healthy is
  misconfigured and never will, so its Pods are not deleted this way.

  Background:
    Given a Cluster "c1"

  @row:pod-verdict:P17 @row:pod-verdict:P18
  Scenario: a Pod refused maxEvictRetries times is deleted; the Pod of a misconfigured budget is not
    Given a running Machine "m1"
    And the Machine "m1" deletes a Pod after 1 refused eviction
    And Pod "web" runs on the Node of "m1"
    And a PodDisruptionBudget that waits for an unhealthy Pod blocks Pod "web"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "refused 1 of maxEvictRetries 1"
    When the drain of "m1" runs again
    Then Pod "web" is gone
    And row "P17" fired for "m1"
    And row "P18" fired for "m1"
    And Pod "db" is still running
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "/db: cannot evict pod"
