Feature: Drain rules, the wait-completed label and Pods with volumes
  MachineDrainRules (as in Cluster API) say per Pod whether the drain evicts it
  (in order groups, lowest first), skips it or waits until it completes; the
  first matching rule by name applies, and a Pod's cluster.krtt.dev/drain
  label overrides them all. Pods with PersistentVolumeClaims are evicted one at
  a time, highest priority first, each once the volumes of the one before are
  detached (as the machine-controller-manager does).

  Background:
    Given a Cluster "c1"

  @row:pod-verdict:P12 @row:pod-verdict:P02
  Scenario: a Pod labelled wait-completed is never evicted; the drain waits until it has completed
    Given a running Machine "m1"
    And Pod "batch" with label "cluster.krtt.dev/drain=wait-completed" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "/batch: waiting for completion"
    And Pod "batch" is still running
    When Pod "batch" completes
    Then the Machine "m1" is gone

  @row:pod-verdict:P19 @row:machinedrainrule:MDR03 @row:machinedrainrule:MDR01
  Scenario: a drain rule whose selector cannot be evaluated holds the drain instead of evicting the Pods it may protect, and says so on the rule
    Given a running Machine "m1"
    And a MachineDrainRule "a-protect" with behavior "Skip" whose Pod selector the API server accepts but cannot be evaluated
    Then the MachineDrainRule "a-protect" has condition "Valid" with status "False", reason "InvalidSelector" and message containing "spec.pods[0].selector: "
    And a Warning Event of the MachineDrainRule "a-protect" with reason "InvalidSelector" says "spec.pods[0].selector: "
    And Pod "db" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "held by a MachineDrainRule that cannot be evaluated"
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "a-protect: spec.pods[0].selector: "
    And Pod "db" is still running
    When the MachineDrainRule "a-protect" is deleted
    Then Pod "db" is evicted

  @row:pod-verdict:P13 @row:pod-verdict:P14 @row:pod-verdict:P15 @row:machinedrainrule:MDR02
  Scenario: drain rules skip Pods, wait for Pods to complete and evict in order groups; the first rule by name applies
    Given a running Machine "m1"
    And a MachineDrainRule "a-cache" with behavior "Skip" for Pods labelled "app=cache"
    And the MachineDrainRule "a-cache" has condition "Valid" with status "True", reason "Valid" and message containing "can be evaluated"
    And a MachineDrainRule "z-cache" with behavior "Drain" and order 5 for Pods labelled "app=cache"
    And a MachineDrainRule "b-batch" with behavior "WaitCompleted" for Pods labelled "app=batch"
    And a MachineDrainRule "c-front" with behavior "Drain" and order 10 for Pods labelled "app=front"
    And Pod "cache" runs on the Node of "m1"
    And Pod "batch" runs on the Node of "m1"
    And Pod "front" runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then Pod "web" is evicted
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "After above Pods have been removed from the Node, the following Pods will be evicted: "
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "/batch: waiting for completion"
    When Pod "web" has terminated
    Then Pod "front" is still running
    When Pod "batch" completes
    Then Pod "front" is evicted
    When Pod "front" has terminated
    Then the Machine "m1" is gone
    And Pod "cache" is still running

  @row:pod-verdict:P13 @row:pod-verdict:P09
  Scenario: a rule's namespaceSelector matches the labels of the Pod's namespace; a rule whose machines[].selector does not match the Machine does not apply
    Given a running Machine "m1"
    And the namespace of the scenario is labelled "team=storage"
    And a MachineDrainRule "a-storage" with behavior "Skip" for Pods labelled "app=cache" in namespaces labelled "team=storage"
    And a MachineDrainRule "b-other-team" with behavior "Skip" for Pods labelled "app=web" in namespaces labelled "team=other"
    And a MachineDrainRule "c-gpu" with behavior "WaitCompleted" for Machines labelled "pool=gpu"
    And Pod "cache" runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then Pod "web" is evicted
    When Pod "web" has terminated
    Then the Machine "m1" is gone
    And Pod "cache" is still running

  @row:pod-verdict:P16
  Scenario: Pods with volumes are evicted one at a time, highest priority first, after the volumes of the one before are detached
    Given a running Machine "m1"
    And Pod "db-low" with priority 10 and a volume "vol-low" runs on the Node of "m1"
    And Pod "db-high" with priority 100 and a volume "vol-high" runs on the Node of "m1"
    And Pod "web" runs on the Node of "m1"
    When I delete the Machine "m1"
    Then Pod "db-high" is evicted
    And Pod "web" is evicted
    And the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "db-low (waiting for Pod"
    And Pod "db-low" is still running
    When Pod "db-high" has terminated
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "waiting for volume kubernetes.io/csi/sim^vol-high to detach"
    And Pod "db-low" is still running
    When volume "vol-high" is detached from the Node of "m1"
    Then Pod "db-low" is evicted
    When Pod "db-low" has terminated
    And Pod "web" has terminated
    And volume "vol-low" is detached from the Node of "m1"
    Then the Machine "m1" is gone
