@machinedeployment
Feature: A MachineDeployment rolls its Machines out to a new template
  As a platform engineer I change a MachineDeployment's template; it makes
  one MachineSet per template revision and replaces the old Machines as
  its strategy allows, deletes the old MachineSets once the rollout is done
  (or keeps revisionHistoryLimit of them for a rollback), grows only the
  current MachineSet when scaled during a rollout (spreading a scale over
  its MachineSets only while paused), and says when a rollout is stuck.

  Background:
    Given a Cluster "c1"

  @row:machinedeployment-normal:N03 @row:machinedeployment-rollout:O03 @row:machinedeployment-rollout:O07
  @row:machinedeployment-rollout:O08 @row:machinedeployment-rollout:O09 @row:machinedeployment-rollout:O12
  @row:machinedeployment-rollout:O15 @row:machinedeployment-normal:N10
  Scenario: a rolling update of 3 Machines with maxSurge 1 and maxUnavailable 0 never leaves the limits
    Given a MachineDeployment "md" of 3 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    Then the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" reaches phase "Running"
    And the MachineDeployment "md" has 1 MachineSet
    And the current MachineSet of "md" is called "v1"
    And every Machine of the deployment "md" has the label "cluster.krtt.dev/deployment-name" = "md"
    And the MachineDeployment "md" is at revision "1"
    When every Machine event of the deployment "md" is watched
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the MachineDeployment "md" has 2 MachineSets
    And the current MachineSet of "md" is called "v2"
    And every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" reaches phase "Running"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "RolloutComplete"
    And the MachineDeployment "md" has condition "Available" with status "True" and reason "Available"
    And the MachineDeployment "md" has condition "Deleting" with status "False" and reason "NotDeleting"
    And the MachineSet called "v1" is gone
    And the MachineDeployment "md" is at revision "2"
    And the MachineDeployment "md" has condition "RollingOut" with status "False" and reason "NotRollingOut"
    And the MachineDeployment "md" has condition "MachinesUpToDate" with status "True" and reason "UpToDate"
    And the MachineDeployment "md" has condition "MachinesReady" with status "True" and reason "Ready"
    And the MachineDeployment "md" has condition "ScalingUp" with status "False" and reason "NotScalingUp"
    And the MachineDeployment "md" has condition "ScalingDown" with status "False" and reason "NotScalingDown"
    And the MachineDeployment "md" has 1 MachineSet
    And the deployment "md" never had more than 4 Machines nor fewer than 3 available at any watch event
    And the MachineDeployment "md" has 2 Events with reason "SuccessfulCreate"
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulCreate" says "Created MachineSet"
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulScale" says "Scaled up MachineSet"
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulScale" says "Scaled down MachineSet"
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulDelete" says "Deleted MachineSet"

  @row:machinedeployment-rollout:O07 @row:machinedeployment-rollout:O09 @row:machinedeployment-normal:N08
  Scenario: a template change in the middle of a rollout starts a new revision; the old ones go once it is done
    Given a MachineDeployment "md" of 3 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the current MachineSet of "md" is called "v1"
    When every Machine event of the deployment "md" is watched
    And the providers stop bringing Machines of the deployment "md" to Running
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the MachineDeployment "md" has 2 MachineSets with replicas
    And the current MachineSet of "md" is called "v2"
    And the MachineSet called "v2" asks for 1 replica
    When the template of the MachineDeployment "md" is pointed at new templates "v3"
    And the providers bring every Machine of the deployment "md" to Running as it comes
    Then every Machine of the deployment "md" is of the current MachineSet
    And the current MachineSet of "md" is called "v3"
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineSet called "v1" is gone
    And the MachineSet called "v2" is gone
    And the MachineDeployment "md" has 1 MachineSet
    And the deployment "md" never had more than 4 Machines nor fewer than 3 available at any watch event

  # Cluster API v1.14 reconcileUnhealthyMachines: only the MachineSet of the current revision remediates; the
  # rollout replaces the old sets' Machines, unhealthy ones first, and tells a marked one (CannotBeRemediated).
  @row:machineset-replicas:R15
  Scenario: an old MachineSet of a rollout leaves its failed and unhealthy Machines to the rollout
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When the providers stop bringing Machines of the deployment "md" to Running
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the current MachineSet of "md" is called "v2"
    And the MachineSet called "v2" asks for 1 replica
    And the Machines of "v1" are called "a" and "b"
    And Machine "a" of the set fails
    Then the MachineSet called "v1" has condition "Remediating" with status "True" and reason "Remediating" and message containing "are not replaced: the set is an old revision (1) of MachineDeployment md (revision 2)"
    And Machine "a" of the set still exists
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "b" to "False" with reason "UnhealthyNode" and message "Node b is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "b" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "b" of the set has condition "OwnerRemediated" with status "False" and reason "CannotBeRemediated" and message containing "Machine won't be remediated because it is pending removal due to rollout"
    And the MachineDeployment "md" has condition "Remediating" with status "True" and reason "Remediating" and message containing ": Machine won't be remediated because it is pending removal due to rollout"
    And Machine "b" of the set still exists
    When the providers bring every Machine of the deployment "md" to Running as it comes
    Then every Machine of the deployment "md" is of the current MachineSet
    And Machine "a" of the set is gone
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineDeployment "md" has condition "Remediating" with status "False" and reason "NotRemediating"

  # Cluster API v1.14 Reconcile runs reconcileUnhealthyMachines before syncReplicas: an old set being scaled
  # down tells its marked Machines that the rollout removes them in the same pass.
  @row:machineset-replicas:R16
  Scenario: an old MachineSet being scaled down tells a marked Machine that the rollout removes it
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    And the Machines of "v1" are called "a" and "b"
    And Machine "a" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold"
    And Machine "a" of the set has annotation "cluster.krtt.dev/delete-machine"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then Machine "a" of the set is being deleted
    And the MachineSet called "v1" asks for 1 replica
    When another controller sets the condition "HealthCheckSucceeded" of the Machine "b" to "False" with reason "UnhealthyNode" and message "Node b is unhealthy"
    And another controller sets the condition "OwnerRemediated" of the Machine "b" to "False" with reason "WaitingForRemediation" and message "Waiting for remediation"
    Then Machine "b" of the set has condition "OwnerRemediated" with status "False" and reason "CannotBeRemediated" and message containing "Machine won't be remediated because it is pending removal due to rollout"
    And Machine "b" of the set still exists
    And Machine "a" of the set is being deleted
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/hold" is removed from Machine "a" of the set
    Then every Machine of the deployment "md" is of the current MachineSet
    And Machine "b" of the set is gone
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available

  # Cluster API v1.14 spreads a scale by size only while paused (sync, scale); otherwise its rollout
  # planner grows only the current MachineSet (reconcileNewMachineSet) and shrinks the old ones.
  @row:machinedeployment-rollout:O18 @row:machinedeployment-rollout:O17 @row:machinedeployment-rollout:O14
  Scenario: a scale during a rollout grows only the current MachineSet, and a scale down cuts it to spec.replicas
    Given a MachineDeployment "md" of 3 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the current MachineSet of "md" is called "v1"
    When the providers stop bringing Machines of the deployment "md" to Running
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the current MachineSet of "md" is called "v2"
    And the MachineSet called "v2" asks for 1 replica
    And the MachineDeployment "md" is scaled to 6
    Then the MachineSet called "v2" asks for 4 replicas
    And the MachineSet called "v1" asks for 3 replicas
    When the MachineDeployment "md" is scaled to 2
    Then the MachineSet called "v2" asks for 2 replicas
    When the providers bring every Machine of the deployment "md" to Running as it comes
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    When every Machine of the deployment "md" gets the pre-terminate hook "hold"
    And the MachineDeployment "md" is scaled to 1
    Then the MachineDeployment "md" reaches phase "ScalingDown"
    And the MachineDeployment "md" reaches the state "ScalingDown"
    When every Machine of the deployment "md" loses the pre-terminate hook "hold"
    Then the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    And the MachineDeployment "md" reaches phase "Running"

  @row:machinedeployment-rollout:O10 @row:machinedeployment-rollout:O12 @row:machinedeployment-rollout:O08
  Scenario: Recreate deletes every old Machine before it creates new ones
    Given a MachineDeployment "md" of 2 Machines with strategy Recreate
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    And every Machine of the deployment "md" gets the pre-terminate hook "hold"
    When every Machine event of the deployment "md" is watched
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    # The hook keeps the old Machines being deleted, so the deployment is seen waiting for them (O12).
    Then the MachineDeployment "md" reports 2 replicas, 0 updated and 0 available
    # Cluster API v1.14 setRollingOutCondition (cluster_controller_status.go): the deployments' RollingOut.
    And the Cluster "c1" has condition "RollingOut" with status "True" and reason "RollingOut" and message containing "* MachineDeployment md:"
    And the Cluster "c1" has condition "RollingOut" with status "True" and reason "RollingOut" and message containing "  * Rolling out 2 not up-to-date replicas"
    When every Machine of the deployment "md" loses the pre-terminate hook "hold"
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineSet called "v1" is gone
    And the Cluster "c1" has condition "RollingOut" with status "False" and reason "NotRollingOut"
    And the deployment "md" never had more than 2 Machines nor fewer than 0 available at any watch event

  # Cluster API v1.14 setUpToDateCondition (machine_controller_status.go): a Machine is up to date when its
  # MachineSet's template has the deployment's rollout fields, worded as mdutil.MachineTemplateUpToDate.
  @row:machinedeployment-rollout:O04 @row:machinedeployment-rollout:O11 @row:machinedeployment-rollout:O08
  Scenario: OnDelete creates a new Machine only when a user deletes an old one
    Given a MachineDeployment "md" of 2 Machines with strategy OnDelete
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    And every Machine of the deployment "md" is up to date
    And the MachineDeployment "md" reports 2 up-to-date replicas
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the MachineDeployment "md" has condition "Progressing" with status "True" and reason "WaitingForDeletion"
    And every Machine of the MachineSet called "v1" is not up to date, saying "* SimBootstrapConfig is not up-to-date; * SimMachine is not up-to-date"
    And the MachineSet called "v1" reports 0 up-to-date replicas
    And the MachineSet called "v1" has condition "MachinesUpToDate" with status "False" and reason "NotUpToDate" and message containing "* SimMachine is not up-to-date"
    And the MachineDeployment "md" reports 0 up-to-date replicas
    And the current MachineSet of "md" is called "v2"
    And the MachineSet called "v2" asks for 0 replicas
    And the MachineSet called "v1" asks for 2 replicas
    And the MachineDeployment "md" has condition "RollingOut" with status "True" and reason "RollingOut" and message containing "Rolling out 2 not up-to-date replicas"
    And the MachineDeployment "md" has condition "RollingOut" with status "True" and reason "RollingOut" and message containing "* SimBootstrapConfig is not up-to-date"
    And the MachineSet called "v1" has the annotation "machineset.cluster.krtt.dev/disable-machine-create" = "true"
    And the MachineSet called "v2" has the annotation "machineset.cluster.krtt.dev/disable-machine-create" = "false"
    And the MachineDeployment "md" reaches phase "Running"
    And the MachineDeployment "md" has condition "MachinesUpToDate" with status "False" and reason "NotUpToDate" and message containing "* SimMachine is not up-to-date"
    When a user deletes an old Machine of the deployment "md"
    Then the MachineSet called "v1" asks for 1 replica
    And the MachineSet called "v2" asks for 1 replica
    When a user deletes an old Machine of the deployment "md"
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineDeployment "md" reaches phase "Running"
    And every Machine of the deployment "md" is up to date
    And the MachineSet called "v2" reports 2 up-to-date replicas
    And the MachineSet called "v2" has condition "MachinesUpToDate" with status "True" and reason "UpToDate" and message containing ""
    And the MachineDeployment "md" reports 2 up-to-date replicas

  # Cluster API v1.14 patchNode, shouldNodeHaveOutdatedTaint (machine_controller_noderef.go): the Node of a Machine
  # whose MachineSet is of an older revision than its MachineDeployment gets the PreferNoSchedule outdated-revision
  # taint, so the Pods a rollout evicts keep off the Nodes it replaces next; the taint goes when the set is current again.
  @row:machine-normal:N40
  Scenario: the Nodes a rollout will replace are tainted outdated-revision until a rollback makes their MachineSet current again
    Given a MachineDeployment "md" of 2 Machines with strategy OnDelete
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    And the Node of every Machine of the MachineSet called "v1" does not have the taint "node.cluster.krtt.dev/outdated-revision:PreferNoSchedule"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the current MachineSet of "md" is called "v2"
    And the Node of every Machine of the MachineSet called "v1" has the taint "node.cluster.krtt.dev/outdated-revision:PreferNoSchedule"
    When a user deletes an old Machine of the deployment "md"
    Then the MachineSet called "v2" asks for 1 replica
    And the Node of every Machine of the MachineSet called "v2" does not have the taint "node.cluster.krtt.dev/outdated-revision:PreferNoSchedule"
    When the template of the MachineDeployment "md" is pointed back at the templates "md"
    Then the current MachineSet of "md" is "v1" with revision 3
    And the Node of every Machine of the MachineSet called "v1" does not have the taint "node.cluster.krtt.dev/outdated-revision:PreferNoSchedule"
    And the Node of every Machine of the MachineSet called "v2" has the taint "node.cluster.krtt.dev/outdated-revision:PreferNoSchedule"

  # Cluster API v1.14 computeDesiredMS (machinedeployment_rollout_planner.go) and syncMachines (machineset_controller.go):
  # a template's taints reach the MachineSets and their Machines in place; they do not roll out
  # (MachineTemplateDeepCopyRolloutFields leaves them out), and the Machines keep them on their Nodes.
  @row:machinedeployment-normal:N07 @row:machineset-normal:S12 @row:machine-normal:N40
  Scenario: a taint added to a MachineDeployment's template reaches its Machines and their Nodes in place, without a rollout
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" gets the Always taint "example.com/dedicated=gpu:NoSchedule"
    Then every Machine of the MachineSet called "v1" has the taint "example.com/dedicated=gpu:NoSchedule" in its spec
    And the Node of every Machine of the MachineSet called "v1" has the taint "example.com/dedicated:NoSchedule"
    And the MachineDeployment "md" has 1 MachineSet
    And every Machine of the deployment "md" is up to date

  # Cluster API v1.14 rollout planner computeDesiredMS (machinedeployment_rollout_planner.go): machineNaming passes
  # to every MachineSet of the deployment, which names its Machines by it.
  Scenario: spec.machineNaming of a MachineDeployment names the Machines of its MachineSets
    Given a MachineDeployment "md" of 2 Machines named by the template "{{ .cluster.name }}-md-{{ .random }}"
    And the current MachineSet of "md" is called "v1"
    Then every Machine of the MachineSet called "v1" and its provider objects are named "c1-md-" and five random characters

  # Cluster API v1.14 reconcileOldMachineSetsOnDelete: an old MachineSet gives up spec.replicas - status.replicas,
  # and status.replicas counts a Machine being deleted, so the replacement waits until the deleted Machine is gone.
  @row:machinedeployment-rollout:O11
  Scenario: OnDelete replaces a deleted old Machine only once it is gone
    Given a MachineDeployment "md" of 2 Machines with strategy OnDelete
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the current MachineSet of "md" is called "v2"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "WaitingForDeletion"
    And an old Machine of the deployment "md" is called "old"
    And Machine "old" of the set has annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/backup"
    And Machine "old" of the set is deleted by hand
    Then Machine "old" of the set is being deleted
    And the MachineDeployment "md" reports 2 replicas, 0 updated and 1 available
    And the MachineSet called "v1" asks for 2 replicas
    And the MachineSet called "v2" asks for 0 replicas
    When the annotation "pre-terminate.delete.hook.machine.cluster.krtt.dev/backup" is removed from Machine "old" of the set
    Then Machine "old" of the set is gone
    And the MachineSet called "v1" asks for 1 replica
    And the MachineSet called "v2" asks for 1 replica
    And the MachineDeployment "md" reports 2 replicas, 1 updated and 2 available

  # Cluster API v1.14 reconcileOldMachineSetsOnDelete: a scale down takes the excess off the old MachineSets.
  @row:machinedeployment-rollout:O19
  Scenario: OnDelete scaled down during a rollout takes the excess off the old MachineSets, oldest first
    Given a MachineDeployment "md" of 3 Machines with strategy OnDelete
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the current MachineSet of "md" is called "v2"
    And a user deletes an old Machine of the deployment "md"
    Then the MachineSet called "v1" asks for 2 replicas
    And the MachineSet called "v2" asks for 1 replica
    When the MachineDeployment "md" is scaled to 2
    Then the MachineSet called "v1" asks for 1 replica
    And the MachineSet called "v2" asks for 1 replica
    And the MachineDeployment "md" reports 2 replicas, 1 updated and 2 available
    When a user deletes an old Machine of the deployment "md"
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available

  @row:machinedeployment-rollout:O02 @row:machinedeployment-rollout:O01 @row:machinedeployment-rollout:O03
  Scenario: a paused deployment rolls nothing out but still scales
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    When the MachineDeployment "md" is paused
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the MachineDeployment "md" has condition "Progressing" with status "Unknown" and reason "RolloutPaused"
    And the MachineDeployment "md" has condition "Paused" with status "False" and reason "NotPaused"
    And the MachineDeployment "md" has 1 MachineSet
    When the MachineDeployment "md" is scaled to 3
    Then the MachineDeployment "md" reports 3 replicas, 0 updated and 3 available
    And the MachineDeployment "md" has 1 MachineSet
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulScale" says "Scaled MachineSet"
    When the MachineDeployment "md" is resumed
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" has condition "Paused" with status "False" and reason "NotPaused"

  # Cluster API v1.14 getAndAdoptMachineSetsForDeployment adopts a MachineSet without a controller that the selector
  # matches; FindNewAndOldMachineSets compares templates, so one of the current template is the current MachineSet.
  @row:machinedeployment-normal:N11 @row:machinedeployment-normal:N07
  Scenario: a MachineSet without a controller that the selector matches is adopted; of the current template, it is the current one
    Given a paused MachineDeployment "md" of 2 Machines
    And a MachineSet "orphan" of 2 Machines of the template of the MachineDeployment "md", without a controller
    And the providers bring every Machine of the deployment "md" to Running as it comes
    When the annotation "cluster.krtt.dev/paused" is removed from the MachineDeployment "md"
    Then the MachineSet called "orphan" is controlled by the MachineDeployment "md"
    And a Normal Event of the MachineDeployment "md" with reason "SuccessfulAdopt" says "Adopted MachineSet"
    And the current MachineSet of "md" is "orphan" with revision 1
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineDeployment "md" has 1 MachineSet
    And the MachineDeployment "md" has 0 Events with reason "SuccessfulCreate"

  @row:machinedeployment-normal:N07
  Scenario: a rollback to an earlier template kept by revisionHistoryLimit reuses its MachineSet as the newest revision
    Given a MachineDeployment "md" of 2 Machines with revisionHistoryLimit 1
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the current MachineSet of "md" is called "v2"
    And every Machine of the deployment "md" is of the current MachineSet
    When the template of the MachineDeployment "md" is pointed back at the templates "md"
    Then the current MachineSet of "md" is "v1" with revision 3
    And every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineDeployment "md" has 2 MachineSets

  # Cluster API v1.14 computeDesiredMS: every MachineSet, old ones included, carries the desired and maximum
  # replicas MachineSetAnnotationsFromMachineDeployment derives from the deployment, on every reconcile.
  @row:machinedeployment-normal:N12 @row:machinedeployment-rollout:O17
  Scenario: every MachineSet of a deployment, old ones included, is annotated with the size the deployment wants
    Given a MachineDeployment "md" of 2 Machines with revisionHistoryLimit 1
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the current MachineSet of "md" is called "v2"
    And every Machine of the deployment "md" is of the current MachineSet
    And the MachineSet called "v1" has the annotation "machinedeployment.cluster.krtt.dev/desired-replicas" = "2"
    When the MachineDeployment "md" is scaled to 3
    Then the MachineSet called "v2" has the annotation "machinedeployment.cluster.krtt.dev/desired-replicas" = "3"
    And the MachineSet called "v1" has the annotation "machinedeployment.cluster.krtt.dev/desired-replicas" = "3"
    And the MachineSet called "v1" has the annotation "machinedeployment.cluster.krtt.dev/max-replicas" = "4"
    And row "N12" fired for "md"
    When the maxSurge of the MachineDeployment "md" is set to 2
    Then the MachineSet called "v2" has the annotation "machinedeployment.cluster.krtt.dev/max-replicas" = "5"
    And the MachineSet called "v1" has the annotation "machinedeployment.cluster.krtt.dev/max-replicas" = "5"
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" has 2 MachineSets

  # Cluster API v1.14 mdutil.MachineTemplateUpToDate compares the version first; setUpToDateCondition then the
  # version the Node's kubelet reports.
  Scenario: a Kubernetes version upgrade replaces every Machine
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When the template of the MachineDeployment "md" is upgraded to version "v1.37.1"
    Then every Machine of the deployment "md" is of the current MachineSet
    And every Machine of the deployment "md" has version "v1.37.1"
    And every Machine of the deployment "md" is updating while its Node's kubelet reports "v1.37.0"
    And the MachineDeployment "md" reports the versions "v1.37.0: 2"
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the MachineSet called "v1" asks for 0 replicas
    # Cluster API's cleanupDeployment waits for DeploymentComplete: every Machine up to date.
    When the kubelets of the deployment "md" report "v1.37.1"
    Then every Machine of the deployment "md" is up to date
    And the MachineDeployment "md" reports the versions "v1.37.1: 2"
    And the MachineSet called "v1" is gone
    And the MachineDeployment "md" has 1 MachineSet

  # Cluster API v1.14 computeDesiredOldMS: the in-place fields reach the old MachineSets too.
  @row:machinedeployment-normal:N07
  Scenario: template labels reach the old Machines an OnDelete rollout still waits to replace
    Given a MachineDeployment "md" of 2 Machines with strategy OnDelete
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    When the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "WaitingForDeletion"
    And the template of the MachineDeployment "md" gets the label "tier" = "web"
    Then every Machine of the deployment "md" has the label "tier" = "web"
    And the MachineDeployment "md" reports 2 replicas, 0 updated and 2 available

  @row:machinedeployment-normal:N07
  Scenario: template labels reach the Machines in place, nothing rolls
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    When the template of the MachineDeployment "md" gets the label "tier" = "web"
    Then every Machine of the deployment "md" has the label "tier" = "web"
    And the MachineDeployment "md" has 1 MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available

  # Cluster API v1.14 computeDesiredMS (MachineSetAnnotationsFromMachineDeployment): every MachineSet carries the
  # deployment's annotations and its template's labels, in place; what the deployment drops leaves the sets.
  @row:machinedeployment-normal:N07
  Scenario: a MachineDeployment's annotations and template labels reach its MachineSet and leave it with them
    Given a MachineDeployment "md" of 1 Machine
    And the current MachineSet of "md" is called "v1"
    When the annotation "example.com/owner" is set to "team-a" on the MachineDeployment "md"
    And the template of the MachineDeployment "md" gets the label "tier" = "web"
    Then the MachineSet called "v1" has the annotation "example.com/owner" = "team-a"
    And the MachineSet called "v1" has the label "tier" = "web"
    When the annotation "example.com/owner" is removed from the MachineDeployment "md"
    And the template of the MachineDeployment "md" loses the label "tier"
    Then the MachineSet called "v1" has no annotation "example.com/owner"
    And the MachineSet called "v1" has no label "tier"
    And the MachineDeployment "md" has 1 MachineSet

  # Cluster API v1.14 MachineTemplateDeepCopyRolloutFields: readinessGates change in place.
  @row:machinedeployment-normal:N07
  Scenario: a readiness gate added to the template reaches the Machines in place and counts in their availability
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    When the template of the MachineDeployment "md" gets the readiness gate "example.com/SoftwareInstalled"
    Then every Machine of the deployment "md" has the readiness gate "example.com/SoftwareInstalled"
    And the MachineDeployment "md" has 1 MachineSet
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 0 available
    When another controller sets the condition "example.com/SoftwareInstalled" of every Machine of the deployment "md" to "True" with reason "Installed"
    Then the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available

  @serial @row:machinedeployment-rollout:O05 @row:machinedeployment-rollout:O06
  Scenario: a rollout without progress for progressDeadlineSeconds is reported and goes on
    Given a MachineDeployment "md" of 1 Machine with progressDeadlineSeconds 60
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    When the providers stop bringing Machines of the deployment "md" to Running
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    And the MachineDeployment "md" reports 2 replicas, 1 updated and 1 available
    And 2 minutes pass on the operator's clock
    Then the MachineDeployment "md" has condition "Progressing" with status "False" and reason "ProgressDeadlineExceeded"
    And the MachineDeployment "md" reaches phase "ScalingDown"
    And a Warning Event of the MachineDeployment "md" tells row "O05" moving it to "RolloutStalled"
    When the providers bring every Machine of the deployment "md" to Running as it comes
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "RolloutComplete"
    And the MachineDeployment "md" reaches phase "Running"

  @row:machinedeployment-normal:N05 @row:machinedeployment-deletion:X01 @row:machinedeployment-deletion:X02 @row:machinedeployment-normal:N01
  Scenario: deleting a MachineDeployment deletes its MachineSets and their Machines first
    Given a MachineDeployment "md" of 2 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available
    And the current MachineSet of "md" is called "v1"
    When I delete the MachineDeployment "md"
    Then the MachineSet called "v1" is gone
    And the MachineDeployment "md" is gone

  @row:machinedeployment-normal:N06
  Scenario: a MachineDeployment of a Cluster that does not exist waits
    Given a MachineDeployment "md" of 1 Machine of the missing Cluster "c9"
    Then the MachineDeployment "md" has condition "Progressing" with status "False" and reason "ClusterNotFound"
    And the MachineDeployment "md" has 0 MachineSets

  @row:machinedeployment-normal:N04
  Scenario: a paused MachineDeployment makes nothing
    Given a paused MachineDeployment "md" of 1 Machine
    Then the MachineDeployment "md" has condition "Paused" with status "True" and reason "Paused" and message containing "MachineDeployment has the cluster.krtt.dev/paused annotation"
    And the MachineDeployment "md" has 0 MachineSets

  @row:machinedeployment-normal:N02
  Scenario: a template kind the API server does not serve is an API error
    Given a MachineDeployment "md" of 1 Machine whose infrastructure template kind is not served
    Then the MachineDeployment "md" has condition "Progressing" with status "False" and reason "APIError"
    And the MachineDeployment "md" has 0 MachineSets

  # Cluster API v1.14 MachineDeployment reconcileDelete reads no template: nothing the deletion does needs one.
  @row:machinedeployment-normal:N02 @row:machinedeployment-normal:N05 @row:machinedeployment-deletion:X02
  Scenario: a MachineDeployment whose template kind is not served can still be deleted
    Given a MachineDeployment "md" of 1 Machine
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    And the current MachineSet of "md" is called "v1"
    When the infrastructure template of the MachineDeployment "md" is pointed at a kind the API server does not serve
    Then the MachineDeployment "md" has condition "Progressing" with status "False" and reason "APIError"
    When I delete the MachineDeployment "md"
    Then the MachineSet called "v1" is gone
    And the MachineDeployment "md" is gone

  # Cluster API v1.14 rolloutPlanner.init: "cannot create a MachineSet when templates do not exist".
  @row:machinedeployment-rollout:O20
  Scenario: a MachineDeployment whose infrastructure template does not exist makes no MachineSet until it does
    Given a MachineDeployment "md" of 2 Machines whose infrastructure template does not exist
    Then the MachineDeployment "md" has condition "Progressing" with status "False" and reason "TemplateNotFound" and message containing "SimMachineTemplate does not exist (md-missing)"
    And the MachineDeployment "md" has condition "ScalingUp" with status "True" and reason "ScalingUp" and message containing "Scaling up from 0 to 2 replicas is blocked because SimMachineTemplate does not exist"
    And the MachineDeployment "md" has condition "Available" with status "Unknown" and reason "WaitingForAvailableReplicasSet"
    And the MachineDeployment "md" has 0 MachineSets
    When the missing infrastructure template of the MachineDeployment "md" is created
    Then the MachineDeployment "md" has 1 MachineSet
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 2 replicas, 2 updated and 2 available

  @row:machinedeployment-rollout:O13
  Scenario: a MachineSet that cannot create its Machines leaves the deployment scaling up
    Given a MachineDeployment "md" of 1 Machine
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    When the infrastructure template of the MachineDeployment "md" is deleted
    And the MachineDeployment "md" is scaled to 2
    Then the MachineDeployment "md" reaches phase "ScalingUp"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "RolloutComplete"
    And the MachineDeployment "md" has 1 MachineSet
    # Cluster API v1.14 setScalingUpCondition (cluster_controller_status.go): the deployments' ScalingUp.
    And the Cluster "c1" has condition "ScalingUp" with status "True" and reason "ScalingUp" and message containing "* MachineDeployment md: "
    And the Cluster "c1" has condition "ScalingDown" with status "False" and reason "NotScalingDown"

  @serial @row:machinedeployment-rollout:O16
  Scenario: spec.rollout.after replaces every Machine once the time has passed
    Given a MachineDeployment "md" of 1 Machine to be rolled out 1 minute from now on the operator's clock
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    And the current MachineSet of "md" is called "v1"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "RolloutComplete"
    And the MachineDeployment "md" has 1 MachineSet
    When 2 minutes pass on the operator's clock
    Then every Machine of the deployment "md" is of the current MachineSet
    And the MachineSet called "v1" is gone
    And the MachineDeployment "md" has 1 MachineSet
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    And the current MachineSet of "md" is called "v2"
    # Cluster API v1.14 FindNewAndOldMachineSets: the set the restart made still matches the template.
    When the rollout.after of the MachineDeployment "md" is cleared
    Then once the MachineDeployment "md" has decided again, it has one MachineSet, the one called "v2"

  # Cluster API v1.14 FindNewAndOldMachineSets: only a set made before spec.rollout.after is rolled out.
  Scenario: a spec.rollout.after older than the current MachineSet rolls nothing out
    Given a MachineDeployment "md" of 1 Machine
    And the providers bring every Machine of the deployment "md" to Running as it comes
    And the MachineDeployment "md" reports 1 replica, 1 updated and 1 available
    And the current MachineSet of "md" is called "v1"
    When the rollout.after of the MachineDeployment "md" is set to 24 hours ago on the operator's clock
    Then once the MachineDeployment "md" has decided again, it has one MachineSet, the one called "v1"

  # Cluster API v1.14 setAvailableCondition (cluster_controller_status.go): spec.availabilityGates join the conditions
  # Available summarizes; a gate not reported yet is Unknown, a negative one is fine while False.
  Scenario: A Cluster's Available waits for its availability gates, which other controllers report
    Given the Cluster "c1" has condition "Available" with status "True" and reason "Available"
    When the Cluster "c1" gets the positive availability gate "example.com/AddonsInstalled"
    And the Cluster "c1" gets the negative availability gate "example.com/Quarantined"
    Then the Cluster "c1" has condition "Available" with status "Unknown" and reason "AvailableUnknown" and message containing "* example.com/AddonsInstalled: Condition not yet reported"
    When another controller sets the condition "example.com/AddonsInstalled" of the Cluster "c1" to "True" with reason "Installed" and message ""
    And another controller sets the condition "example.com/Quarantined" of the Cluster "c1" to "True" with reason "CVE" and message "a node image is vulnerable"
    Then the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "* example.com/Quarantined: a node image is vulnerable"
    When another controller sets the condition "example.com/Quarantined" of the Cluster "c1" to "False" with reason "Clean" and message ""
    Then the Cluster "c1" has condition "Available" with status "True" and reason "Available"

  # Cluster API v1.14 setWorkersAvailableCondition and setAvailableCondition (cluster_controller_status.go).
  # Cluster API v1.14 setWorkersReplicas, setWorkerMachinesReadyCondition and setWorkerMachinesUpToDateCondition
  # (cluster_controller_status.go): status.workers and the aggregates of the worker Machines.
  Scenario: A Cluster's WorkersAvailable and Available follow the Available condition of its MachineDeployments
    Given the Cluster "c1" has condition "WorkersAvailable" with status "True" and reason "NoWorkers"
    And the Cluster "c1" has condition "Available" with status "True" and reason "Available"
    And the Cluster "c1" reports no workers
    And the Cluster "c1" has condition "WorkerMachinesReady" with status "True" and reason "NoReplicas"
    And the Cluster "c1" has condition "ControlPlaneMachinesReady" with status "True" and reason "NoReplicas"
    When a MachineDeployment "md1" of 2 Machines
    Then the Cluster "c1" has condition "WorkersAvailable" with status "False" and reason "NotAvailable" and message containing "* MachineDeployment md1: "
    And the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "* WorkersAvailable:"
    And the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "  * MachineDeployment md1: "
    And the Cluster "c1" reports 2 desired, 2 current, 0 ready, 0 available and 2 up-to-date workers
    And the Cluster "c1" has condition "WorkerMachinesReady" with status "False" and reason "NotReady" and message containing "* Machines md1-"
    And the Cluster "c1" has condition "WorkerMachinesUpToDate" with status "True" and reason "UpToDate"
    When the providers bring every Machine of the deployment "md1" to Running as it comes
    Then the MachineDeployment "md1" reports 2 replicas, 2 updated and 2 available
    And the Cluster "c1" has condition "WorkersAvailable" with status "True" and reason "Available"
    And the Cluster "c1" has condition "Available" with status "True" and reason "Available"
    And the Cluster "c1" reports 2 desired, 2 current, 2 ready, 2 available and 2 up-to-date workers
    And the Cluster "c1" has condition "WorkerMachinesReady" with status "True" and reason "Ready"
    When the MachineDeployment "md1" is scaled to 3
    Then the Cluster "c1" reports 3 desired, 3 current, 3 ready, 3 available and 3 up-to-date workers
