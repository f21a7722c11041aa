Feature: A Machine walks from Pending to Running
  As a platform engineer I create a Machine with a bootstrap and an
  infrastructure object; the operator waits for each provider in turn,
  copies what they report and associates the Machine with its Node.

  Background:
    Given a Cluster "c1"

  @row:machine-normal:N02 @row:machine-normal:N06 @row:machine-normal:N14 @row:machine-normal:N12 @row:machine-normal:N13
  @row:machine-normal:N21 @row:machine-normal:N23 @row:machine-normal:N30 @row:machine-normal:N31 @row:machine-normal:N40
  Scenario: a new Machine waits for each provider and runs once its Node joins
    Given a Machine "m1" with its bootstrap and infrastructure objects
    Then the Machine "m1" has the krtt finalizer
    And the last row of "m1" is "N12"
    And the Machine "m1" reaches phase "Pending"
    And the bootstrap object of "m1" is owned by the Machine and labelled with the Cluster "c1"
    And the infrastructure object of "m1" is owned by the Machine and labelled with the Cluster "c1"
    And row "N14" fired for "m1"
    And the Machine "m1" has condition "Available" with status "False" and reason "NotReady"
    And the Machine "m1" has condition "BootstrapConfigReady" with status "False" and reason "NotReady"
    And the Machine "m1" has condition "BootstrapConfigReady" with reason "NotReady" and message containing "SimBootstrapConfig status.initialization.dataSecretCreated is false"
    And the Machine "m1" has condition "InfrastructureReady" with reason "NotReady" and message containing "SimMachine status.initialization.provisioned is false"
    And the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "InspectionFailed"
    And the Machine "m1" has condition "NodeReady" with reason "InspectionFailed" and message containing "Waiting for SimMachine to report spec.providerID"
    When the bootstrap provider reports the data secret of "m1"
    Then the Machine "m1" reaches phase "Provisioning"
    And the last row of "m1" is "N21"
    When the infrastructure of "m1" is provisioned
    Then the Machine "m1" reaches phase "Provisioned"
    And the Machine "m1" has condition "NodeHealthy" with status "Unknown" and reason "InspectionFailed"
    And the Machine "m1" has condition "NodeReady" with reason "InspectionFailed" and message containing "Waiting for a Node with spec.providerID sim://"
    When a Node joins for "m1"
    Then the Machine "m1" reaches phase "Running"
    And the Machine "m1" references its Node
    And the Machine "m1" has condition "NodeHealthy" with status "True" and reason "NodeHealthy"
    And the Machine "m1" reports the node info of its Node
    And the Machine "m1" has condition "Available" with status "True" and reason "Available"
    And the Machine "m1" has condition "Updating" with status "False" and reason "NotUpdating"
    And the Machine "m1" records that its phase changed when it entered its state

  @row:machine-normal:N15 @row:machine-normal:N16
  Scenario: provider objects stripped of their owner or cluster-name label after adoption are adopted again, as Cluster API's reconcileExternal does on every reconcile
    Given a Machine "m1" with its bootstrap and infrastructure objects
    When the bootstrap provider reports the data secret of "m1"
    Then the Machine "m1" reaches phase "Provisioning"
    When someone removes the cluster-name label of the bootstrap object of "m1"
    Then row "N15" fired for "m1"
    And the bootstrap object of "m1" is owned by the Machine and labelled with the Cluster "c1"
    When the infrastructure of "m1" is provisioned
    And a Node joins for "m1"
    Then the Machine "m1" reaches phase "Running"
    When someone removes the owner references of the infrastructure object of "m1"
    Then row "N16" fired for "m1"
    And the infrastructure object of "m1" is owned by the Machine and labelled with the Cluster "c1"
    When someone removes the owner references of the bootstrap object of "m1"
    Then the bootstrap object of "m1" is owned by the Machine and labelled with the Cluster "c1"
    And the Machine "m1" is in phase "Running"

  @row:machine-normal:N31
  Scenario: the Node gets the Machine's node labels and annotations and loses the uninitialized taint, as Cluster API's patchNode
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has the label "node-role.kubernetes.io/worker" = ""
    And the Machine "m1" has the label "dc1.node-restriction.kubernetes.io/rack" = "r1"
    And the Machine "m1" has the label "team" = "blue"
    And the Machine "m1" has annotation "node.cluster.krtt.dev/note" set to "hello"
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    When a Node joins for "m1" with the NoSchedule taint "node.cluster.krtt.dev/uninitialized"
    Then the Machine "m1" reaches phase "Running"
    And the Node of "m1" has the label "node-role.kubernetes.io/worker" = ""
    And the Node of "m1" has the label "dc1.node-restriction.kubernetes.io/rack" = "r1"
    And the Node of "m1" has the annotation "node.cluster.krtt.dev/note" = "hello"
    And the Node of "m1" has the annotation "cluster.krtt.dev/machine" = "m1"
    And the Node of "m1" has the annotation "cluster.krtt.dev/labels-from-machine" = "dc1.node-restriction.kubernetes.io/rack,node-role.kubernetes.io/worker"
    And the Node of "m1" has no taint "node.cluster.krtt.dev/uninitialized"

  # Cluster API v1.14 reconcileNode (machine_controller_noderef.go): an infrastructure machine that reports
  # status.interruptible true (a spot instance) gets the interruptible label on its Node; it goes when it stops.
  @row:machine-normal:N40
  Scenario: the Node of an interruptible instance is labelled so, as Cluster API's reconcileNode
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    And the infrastructure of "m1" reports an interruptible instance
    When a Node joins for "m1"
    Then the Machine "m1" reaches phase "Running"
    And the Node of "m1" has the label "cluster.krtt.dev/interruptible" = ""
    And the Node of "m1" has the annotation "cluster.krtt.dev/labels-from-machine" = "cluster.krtt.dev/interruptible"
    And a Normal Event of the Machine "m1" with reason "SuccessfulSetInterruptibleNodeLabel" names its Node
    When the infrastructure of "m1" reports no interruptible instance
    Then the Node of "m1" has no label "cluster.krtt.dev/interruptible"

  # Cluster API v1.14 propagateMachineTaintsToNode (machine_controller_noderef.go; behind the MachineTaintPropagation
  # feature gate there, always on in krtt): an Always taint is kept on the Node, an OnInitialization one set once.
  @row:machine-normal:N31 @row:machine-normal:N40
  Scenario: a Machine's taints reach its Node: Always ones are kept there, OnInitialization ones are set once
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has the Always taint "example.com/dedicated=gpu:NoSchedule"
    And the Machine "m1" has the OnInitialization taint "example.com/warming:NoExecute"
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    When a Node joins for "m1"
    Then the Machine "m1" reaches phase "Running"
    And the Node of "m1" has the taint "example.com/dedicated=gpu:NoSchedule"
    And the Node of "m1" has the taint "example.com/warming:NoExecute"
    And the Node of "m1" has the annotation "cluster.krtt.dev/taints-from-machine" = "example.com/dedicated:NoSchedule"
    When someone removes the taints "example.com/dedicated:NoSchedule, example.com/warming:NoExecute" from the Node of "m1"
    Then the Node of "m1" has the taint "example.com/dedicated=gpu:NoSchedule"
    And the Node of "m1" has no taint "example.com/warming"
    When the Machine "m1" no longer has the taint "example.com/dedicated:NoSchedule"
    Then the Node of "m1" has no taint "example.com/dedicated"
    And the Node of "m1" has the annotation "cluster.krtt.dev/taints-from-machine" = ""

  # Cluster API v1.14 --additional-sync-machine-labels and --additional-sync-machine-annotations (core/main.go;
  # GetManagedLabels, GetManagedAnnotations): keys matching an expression reach the Node too.
  @serial @row:machine-normal:N31
  Scenario: labels and annotations the operator's additional-sync flags select reach the Node
    Given the operator restarts syncing Machine labels matching "^tier$" and annotations matching "^example\.com/" to Nodes
    And a Machine "m1" with its bootstrap and infrastructure objects
    And the Machine "m1" has the label "tier" = "gold"
    And the Machine "m1" has the label "team" = "blue"
    And the Machine "m1" has annotation "example.com/owner" set to "ops"
    And the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    When a Node joins for "m1"
    Then the Machine "m1" reaches phase "Running"
    And the Node of "m1" has the label "tier" = "gold"
    And the Node of "m1" has the annotation "example.com/owner" = "ops"
    And the Node of "m1" has the annotation "cluster.krtt.dev/labels-from-machine" = "tier"
    And the Node of "m1" has no label "team"

  @row:machine-normal:N10
  Scenario: a Machine given its data secret directly skips the bootstrap provider
    Given a Machine "m1" given the bootstrap data secret "m1-data" directly
    Then the Machine "m1" reaches phase "Provisioning"
    When the infrastructure of "m1" is provisioned
    Then the Machine "m1" reaches phase "Provisioned"

  @row:machine-normal:N11
  Scenario: a Machine waits for a bootstrap object that does not exist
    Given a Machine "m1" whose bootstrap object does not exist
    Then the Machine "m1" has condition "BootstrapConfigReady" with reason "ObjectDoesNotExist" and message containing "SimBootstrapConfig does not exist"
    And the Machine "m1" reaches phase "Pending"
    And the Machine "m1" has condition "InfrastructureReady" with status "False" and reason "ObjectDoesNotExist"

  @row:machine-normal:N20
  Scenario: a Machine waits for an infrastructure object that does not exist
    Given a Machine "m1" whose infrastructure object does not exist
    Then the Machine "m1" has condition "InfrastructureReady" with status "False" and reason "ObjectDoesNotExist"
    And the Machine "m1" reaches phase "Pending"
    When the bootstrap provider reports the data secret of "m1"
    Then the Machine "m1" has condition "InfrastructureReady" with reason "ObjectDoesNotExist" and message containing "SimMachine does not exist"
    And the Machine "m1" reaches phase "Provisioning"

  @row:machine-normal:N22
  Scenario: infrastructure provisioned without a providerID holds the Machine until the providerID arrives
    Given a Machine "m1" with its bootstrap and infrastructure objects
    And the bootstrap provider reports the data secret of "m1"
    When the infrastructure of "m1" reports provisioned without a providerID
    Then row "N22" fired for "m1"
    And the Machine "m1" has condition "InfrastructureReady" with status "True" and reason "Provisioned"
    And the Machine "m1" reaches phase "Provisioning"
    When the infrastructure of "m1" is provisioned
    Then the Machine "m1" reaches phase "Provisioned"

  @row:machine-normal:N04
  Scenario: a paused Machine is left alone
    Given a paused Machine "m1" with its bootstrap and infrastructure objects
    Then the Machine "m1" has condition "Paused" with status "True" and reason "Paused"
    And the Machine "m1" has condition "Paused" with reason "Paused" and message containing "Machine has the cluster.krtt.dev/paused annotation"
    When the bootstrap provider reports the data secret of "m1"
    Then row "N04" fired for "m1"
    And the last row of "m1" is "N02"
    And the Machine "m1" reaches phase "Pending"

  @row:machine-normal:N05
  Scenario: a Machine whose Cluster does not exist waits for it
    Given a Machine "m1" of the missing Cluster "nowhere"
    Then the Machine "m1" has condition "Ready" with status "False" and reason "ClusterNotFound"
    And the Machine "m1" has condition "Ready" with reason "ClusterNotFound" and message containing "The Cluster nowhere named in spec.clusterName does not exist"

  @row:machine-normal:N23
  Scenario: provider objects created by a MachineSet are taken over by their Machine
    Given a Machine "m1" whose infrastructure object was created by a MachineSet
    When the bootstrap provider reports the data secret of "m1"
    And the infrastructure of "m1" is provisioned
    Then the Machine "m1" reaches phase "Provisioned"
    And the infrastructure object of "m1" is controlled by the Machine

  @row:machine-normal:N40
  Scenario: certificates expiry is reported for control-plane Machines only, and a bad date says so
    Given a running control-plane Machine "m1"
    And a running Machine "m2"
    When the Machine "m1" has annotation "machine.cluster.krtt.dev/certificates-expiry" set to "2027-01-31T00:00:00Z"
    And the Machine "m2" has annotation "machine.cluster.krtt.dev/certificates-expiry" set to "2027-01-31T00:00:00Z"
    Then the Machine "m1" reports certificates expiring at "2027-01-31T00:00:00Z"
    And the Machine "m2" reports no certificates expiry date
    When the Machine "m1" has annotation "machine.cluster.krtt.dev/certificates-expiry" set to "end of January"
    Then the Machine "m1" has condition "CertificatesExpiryKnown" with status "False" and reason "InvalidDate"
    And the Machine "m1" reports no certificates expiry date
    When the Machine "m1" has annotation "machine.cluster.krtt.dev/certificates-expiry" set to "2027-02-28T00:00:00Z"
    Then the Machine "m1" reports certificates expiring at "2027-02-28T00:00:00Z"
    And the Machine "m1" has no condition "CertificatesExpiryKnown"

  @row:machine-normal:N40
  Scenario: readiness gates hold Ready until the controllers that own their conditions report them, as Cluster API's setReadyCondition
    Given a running Machine "m1"
    And the Machine "m1" has condition "Ready" with status "True" and reason "Ready"
    When the Machine "m1" gets the positive readiness gate "example.com/SoftwareInstalled"
    Then the Machine "m1" has condition "Ready" with reason "ReadyUnknown" and message containing "* example.com/SoftwareInstalled: Condition not yet reported"
    And the Machine "m1" has condition "Available" with status "False" and reason "NotReady"
    When another controller sets the condition "example.com/SoftwareInstalled" of the Machine "m1" to "False" with reason "Installing" and message "2 of 3 packages installed"
    Then the Machine "m1" has condition "Ready" with reason "NotReady" and message containing "* example.com/SoftwareInstalled: 2 of 3 packages installed"
    When another controller sets the condition "example.com/SoftwareInstalled" of the Machine "m1" to "True" with reason "Installed" and message ""
    Then the Machine "m1" has condition "Ready" with status "True" and reason "Ready"
    And the Machine "m1" has condition "Available" with status "True" and reason "Available"
    And the Machine "m1" has condition "example.com/SoftwareInstalled" with status "True" and reason "Installed"

  @serial @row:machine-normal:N44 @row:machine-normal:N40
  Scenario: a Machine is Available once Ready for spec.minReadySeconds, and wakes itself to say so, as Cluster API's setAvailableCondition
    Given a running Machine "m1" with minReadySeconds 300
    Then the Machine "m1" has condition "Ready" with status "True" and reason "Ready"
    And the Machine "m1" has condition "Available" with status "False" and reason "WaitingForMinReadySeconds"
    And the last row of "m1" is "N44"
    When 6 minutes pass on the operator's clock
    Then the Machine "m1" has condition "Available" with status "True" and reason "Available"
    And the last row of "m1" is "N40"

  @row:machine-normal:N40
  Scenario: a negative readiness gate is fine while its condition is False
    Given a running Machine "m1"
    When the Machine "m1" gets the negative readiness gate "example.com/DiskDegraded"
    And another controller sets the condition "example.com/DiskDegraded" of the Machine "m1" to "True" with reason "SlowDisk" and message "disk latency above 2s"
    Then the Machine "m1" has condition "Ready" with reason "NotReady" and message containing "* example.com/DiskDegraded: disk latency above 2s"
    When another controller sets the condition "example.com/DiskDegraded" of the Machine "m1" to "False" with reason "Fine" and message ""
    Then the Machine "m1" has condition "Ready" with status "True" and reason "Ready"
