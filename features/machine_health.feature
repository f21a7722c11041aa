Feature: Machines whose Node goes bad, and Machines that never come up
  As a fleet operator I want a Machine whose Node stops being healthy to say
  so (phase Unknown), to recover when the Node does, and to fail once it has
  been unhealthy for longer than its health timeout; and a Machine that does
  not reach Running within its creation timeout to fail, saying what it was
  waiting on. The Machine controller never deletes a failed Machine itself.

  Background:
    Given a Cluster "c1"

  @row:machine-normal:N41 @row:machine-normal:N43
  Scenario: a Node that reports NotReady turns its Machine Unknown until it is Ready again
    Given a running Machine "m1"
    When the Node of "m1" reports "Ready" as "False" because "KubeletNotReady: container runtime is down"
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with status "False" and reason "NodeNotHealthy"
    And the Machine "m1" has condition "NodeHealthy" with reason "NodeNotHealthy" and message containing "* Node.Ready: container runtime is down"
    And the Machine "m1" has condition "Ready" with status "False" and reason "NotReady"
    And the Machine "m1" has condition "Ready" with reason "NotReady" and message containing "* NodeHealthy:"
    And the Machine "m1" has condition "Ready" with reason "NotReady" and message containing "  * Node.Ready: container runtime is down"
    And an Event of the Machine "m1" tells row "N41" with reason "Unhealthy" and note containing "Ready=False (KubeletNotReady: container runtime is down)"
    And the Machine "m1" has condition "NodeReady" with reason "NodeNotReady" and message containing "* Node.Ready: container runtime is down"
    And the Machine "m1" records since when it is unhealthy
    When the Node of "m1" reports "Ready" as "True" because "KubeletReady: kubelet is posting ready status"
    Then the Machine "m1" reaches phase "Running"
    And the Machine "m1" has condition "NodeReady" with status "True" and reason "NodeReady"
    And the Machine "m1" has condition "NodeHealthy" with status "True" and reason "NodeHealthy"
    And the Machine "m1" has condition "Ready" with status "True" and reason "Ready"
    And the Machine "m1" no longer records since when it was unhealthy

  @row:machine-normal:N41
  Scenario: a Node whose kubelet stopped reporting (Ready=Unknown) is not Ready
    Given a running Machine "m1"
    When the kubelet of "m1" stops reporting
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "NodeHealthyUnknown"
    And the Machine "m1" has condition "NodeHealthy" with reason "NodeHealthyUnknown" and message containing "* Node.AllConditions: Kubelet stopped posting node status."
    And the Machine "m1" records since when it is unhealthy

  @row:machine-normal:N42 @row:machine-normal:N43
  Scenario: a Ready Node that reports one of the health conditions True is unhealthy
    Given a running Machine "m1"
    When the Node of "m1" reports "KernelDeadlock" as "True" because "DockerHung: task docker blocked for more than 120 seconds"
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with reason "NodeNotHealthy" and message containing "* Node.KernelDeadlock: task docker blocked for more than 120 seconds"
    And the Machine "m1" has condition "Ready" with status "False" and reason "NotReady"
    When the Node of "m1" reports "KernelDeadlock" as "False" because "KernelHasNoDeadlock: kernel has no deadlock"
    Then the Machine "m1" reaches phase "Running"

  @row:machine-normal:N42
  Scenario: spec.health.nodeConditions says which conditions start the health timeout
    Given a running Machine "m1" whose health conditions are "MemoryPressure"
    # NodeHealthy reads the pressures as Cluster API does; the health timeout only the listed conditions.
    When the Node of "m1" reports "DiskPressure" as "True" because "KubeletHasDiskPressure: kubelet has disk pressure"
    Then the Machine "m1" has condition "NodeHealthy" with reason "NodeNotHealthy" and message containing "* Node.DiskPressure: kubelet has disk pressure"
    And the Machine "m1" has condition "Ready" with status "False" and reason "NotReady"
    And the Machine "m1" is in phase "Running"
    And the Machine "m1" no longer records since when it was unhealthy
    When the Node of "m1" reports "MemoryPressure" as "True" because "KubeletHasInsufficientMemory: kubelet has insufficient memory available"
    Then the Machine "m1" reaches phase "Unknown"
    And the Machine "m1" has condition "NodeHealthy" with reason "NodeNotHealthy" and message containing "* Node.MemoryPressure: kubelet has insufficient memory available"
    And the Machine "m1" records since when it is unhealthy

  @serial @row:machine-errors:E20 @row:machine-normal:N50
  Scenario: a Machine unhealthy for longer than its health timeout fails and is left for its owner to replace
    Given a running Machine "m1"
    When the Node of "m1" reports "Ready" as "False" because "KubeletNotReady: PLEG is not healthy"
    Then the Machine "m1" reaches phase "Unknown"
    When the health timeout of "m1" has passed
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "UnhealthyNode"
    And the Machine "m1" has condition "Ready" with status "False" and reason "Failed"
    When the Node of "m1" reports "Ready" as "True" because "KubeletReady: kubelet is posting ready status"
    Then the last row of "m1" is "N50"
    And the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has the krtt finalizer

  @serial @row:machine-errors:E17 @row:machine-errors:E18 @row:machine-errors:E19
  Scenario: a Machine that is not Running within its creation timeout fails, naming the step it waited on
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And a Machine "m2" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m2"
    And a Machine "m3" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m3"
    And the infrastructure of "m3" is provisioned
    And the Machine "m1" reaches phase "Pending"
    And the Machine "m2" reaches phase "Provisioning"
    And the Machine "m3" reaches phase "Provisioned"
    When the creation timeout of "m1" has passed
    And the creation timeout of "m2" has passed
    And the creation timeout of "m3" has passed
    Then the Machine "m1" reaches phase "Failed"
    And the Machine "m1" has failure reason "CreationTimeout"
    And the Machine "m1" has failure message containing "waiting for its bootstrap data"
    And the Machine "m2" reaches phase "Failed"
    And the Machine "m2" has failure message containing "waiting for its infrastructure to be provisioned"
    And the Machine "m3" reaches phase "Failed"
    And the Machine "m3" has failure message containing "waiting for its Node to join"
    And the Machine "m3" has condition "Ready" with status "False" and reason "Failed"

  # Cluster API v1.14 setRemediatingCondition (cluster_controller_status.go): the Machines a health checker found
  # unhealthy, and those waiting for their owner's remediation (OwnerRemediated False).
  Scenario: A Cluster's Remediating condition names its unhealthy Machines and those waiting for remediation
    Given a running Machine "m1"
    Then the Cluster "c1" has condition "Remediating" with status "False" and reason "NotRemediating"
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "m1" to "False" with reason "UnhealthyNode" and message "Node m1 is unhealthy"
    Then the Cluster "c1" has condition "Remediating" with status "False" and reason "NotRemediating" and message containing "Machine m1 is not healthy (not to be remediated)"
    When another controller sets the condition "OwnerRemediated" of the Machine "m1" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then the Cluster "c1" has condition "Remediating" with status "True" and reason "Remediating" and message containing "* Machine m1: Waiting for remediation"
