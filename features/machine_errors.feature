Feature: The operator copes with errors and stuck deletion steps
  As a platform engineer I want API failures retried, lost infrastructure
  and Nodes reported, and deletion steps that hang skipped once their
  timeout has passed.

  Background:
    Given a Cluster "c1"

  @row:machine-errors:E02 @row:machine-errors:E01 @row:machine-normal:N01
  Scenario: an API error stops the Machine from progressing and is reported on its deletion
    Given a Machine "m1" whose infrastructure API fails to answer
    Then the last row of "m1" is "E02"
    When the Machine "m1" has finalizer "example.com/keep"
    And I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "InternalError"
    When the finalizer "example.com/keep" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @serial @row:machine-errors:E02
  Scenario: an infrastructure kind that is not served for a while is an API error, not lost infrastructure
    Given a running Machine "m1"
    When the API server stops serving the infrastructure kind of "m1"
    And the operator restarts
    Then row "E02" fired for "m1" saying "does not serve the infrastructure kind SimMachine"
    And the Machine "m1" reaches phase "Running"
    When the API server serves the infrastructure kind of "m1" again
    And I delete the Machine "m1"
    Then the Machine "m1" is gone
    And the Node of "m1" is gone

  @serial @row:machine-errors:E03
  Scenario: a restarted operator still hears of a running Machine's infrastructure object going away
    Given a running Machine "m1"
    When the operator restarts and looks at the Machine "m1" again
    And the infrastructure object of "m1" is deleted
    Then the Machine "m1" reaches phase "Failed"

  @row:machine-errors:E03 @row:machine-normal:N50
  Scenario: infrastructure lost after provisioning fails the Machine for good
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And the Machine "m1" reaches phase "Provisioned"
    When the infrastructure object of "m1" is deleted
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "InvalidConfiguration"
    And the Machine "m1" has condition "InfrastructureReady" with status "False" and reason "ObjectDeleted"
    And the Machine "m1" has condition "InfrastructureReady" with reason "ObjectDeleted" and message containing "SimMachine has been deleted while the Machine still exists"
    And an Event of the Machine "m1" tells row "E03" with reason "ObjectDeleted"
    When the Machine "m1" has annotation "example.com/touched"
    Then the last row of "m1" is "N50"
    And the Machine "m1" reaches phase "Failed"

  @row:machine-errors:E04
  Scenario: a Node deleted under a running Machine makes the Machine unhealthy
    Given a running Machine "m1"
    When the Node of "m1" is deleted
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with status "False" and reason "NodeDeleted"
    And the Machine "m1" has condition "NodeReady" with status "False" and reason "NodeDeleted"
    And the Machine "m1" records since when it is unhealthy

  @row:machine-errors:E05
  Scenario: two Nodes with the same providerID are not guessed between
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m1"
    And two Nodes join with the providerID of "m1"
    When the infrastructure of "m1" is provisioned
    Then the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "MultipleNodesFound"
    And the Machine "m1" reaches phase "Provisioned"

  @serial @row:machine-errors:E06
  Scenario: a drain blocked past its timeout leaves the remaining Pods in place
    Given a running Machine "m1"
    And a kubelet runs on the Node of "m1"
    And Pod "db" runs on the Node of "m1"
    And a PodDisruptionBudget blocks Pod "db"
    And the Machine "m1" has a drain timeout of 600 seconds
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DrainingNode" and message containing "db"
    When the drain timeout of "m1" has passed
    Then row "E06" fired for "m1"
    And the Machine "m1" is gone
    And Pod "db" is still running

  @serial @row:machine-errors:E07
  Scenario: volumes that do not detach within the timeout do not hold the deletion
    Given a running Machine "m1"
    And volume "vol-1" is attached to the Node of "m1"
    And the Machine "m1" has a volume detach timeout of 600 seconds
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForVolumeDetach"
    When the volume detach timeout of "m1" has passed
    Then row "E07" fired for "m1"
    And the Machine "m1" is gone

  @serial @row:machine-errors:E08 @row:machine-deletion:D18
  Scenario: a Node that cannot be deleted within the timeout is left behind
    Given a running Machine "m1"
    And a policy forbids deleting the Node of "m1"
    And the Machine "m1" has a Node deletion timeout of 600 seconds
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "DeletingNode" and message containing "protected"
    When the Node deletion timeout of "m1" has passed
    Then the Machine "m1" is gone
    And row "E08" fired for "m1"
    And the Node of "m1" exists

  @row:machine-errors:E09
  Scenario: a bootstrap object controlled by another owner is not taken over
    Given a Machine "m1" whose bootstrap object is controlled by another owner
    Then the Machine "m1" has condition "BootstrapConfigReady" with status "False" and reason "ControlledByOther"
    And the Machine "m1" has condition "BootstrapConfigReady" with reason "ControlledByOther" and message containing "SimBootstrapConfig/m1 is controlled by ConfigMap/m1-owner; the Machine does not take it over"
    And the Machine "m1" reaches phase "Pending"

  @row:machine-errors:E10
  Scenario: an infrastructure object controlled by another owner is not taken over
    Given a Machine "m1" whose infrastructure object is controlled by another owner
    And the bootstrap provider reports the data secret of "m1"
    Then the Machine "m1" has condition "InfrastructureReady" with status "False" and reason "ControlledByOther"
    And the Machine "m1" reaches phase "Provisioning"
    And row "N14" never fired for "m1"

  @row:machine-errors:E10 @row:machine-deletion:D25
  Scenario: a Machine naming what another MachineSet created neither takes it over nor deletes it
    Given a Machine "m1" whose infrastructure object is controlled by the MachineSet "other"
    And the bootstrap provider reports the data secret of "m1"
    Then the Machine "m1" has condition "InfrastructureReady" with reason "ControlledByOther" and message containing "SimMachine/m1 is controlled by MachineSet/other; the Machine does not take it over"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And row "D25" fired for "m1"
    And the infrastructure object of "m1" exists
    And the bootstrap object of "m1" is gone

  @row:machine-errors:E09 @row:machine-deletion:D26
  Scenario: a Machine deleted while its bootstrap object belongs to another MachineSet leaves that object in place
    Given a Machine "m1" whose bootstrap object is controlled by the MachineSet "other"
    Then the Machine "m1" has condition "BootstrapConfigReady" with reason "ControlledByOther" and message containing "SimBootstrapConfig/m1 is controlled by MachineSet/other"
    When I delete the Machine "m1"
    Then the Machine "m1" is gone
    And row "D26" fired for "m1"
    And the bootstrap object of "m1" exists
    And the infrastructure object of "m1" is gone

  @row:machine-errors:E11
  Scenario: an infrastructure object that reports another providerID is reported, not followed
    Given a running Machine "m1"
    When the infrastructure of "m1" reports the providerID "sim://elsewhere"
    Then the Machine "m1" has condition "InfrastructureReady" with status "False" and reason "ProviderIDMismatch"
    And the Machine "m1" reaches phase "Running"

  @row:machine-normal:N09
  Scenario: a Machine whose status names a state the tables do not know starts over from Pending
    Given a running Machine "m1"
    When the status of "m1" names the state "RetiredState"
    Then row "N09" fired for "m1"
    And the Machine "m1" reaches phase "Running"

  @row:machine-normal:N08 @row:machine-deletion:D03
  Scenario: a Machine being deleted whose status names an unknown state restarts its deletion
    Given a running Machine "m1"
    And the Machine "m1" has annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/hold"
    When I delete the Machine "m1"
    Then the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    When the status of "m1" names the state "RetiredState"
    Then row "N08" fired for "m1"
    And the Machine "m1" has condition "Deleting" with reason "WaitingForPreDrainHook"
    When the annotation "pre-drain.delete.hook.machine.cluster.krtt.dev/hold" is removed from the Machine "m1"
    Then the Machine "m1" is gone

  @row:machine-errors:E12
  Scenario: an infrastructure provider that reports a terminal failure fails the Machine
    Given a running Machine "m1"
    When the infrastructure of "m1" reports the failure "VMNotFound" "the VM is gone"
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "VMNotFound"
    And the Machine "m1" has condition "Ready" with status "False" and reason "Failed"
