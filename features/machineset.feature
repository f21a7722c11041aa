@machineset
Feature: A MachineSet keeps N Machines
  As a platform engineer I ask for a number of identical Machines; the
  MachineSet clones its templates into new Machines, replaces the failed
  ones within its remediation limits, deletes the surplus in the order I
  ask, and deletes its Machines when it is deleted.

  Background:
    Given a Cluster "c1"

  @row:machineset-normal:S03 @row:machineset-replicas:R05 @row:machineset-replicas:R10 @row:machineset-normal:S16 @row:machineset-normal:S13
  Scenario: a MachineSet creates its Machines from its templates and counts them Ready
    Given a MachineSet "ms" of 3 Machines
    Then the MachineSet "ms" has 3 Machines
    And the Machines of "ms" were created with the Machine finalizer
    And the templates of the MachineSet "ms" are owned by the Cluster "c1"
    And the MachineSet "ms" selects only the Machines of its Cluster: "cluster.krtt.dev/cluster-name=c1" is in its selector and template labels, and its status.selector reads "cluster.krtt.dev/cluster-name=c1,pool=ms"
    And the MachineSet "ms" reaches phase "Stable"
    And the MachineSet "ms" has condition "MachinesReady" with status "False" and reason "NotReady"
    When the providers bring every Machine of "ms" to Running
    Then every Machine of "ms" has its bootstrap and infrastructure objects cloned from the templates
    And the MachineSet "ms" reports 3 replicas, 3 ready and 3 available
    And the MachineSet "ms" has condition "MachinesReady" with status "True" and reason "Ready"
    And the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "NotScalingUp"
    And the MachineSet "ms" has condition "Deleting" with status "False" and reason "NotDeleting"

  @row:machineset-replicas:R05 @row:machineset-replicas:R06
  Scenario: kubectl scale works both ways; scaling down deletes the Machine marked for deletion, then the one without a Node
    Given a MachineSet "ms" of 1 Machine
    And the MachineSet "ms" has 1 Machine
    When the MachineSet "ms" is scaled to 3
    Then the MachineSet "ms" has 3 Machines
    And the Machines of "ms" are called "a", "b" and "c"
    When the providers bring Machine "a" of the set to Running
    And the providers bring Machine "b" of the set to Running
    And Machine "a" of the set has annotation "cluster.krtt.dev/delete-machine"
    And the MachineSet "ms" is scaled to 1
    Then Machine "a" of the set is gone
    And Machine "c" of the set is gone
    And Machine "b" of the set still exists
    And the MachineSet "ms" has 1 Machine
    And the MachineSet "ms" reaches phase "Stable"

  @row:machineset-replicas:R06
  Scenario: the default Random order deletes healthy Machines by name, lowest first, as Cluster API's randomDeletionOrder
    Given a MachineSet "ms" of 3 Machines
    And the Machines of "ms" are called "a", "b" and "c"
    When the providers bring Machine "a" of the set to Running
    And the providers bring Machine "b" of the set to Running
    And the providers bring Machine "c" of the set to Running
    And the MachineSet "ms" is scaled to 1
    Then Machine "a" of the set is gone
    And Machine "b" of the set is gone
    And Machine "c" of the set still exists
    And the MachineSet "ms" has 1 Machine

  @row:machineset-replicas:R11
  Scenario: a MachineSet whose Machine creation is disabled creates none until the annotation goes
    Given a MachineSet "ms" of 2 Machines with Machine creation disabled
    Then the MachineSet "ms" has condition "ScalingUp" with status "True" and reason "ScalingUp" and message "Scaling up from 0 to 2 replicas"
    And the MachineSet "ms" has 0 Machines
    When the annotation "machineset.cluster.krtt.dev/disable-machine-create" is removed from the MachineSet "ms"
    Then the MachineSet "ms" has 2 Machines

  @row:machineset-replicas:R01
  Scenario: a failed Machine is deleted and replaced
    Given a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    When Machine "a" of the set fails
    Then Machine "a" of the set is gone
    And Machine "b" of the set still exists
    And the MachineSet "ms" has 2 Machines
    And the MachineSet "ms" has condition "Remediating" with status "False" and reason "NotRemediating"

  @row:machineset-replicas:R07 @row:machineset-replicas:R02 @row:machineset-replicas:R06
  Scenario: no failed Machine is replaced while more than maxUnhealthy are failed; a scale-down deletes it first
    Given a MachineSet "ms" of 2 Machines with maxUnhealthy 0
    And the Machines of "ms" are called "a" and "b"
    When the providers bring Machine "b" of the set to Running
    And Machine "a" of the set fails
    Then the MachineSet "ms" has condition "Remediating" with reason "TooManyFailedMachines" and message containing "1 of 2 Machines failed"
    And Machine "a" of the set still exists
    When the MachineSet "ms" is scaled to 3
    Then the MachineSet "ms" has condition "ScalingUp" with status "True" and reason "ScalingUp"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "Scaling up from 2 to 3 replicas is blocked because:"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "* 1 of 2 Machines failed"
    And the MachineSet "ms" has 2 Machines
    When the MachineSet "ms" is scaled to 1
    Then Machine "a" of the set is gone
    And Machine "b" of the set still exists
    And the MachineSet "ms" has 1 Machine
    And the MachineSet "ms" reaches phase "Stable"

  @row:machineset-replicas:R08 @row:machineset-replicas:R01
  Scenario: at most maxInFlight failed Machines are replaced at once, each once it is gone
    Given every Machine event of the set "ms" is watched
    And a MachineSet "ms" of 2 Machines with maxInFlight 1
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When Machine "a" of the set fails
    Then Machine "a" of the set is being deleted
    And the MachineSet "ms" reports 2 replicas of which 1 is being deleted
    When Machine "b" of the set fails
    Then the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing "1 being replaced"
    And Machine "b" of the set still exists
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "a" of the set is gone
    And Machine "b" of the set is gone
    And the MachineSet "ms" has 2 Machines
    And the set "ms" never had more than 2 Machines at any watch event

  @row:machineset-normal:S11 @row:machineset-replicas:R10 @row:machineset-replicas:R05
  Scenario: an orphan being deleted is adopted and counted until it is gone
    Given a Machine "loner" labelled for "ms"
    And Machine "loner" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    And Machine "loner" of the set is deleted by hand
    And Machine "loner" of the set is being deleted
    When a MachineSet "ms" of 1 Machine is created
    Then Machine "loner" of the set belongs to the set
    And the MachineSet "ms" reports 1 replica of which 1 is being deleted
    And the MachineSet "ms" reaches phase "Stable"
    And the MachineSet "ms" has 0 Machines
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "loner" of the set
    Then Machine "loner" of the set is gone
    And the MachineSet "ms" has 1 Machine

  # Cluster API v1.14 reconcileUnhealthyMachines: the set deletes a Machine a MachineHealthCheck marked
  # (HealthCheckSucceeded and OwnerRemediated False), telling it with OwnerRemediated reason MachineDeleting.
  @row:machineset-replicas:R01
  Scenario: a Machine a health checker marks for remediation is deleted by its set and replaced
    Given a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "a" to "False" with reason "UnhealthyNode" and message "Node a is unhealthy"
    Then the MachineSet "ms" has condition "Remediating" with status "False" and reason "NotRemediating"
    And the MachineSet "ms" has condition "Remediating" with reason "NotRemediating" and message containing "is not healthy (not to be remediated by MachineSet)"
    When another controller sets the condition "OwnerRemediated" of the Machine "a" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "a" of the set is being deleted
    And Machine "a" of the set has condition "OwnerRemediated" with status "False" and reason "MachineDeleting"
    And the MachineSet "ms" reports 2 replicas of which 1 is being deleted
    And the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing ": Machine is deleting"
    And Machine "b" of the set still exists
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "a" of the set is gone
    And the MachineSet "ms" has 2 Machines
    And the MachineSet "ms" has condition "Remediating" with status "False" and reason "NotRemediating"

  # Cluster API v1.14 reconcileUnhealthyMachines: a marked Machine beyond maxInFlight is told why it waits
  # (OwnerRemediated reason RemediationDeferred) and deleted once a token is free.
  @row:machineset-replicas:R08 @row:machineset-replicas:R01
  Scenario: a Machine a health checker marks while maxInFlight are being replaced is told it waits
    Given a MachineSet "ms" of 2 Machines with maxInFlight 1
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "a" to "False" with reason "UnhealthyNode" and message "Node a is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "a" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "a" of the set is being deleted
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "b" to "False" with reason "UnhealthyNode" and message "Node b is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "b" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "b" of the set has condition "OwnerRemediated" with status "False" and reason "RemediationDeferred" and message containing "(spec.strategy.remediation.maxInFlight is 1)"
    And the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing ": Machine is deleting"
    And the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing ": Waiting because there are already too many remediations in progress (spec.strategy.remediation.maxInFlight is 1)"
    And Machine "b" of the set still exists
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "b" of the set is gone
    And the MachineSet "ms" has 2 Machines

  # Cluster API v1.14 reconcileUnhealthyMachines counts in flight only the Machines it deletes for remediation
  # (OwnerRemediated reason MachineDeleting), not a marked one someone else deletes.
  @row:machineset-replicas:R01
  Scenario: a marked Machine someone else deletes takes no maxInFlight token
    Given a MachineSet "ms" of 2 Machines with maxInFlight 1
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    And Machine "b" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    And Machine "a" of the set is deleted by hand
    And Machine "a" of the set is being deleted
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "a" to "False" with reason "UnhealthyNode" and message "Node a is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "a" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    And another controller sets the condition "HealthCheckSucceeded" of the Machine "b" to "False" with reason "UnhealthyNode" and message "Node b is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "b" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "b" of the set is being deleted
    And Machine "b" of the set has condition "OwnerRemediated" with status "False" and reason "MachineDeleting"
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    And the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "b" of the set
    Then Machine "a" of the set is gone
    And Machine "b" of the set is gone
    And the MachineSet "ms" has 2 Machines

  # Cluster API v1.14 reconcileUnhealthyMachines removes OwnerRemediated from a Machine whose health check passes again.
  @row:machineset-normal:S17 @row:machineset-replicas:R07
  Scenario: a Machine a health checker finds healthy again loses its remediation mark
    Given a MachineSet "ms" of 2 Machines with maxUnhealthy 0
    And the Machines of "ms" are called "a" and "b"
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "a" to "False" with reason "UnhealthyNode" and message "Node a is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "a" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then the MachineSet "ms" has condition "Remediating" with reason "TooManyFailedMachines" and message containing "1 of 2 Machines unhealthy"
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "a" to "True" with reason "Healthy" and message ""
    Then the Machine "a" has no condition "OwnerRemediated"
    And Machine "a" of the set still exists
    And the MachineSet "ms" has condition "Remediating" with status "False" and reason "NotRemediating"

  @row:machineset-replicas:R04
  Scenario: a missing template holds the creation until it exists
    Given a MachineSet "ms" of 1 Machine whose infrastructure template "ghost" does not exist
    Then the MachineSet "ms" has condition "ScalingUp" with status "True" and reason "ScalingUp" and message "Scaling up from 0 to 1 replicas is blocked because:\n* SimMachineTemplate does not exist"
    And the MachineSet "ms" has 0 Machines
    When the infrastructure template "ghost" is created
    Then the MachineSet "ms" has 1 Machine
    And the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "NotScalingUp" and message ""

  # Cluster API v1.14 setScalingUpCondition: a set not scaling up says a scale-up would be blocked.
  Scenario: a MachineSet of 0 whose template does not exist says a scale-up would be blocked
    Given a MachineSet "ms" of 0 Machines whose infrastructure template "ghost" does not exist
    Then the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "NotScalingUp" and message "Scaling up would be blocked because SimMachineTemplate does not exist"
    When the infrastructure template "ghost" is created
    And the MachineSet "ms" is scaled to 1
    Then the MachineSet "ms" has 1 Machine
    And the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "NotScalingUp" and message ""

  # Cluster API v1.14 machineset_preflight.go: ControlPlaneIsStable. The set looks again every 15s; nothing watches the control plane.
  @row:machineset-replicas:R12
  Scenario: a MachineSet creates no Machine while its control plane upgrades, and creates them once the upgrade is done
    Given the control plane of the Cluster "c1" asks for version "v1.31.0" and reports version "v1.30.2"
    And a MachineSet "ms" of 2 Machines
    Then the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "Scaling up from 0 to 2 replicas is blocked because:"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "* SimControlPlane"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "is upgrading ("
    And the MachineSet "ms" has 0 Machines
    When the control plane of the Cluster "c1" reports version "v1.31.0"
    Then the MachineSet "ms" has 2 Machines
    And the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "NotScalingUp"

  # Cluster API v1.14 machineset_preflight.go: KubernetesVersionSkew, and the skip-preflight-checks annotation.
  @row:machineset-replicas:R12
  Scenario: a MachineSet newer than its control plane creates no Machine until the check is skipped
    Given the control plane of the Cluster "c1" asks for version "v1.30.0" and reports version "v1.30.0"
    And a MachineSet "ms" of 1 Machine with version v1.31.0
    Then the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "MachineSet version (1.31.0) and ControlPlane version (1.30.0) do not conform to the kubernetes version skew policy as MachineSet version is higher than ControlPlane version"
    And the MachineSet "ms" has 0 Machines
    When the annotation "machineset.cluster.krtt.dev/skip-preflight-checks" is set to "KubernetesVersionSkew" on the MachineSet "ms"
    Then the MachineSet "ms" has 1 Machine

  # Cluster API v1.14 reconcileUnhealthyMachines runs the preflight checks before it deletes an unhealthy Machine.
  @row:machineset-replicas:R13 @row:machineset-replicas:R14 @row:machineset-replicas:R01
  Scenario: a failed Machine is not replaced while the control plane upgrades, nor is a scale-up made
    Given a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    And the control plane of the Cluster "c1" asks for version "v1.31.0" and reports version "v1.30.2"
    When Machine "a" of the set fails
    Then the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing "The replacement of failed Machine(s) "
    And the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing "is upgrading"
    And Machine "a" of the set still exists
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "b" to "False" with reason "UnhealthyNode" and message "Node b is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "b" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "b" of the set has condition "OwnerRemediated" with status "False" and reason "RemediationDeferred" and message containing "is upgrading"
    And Machine "b" of the set still exists
    When the MachineSet "ms" is scaled to 3
    Then the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "Scaling up from 2 to 3 replicas is blocked because:"
    And the MachineSet "ms" has condition "Remediating" with reason "Remediating" and message containing "waits for the preflight checks"
    And the MachineSet "ms" has 2 Machines
    And Machine "a" of the set still exists
    When the control plane of the Cluster "c1" reports version "v1.31.0"
    Then Machine "a" of the set is gone
    And Machine "b" of the set is gone
    And the MachineSet "ms" has 3 Machines

  @row:machineset-normal:S02
  Scenario: a template kind the API server does not serve is reported, not guessed
    Given a MachineSet "ms" of 1 Machine whose infrastructure template kind is not served
    Then the MachineSet "ms" has condition "ScalingUp" with reason "APIError" and message containing "does not serve the infrastructure template kind GhostMachineTemplate.ghost.krtt.dev"
    And the MachineSet "ms" has 0 Machines

  # Cluster API v1.14 MachineSet reconcileDelete reads no template: nothing the deletion does needs one.
  @row:machineset-normal:S02 @row:machineset-normal:S06 @row:machineset-deletion:X02
  Scenario: a MachineSet whose template kind is not served can still be deleted
    Given a MachineSet "ms" of 1 Machine
    And the MachineSet "ms" has 1 Machine
    When the infrastructure template of the MachineSet "ms" is pointed at a kind the API server does not serve
    Then the MachineSet "ms" has condition "ScalingUp" with reason "APIError" and message containing "does not serve the infrastructure template kind"
    When I delete the MachineSet "ms"
    Then the MachineSet "ms" controls 0 Machines
    And the MachineSet "ms" is gone

  @row:machineset-normal:S09
  Scenario: a MachineSet of a missing Cluster creates nothing
    Given a MachineSet "ms" of 1 Machine of the missing Cluster "nope"
    Then the MachineSet "ms" has condition "ScalingUp" with status "False" and reason "ClusterNotFound"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ClusterNotFound" and message containing "The Cluster nope named in spec.clusterName does not exist"
    And the MachineSet "ms" has condition "MachinesReady" with status "Unknown" and reason "ClusterNotFound"
    And the MachineSet "ms" has 0 Machines

  @row:machineset-normal:S05
  Scenario: a paused MachineSet is left alone until it is unpaused
    Given a paused MachineSet "ms" of 2 Machines
    Then the MachineSet "ms" has condition "Paused" with status "True" and reason "Paused"
    And the MachineSet "ms" has condition "Paused" with reason "Paused" and message containing "MachineSet has the cluster.krtt.dev/paused annotation"
    And the MachineSet "ms" has 0 Machines
    When the MachineSet "ms" is no longer paused
    Then the MachineSet "ms" has 2 Machines
    And the MachineSet "ms" has condition "Paused" with status "False" and reason "NotPaused"

  @row:machineset-normal:S11 @row:machineset-normal:S10
  Scenario: a MachineSet adopts a matching orphan and releases a Machine that no longer matches
    Given a Machine "loner" labelled for "ms"
    And a MachineSet "ms" of 2 Machines
    Then Machine "loner" of the set belongs to the set
    And the MachineSet "ms" has 2 Machines
    When Machine "loner" of the set loses the label "pool"
    Then Machine "loner" of the set belongs to no set
    And Machine "loner" of the set still exists
    And the MachineSet "ms" has 2 Machines

  @row:machineset-normal:S06 @row:machineset-deletion:X01 @row:machineset-deletion:X02 @row:machineset-normal:S01
  Scenario: deleting a MachineSet deletes its Machines, then the set
    Given a MachineSet "ms" of 2 Machines
    And the MachineSet "ms" has 2 Machines
    When I delete the MachineSet "ms"
    Then the MachineSet "ms" controls 0 Machines
    And the MachineSet "ms" is gone

  # Cluster API v1.14 Reconcile: getAndAdoptMachinesForMachineSet runs before reconcileDelete, which deletes
  # every Machine the set has, the adopted ones too.
  @row:machineset-deletion:X03 @row:machineset-deletion:X01 @row:machineset-deletion:X02
  Scenario: a MachineSet being deleted adopts a matching orphan and deletes it with its own Machines
    Given a MachineSet "ms" of 1 Machine
    And the Machines of "ms" are called "a"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When I delete the MachineSet "ms"
    Then Machine "a" of the set is being deleted
    When a Machine "loner" labelled for "ms"
    Then row "X03" fired for "ms"
    And a Normal Event of the MachineSet "ms" with reason "SuccessfulAdopt"
    And Machine "loner" of the set is gone
    And the MachineSet "ms" has condition "Deleting" with reason "Deleting" and message containing "Deleting 1 Machine"
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "a" of the set is gone
    And the MachineSet "ms" is gone

  @row:machineset-deletion:X02
  Scenario: a MachineSet deleted with another finalizer is left to it once its Machines are gone
    Given a MachineSet "ms" of 1 Machine with the finalizer "example.com/keep"
    And the MachineSet "ms" has 1 Machine
    When I delete the MachineSet "ms"
    Then the MachineSet "ms" controls 0 Machines
    And the MachineSet "ms" has condition "ScalingDown" with status "False" and reason "NotScalingDown"
    And the MachineSet "ms" has condition "Deleting" with reason "Deleting" and message containing "Deletion completed"
    And the status of the MachineSet "ms" names the state "Deleted"
    When the finalizer "example.com/keep" is removed from the MachineSet "ms"
    Then the MachineSet "ms" is gone

  @row:machineset-normal:S04
  Scenario: a MachineSet whose krtt finalizer is removed by hand during its deletion is left alone
    Given a MachineSet "ms" of 1 Machine with the finalizer "example.com/keep"
    And the Machines of "ms" are called "a"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When I delete the MachineSet "ms"
    Then Machine "a" of the set is being deleted
    When the finalizer "cluster.krtt.dev/machineset" is removed from the MachineSet "ms"
    Then row "S04" fired for "ms"
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "a" of the set is gone
    When the finalizer "example.com/keep" is removed from the MachineSet "ms"
    Then the MachineSet "ms" is gone

  @row:machineset-normal:S08
  Scenario: a state the tables do not know restarts a live set from Pending
    Given a MachineSet "ms" of 1 Machine
    And the MachineSet "ms" reaches phase "Stable"
    When the status of the MachineSet "ms" names the state "Bogus"
    Then the MachineSet "ms" reaches phase "Stable"
    And the MachineSet "ms" has 1 Machine

  @row:machineset-normal:S07 @row:machineset-deletion:X02
  Scenario: a state the tables do not know restarts the deletion of a set being deleted
    Given a MachineSet "ms" of 1 Machine
    And the MachineSet "ms" has 1 Machine
    And the MachineSet "ms" is paused
    When I delete the MachineSet "ms"
    And the status of the MachineSet "ms" names the state "Bogus"
    And the MachineSet "ms" is no longer paused
    Then the MachineSet "ms" is gone

  @serial @row:machine-normal:N44 @row:machineset-replicas:R10
  Scenario: a Machine counts as available once it is Available, Ready for the template's minReadySeconds
    Given a MachineSet "ms" of 1 Machine with minReadySeconds 600
    And the Machines of "ms" are called "a"
    When the providers bring Machine "a" of the set to Running
    Then the MachineSet "ms" reports 1 replica, 1 ready and 0 available
    And Machine "a" of the set has condition "Available" with status "False" and reason "WaitingForMinReadySeconds"
    When 11 minutes pass on the operator's clock
    Then Machine "a" of the set has condition "Available" with status "True" and reason "Available"
    And the MachineSet "ms" reports 1 replica, 1 ready and 1 available

  @row:machineset-replicas:R05 @row:machineset-replicas:R10
  Scenario: a Machine deleted by hand and held by a hook is replaced only once it is gone
    Given every Machine event of the set "ms" is watched
    And a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    When Machine "a" of the set is deleted by hand
    Then Machine "a" of the set is being deleted
    And the MachineSet "ms" reports 2 replicas of which 1 is being deleted
    And the MachineSet "ms" reaches phase "Stable"
    And the MachineSet "ms" has 1 Machine
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then Machine "a" of the set is gone
    And the MachineSet "ms" has 2 Machines
    And the set "ms" never had more than 2 Machines at any watch event

  @row:machineset-replicas:R05
  Scenario: a set pointed at new templates keeps its Machines and clones the new ones on scale-up
    Given a MachineSet "ms" of 1 Machine
    And the Machines of "ms" are called "a"
    When the MachineSet "ms" is pointed at new templates "v2"
    And the MachineSet "ms" is scaled to 2
    Then the MachineSet "ms" has 2 Machines
    And the new Machine of "ms" is called "b"
    And Machine "a" of the set has provider objects cloned from the templates "ms"
    And Machine "b" of the set has provider objects cloned from the templates "v2"
    And Machine "a" of the set still exists

  # Cluster API v1.14 setReplicas (machineset_controller_status.go) and VersionsFromMachines: status.versions counts
  # the Machines by the version their Node's kubelet reports, spec.version before they have a Node; the Cluster's
  # status.workers.versions adds its workers up (setWorkersReplicas).
  Scenario: status.versions counts a set's Machines by the Kubernetes version they run
    Given a MachineSet "ms" of 2 Machines with version v1.38.0
    Then the MachineSet "ms" has 2 Machines
    And the MachineSet "ms" reports the versions "v1.38.0: 2"
    And the Cluster "c1" reports the worker versions "v1.38.0: 2"
    When the providers bring every Machine of "ms" to Running
    Then the MachineSet "ms" reports the versions "v1.37.0: 2"
    And the Cluster "c1" reports the worker versions "v1.37.0: 2"

  # Cluster API v1.14 computeDesiredMachine (machineset_controller.go) and MachineSetMachineNameGenerator
  # (internal/topology/names): spec.machineNaming.template names new Machines; their provider objects share the name.
  @row:machineset-replicas:R05
  Scenario: spec.machineNaming.template names the Machines a set creates and their provider objects
    Given a MachineSet "ms" of 2 Machines named by the template "{{ .cluster.name }}-pool-{{ .random }}"
    Then every Machine of the MachineSet "ms" and its provider objects are named "c1-pool-" and five random characters

  # Cluster API v1.14 syncMachines (machineset_controller.go): the template's labels reach the Machines and,
  # through updateLabelsAndAnnotations, their bootstrap and infrastructure objects.
  @row:machineset-normal:S12
  Scenario: a template label and a drain timeout reach the existing Machines and their provider objects in place
    Given a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    And Machine "a" of the set gets the label "owner" = "me"
    When the template of the MachineSet "ms" gets the label "tier" = "web" and nodeDrainTimeoutSeconds 300
    Then Machine "a" of the set has the label "tier" = "web" and nodeDrainTimeoutSeconds 300
    And Machine "b" of the set has the label "tier" = "web" and nodeDrainTimeoutSeconds 300
    And the provider objects of Machine "a" of the set have the label "tier" = "web"
    And the provider objects of Machine "b" of the set have the label "tier" = "web"
    And Machine "a" of the set still exists
    And the MachineSet "ms" has 2 Machines
    When the template of the MachineSet "ms" loses the label "tier"
    Then Machine "a" of the set has no label "tier" and the label "owner" = "me"
    And the provider objects of Machine "a" of the set have no label "tier"
    And Machine "b" of the set still exists

  @row:machineset-normal:S12
  Scenario: a readiness gate added to the template reaches the existing Machines in place, as Cluster API's syncMachines
    Given a MachineSet "ms" of 2 Machines
    And the Machines of "ms" are called "a" and "b"
    When the template of the MachineSet "ms" gets the readiness gate "example.com/SoftwareInstalled"
    Then Machine "a" of the set has the readiness gate "example.com/SoftwareInstalled"
    And Machine "b" of the set has the readiness gate "example.com/SoftwareInstalled"
    And Machine "a" of the set still exists
    And the MachineSet "ms" has 2 Machines

  # Cluster API v1.14 MachineSetMachineNameGenerator (internal/topology/names): a name over 63 characters keeps its
  # first 58 and gets five random ones, the default {{ .machineSet.name }}-{{ .random }} too.
  @row:machineset-replicas:R05
  Scenario: a set whose name is 70 characters creates its Machines, labelled with a hash of the name
    Given a MachineSet "workers-of-the-very-long-named-pool-in-the-eu-central-zone-1a-abcdefgh" of 2 Machines selecting "pool" = "long"
    Then the MachineSet "workers-of-the-very-long-named-pool-in-the-eu-central-zone-1a-abcdefgh" has 2 Machines
    And the Machines of "workers-of-the-very-long-named-pool-in-the-eu-central-zone-1a-abcdefgh" carry the set-name label "hash_9AWoWw_z"
    And every Machine of the MachineSet "workers-of-the-very-long-named-pool-in-the-eu-central-zone-1a-abcdefgh" and its provider objects are named "workers-of-the-very-long-named-pool-in-the-eu-central-zone" and five random characters
    And no reconcile of the "machineset" controller has panicked

  @row:machineset-replicas:R05
  Scenario: a Machine create refused by the API server is reported, not a panic
    Given the API server refuses new Machines in this namespace
    And a MachineSet "ms" of 1 Machine
    Then the MachineSet "ms" has condition "ScalingUp" with status "True" and reason "ScalingUp"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "Scaling up from 0 to 1 replicas is blocked because:"
    And the MachineSet "ms" has condition "ScalingUp" with reason "ScalingUp" and message containing "no new Machines in namespace"
    And a Warning Event of the MachineSet "ms" tells row "R05" with reason "MachineCreationFailed"
    And the MachineSet "ms" has 0 Machines
    And no reconcile of the "machineset" controller has panicked
    When the API server accepts new Machines in this namespace
    Then the MachineSet "ms" has 1 Machine

  @row:machineset-normal:S14 @row:machineset-normal:S15
  Scenario: two MachineSets whose selectors overlap are both told so, and told again once mended
    Given a MachineSet "a" of 1 Machine
    And the MachineSet "a" has 1 Machine
    When a MachineSet "b" of 1 Machine selecting the Machines of "a" and its own label "gpu"
    Then the MachineSet "a" has condition "SelectorUnique" with status "False" and reason "SelectorOverlap"
    And the MachineSet "a" has condition "SelectorUnique" with reason "SelectorOverlap" and message containing "can select the same Machines as MachineSet b (selector gpu=yes,pool=a) of Cluster c1"
    And the MachineSet "b" has condition "SelectorUnique" with reason "SelectorOverlap" and message containing "can select the same Machines as MachineSet a (selector pool=a) of Cluster c1"
    And a Warning Event of the MachineSet "a" with reason "SelectorOverlap" says "MachineSet b (selector gpu=yes,pool=a)"
    And a Warning Event of the MachineSet "b" with reason "SelectorOverlap" says "MachineSet a (selector pool=a)"
    And the MachineSet "a" has 1 Machine
    And the MachineSet "b" has 1 Machine
    When the MachineSet "b" selects only its own Machines
    Then the MachineSet "a" has condition "SelectorUnique" with status "True" and reason "SelectorUnique"
    And the MachineSet "b" has condition "SelectorUnique" with status "True" and reason "SelectorUnique"
    And the MachineSet "a" has 1 Machine
    And the MachineSet "b" has 1 Machine
    And the operator logged no error about the scenario's objects

  @row:machineset-replicas:R05 @row:machineset-replicas:R06 @row:machineset-replicas:R10
  Scenario: scaling a set of Running Machines 3 → 6 → 3 needs nobody: an Event per Machine created or deleted, no Warning, no error logged
    Given a MachineSet "ms" of 3 Machines
    And the MachineSet "ms" has 3 Machines
    And the providers bring every Machine of "ms" to Running
    When the MachineSet "ms" is scaled to 6
    Then the MachineSet "ms" has 6 Machines
    And the MachineSet "ms" has 6 Events with reason "SuccessfulCreate"
    And a Normal Event of the MachineSet "ms" with reason "SuccessfulCreate" says "Created Machine"
    When the providers bring the Machines of "ms" that are not Running to Running
    Then the MachineSet "ms" reports 6 replicas, 6 ready and 6 available
    When the MachineSet "ms" is scaled to 3
    Then the MachineSet "ms" controls 3 Machines
    And the MachineSet "ms" has 3 Events with reason "SuccessfulDelete"
    And a Normal Event of the MachineSet "ms" with reason "SuccessfulDelete" says "Deleted Machine"
    And the MachineSet "ms" reports 3 replicas, 3 ready and 3 available
    And the MachineSet "ms" reaches phase "Stable"
    And no Warning Event was recorded in the scenario
    And the operator logged no error about the scenario's objects
