@machinedeployment
Feature: A MachineDeployment rolls its Machines out to a new template
  As a platform engineer I change a MachineDeployment's template; it makes
  one MachineSet per template revision and replaces the old Machines as
  its strategy allows, keeps a few old revisions for a rollback, spreads a
  scale over its MachineSets, and says when a rollout is stuck.

  Background:
    Given a Cluster "c1"

  @row:machinedeployment-normal:N03 @row:machinedeployment-rollout:O03 @row:machinedeployment-rollout:O07
  @row:machinedeployment-rollout:O08 @row:machinedeployment-rollout:O09 @row:machinedeployment-rollout:O12
  @row:machinedeployment-rollout:O15
  Scenario: a rolling update of 3 Machines with maxSurge 1 and maxUnavailable 0 never leaves the limits
    Given a MachineDeployment "md" of 3 Machines
    And the providers bring every Machine of the deployment "md" to Running as it comes
    Then the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" reaches phase "Running"
    And the MachineDeployment "md" has 1 MachineSet
    And the current MachineSet of "md" is called "v1"
    When every Machine event of the deployment "md" is watched
    And the template of the MachineDeployment "md" is pointed at new templates "v2"
    Then the MachineDeployment "md" has 2 MachineSets
    And the current MachineSet of "md" is called "v2"
    And every Machine of the deployment "md" is of the current MachineSet
    And the MachineDeployment "md" reports 3 replicas, 3 updated and 3 available
    And the MachineDeployment "md" reaches phase "Running"
    And the MachineDeployment "md" has condition "Progressing" with status "True" and reason "RolloutComplete"
    And the MachineDeployment "md" has condition "Available" with status "True" and reason "MinimumReplicasAvailable"
    And the MachineSet called "v1" asks for 0 replicas
    And the deployment "md" never had more than 4 Machines nor fewer than 3 available at any watch event
