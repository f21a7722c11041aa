Feature: A provider kind the operator cannot read holds up only its own Machines
  As a platform engineer running a fleet I want Machines whose provider kind
  the operator cannot list or watch (RBAC forbids it, its conversion webhook
  is down, its API fails) to say so and be retried with back-off, while every
  other Machine goes on: reading such a kind must not hold a worker until the
  observe timeout.

  Background:
    Given a Cluster "c1"

  @row:machine-errors:E02
  Scenario: twenty Machines on a kind whose cache cannot sync do not starve a healthy Machine
    Given 20 Machines "bad" whose infrastructure API fails to answer
    When a running Machine "healthy"
    Then the Machines "bad" each report in their last transition "cannot list or watch BrokenMachine.broken.specs.krtt.dev"
    And the Machines "bad" each report in their last transition "conversion webhook"

  @row:machine-errors:E02
  Scenario: Machines waiting on a kind that becomes readable go on
    Given 3 Machines "late" on a kind of the group "late.specs.krtt.dev" whose conversion webhook is down
    Then the Machines "late" each report in their last transition "cannot list or watch BrokenMachine.late.specs.krtt.dev"
    When the conversion of the group "late.specs.krtt.dev" is fixed
    Then the Machines "late" each go past row "E02"
