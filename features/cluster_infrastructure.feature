@infrastructure
Feature: Cluster infrastructure
  A Cluster may name its infrastructure object (spec.infrastructureRef: the provider's network and load
  balancer for it). As in Cluster API, the Cluster gives that object, and its control plane object, an owner
  reference and its cluster-name label; it is Provisioning until the object reports
  status.initialization.provisioned and a control plane endpoint is known, which it copies from the
  infrastructure object, else from the initialized control plane object; its InfrastructureReady condition
  mirrors the object's Ready condition, and status.failureDomains the provisioned object's. Deleted, it deletes the infrastructure object last, after its
  Machines and its control plane object, and goes once that is gone.

  # Cluster API v1.14 reconcileInfrastructure, ensureOwnerRefAndLabel, setInfrastructureReadyCondition, setPhase.
  @row:cluster-status:K19 @row:cluster-status:K20 @row:cluster-status:K21
  Scenario: A Cluster is Provisioning until its infrastructure object is provisioned, then takes the endpoint it gives
    Given a Cluster "c1" whose infrastructureRef names the SimCluster "infra"
    Then the Cluster "c1" is in phase "Provisioning"
    And the Cluster "c1" has condition "InfrastructureReady" with status "False" and reason "ObjectDoesNotExist" and message containing "SimCluster does not exist"
    When the SimCluster "infra" is created
    Then the SimCluster "infra" is owned by the Cluster "c1" and carries its cluster-name label
    And the Cluster "c1" has condition "InfrastructureReady" with status "False" and reason "NotReady" and message containing "SimCluster status.initialization.provisioned is false"
    And the Cluster "c1" is in phase "Provisioning"
    And the Cluster "c1" has condition "Available" with status "False" and reason "NotAvailable" and message containing "InfrastructureReady"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message "Remote connection not established yet"
    When the infrastructure provider provisions the SimCluster "infra" at "c1.example.com:6443" in the failure domains "zone-b, zone-a*"
    Then the Cluster "c1" has the control plane endpoint "c1.example.com:6443"
    And the Cluster "c1" reports the failure domains "zone-a*, zone-b"
    And the Cluster "c1" is in phase "Provisioned"
    And a Normal Event of the Cluster "c1" with reason "Provisioned" says "Cluster c1 is Provisioned"
    And the Cluster "c1" has condition "InfrastructureReady" with status "True" and reason "Provisioned"
    And the Cluster "c1" records its infrastructure as provisioned
    And a Normal Event of the Cluster "c1" with reason "InfrastructureReady" says "Cluster c1 InfrastructureProvisioned is now True"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "SelfHosted" and message containing "the management cluster"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded" and message ""
    And the operator logged no error about the scenario's objects
    When someone deletes the SimCluster "infra"
    Then the Cluster "c1" has condition "InfrastructureReady" with status "False" and reason "ObjectDeleted" and message containing "SimCluster has been deleted while the cluster still exists"
    And the Cluster "c1" is in phase "Provisioned"

  @row:cluster-status:K22 @row:cluster-status:K21
  Scenario: Without an endpoint from its infrastructure, a Cluster waits for the one its initialized control plane gives
    Given the SimCluster "infra" is created
    And the Secret "c1-ca" holding the certificate authority of the Cluster "c1" is created
    And the SimControlPlane "cp" that is not initialized yet is created
    And a Cluster "c1" whose infrastructureRef names the SimCluster "infra" and whose controlPlaneRef names the SimControlPlane "cp"
    When the infrastructure provider provisions the SimCluster "infra" without a control plane endpoint
    Then the Cluster "c1" has condition "InfrastructureReady" with status "True" and reason "Provisioned"
    And the Cluster "c1" is in phase "Provisioning"
    And the Cluster "c1" has no control plane endpoint
    And the SimControlPlane "cp" is owned by the Cluster "c1" and carries its cluster-name label
    When the control plane provider reports the SimControlPlane "cp" initialized at "cp.example.com:443"
    Then the Cluster "c1" has the control plane endpoint "cp.example.com:443"
    And the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "True" and reason "Initialized"
    And a Normal Event of the Cluster "c1" with reason "ControlPlaneInitialized" says "Cluster c1 ControlPlaneInitialized is now True"
    # Its control plane provider writes the kubeconfig, not the Cluster.
    And the Cluster "c1" has no kubeconfig Secret

  # Cluster API v1.14 setRemoteConnectionProbeCondition: its cluster cache connects once the infrastructure is
  # provisioned, whether or not an endpoint is known yet (the harness fails a connection after 2 attempts).
  @row:cluster-status:K22 @row:cluster-status:K28 @row:cluster-status:K29
  Scenario: A Cluster waiting for its endpoint probes its workload cluster once its infrastructure is provisioned
    Given the SimCluster "infra" is created
    And the SimControlPlane "cp" that is not initialized yet is created
    And a Cluster "c1" whose infrastructureRef names the SimCluster "infra" and whose controlPlaneRef names the SimControlPlane "cp"
    Then the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message "Remote connection not established yet"
    When the infrastructure provider provisions the SimCluster "infra" without a control plane endpoint
    Then row "K22" fired for "c1" saying "waiting for a control plane endpoint"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded" and message ""
    When the kubeconfig Secret of Cluster "c1" names an API server that does not answer
    Then row "K28" fired for "c1" saying "waiting for a control plane endpoint"
    And row "K29" fired for "c1"
    And the Cluster "c1" has condition "RemoteConnectionProbe" with status "False" and reason "ProbeFailed" and message "Remote connection probe failed"
    And the Cluster "c1" is in phase "Provisioning"
    When the kubeconfig Secret of Cluster "c1" is fixed for the workload cluster
    Then the Cluster "c1" has condition "RemoteConnectionProbe" with status "True" and reason "ProbeSucceeded" and message ""
    And the Cluster "c1" is in phase "Provisioning"
    When the control plane provider reports the SimControlPlane "cp" initialized at "cp.example.com:443"
    Then the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "Connected"

  # Cluster API v1.14 doReconcile runs reconcileControlPlane whatever reconcileInfrastructure found.
  @row:cluster-status:K21 @row:cluster-status:K20
  Scenario: A Cluster whose infrastructure is not provisioned yet takes its endpoint from its initialized control plane
    Given the SimCluster "infra" is created
    And the SimControlPlane "cp" that is not initialized yet is created
    And a Cluster "c1" whose infrastructureRef names the SimCluster "infra" and whose controlPlaneRef names the SimControlPlane "cp"
    When the control plane provider reports the SimControlPlane "cp" initialized at "cp.example.com:443"
    Then the Cluster "c1" has the control plane endpoint "cp.example.com:443"
    And the Cluster "c1" is in phase "Provisioning"
    And the Cluster "c1" has condition "InfrastructureReady" with status "False" and reason "NotReady"
    When the infrastructure provider provisions the SimCluster "infra" without a control plane endpoint
    Then the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has the control plane endpoint "cp.example.com:443"

  # Cluster API v1.14 reconcileControlPlane copies the endpoint whether or not an infrastructure object is named.
  @row:cluster-status:K21
  Scenario: A Cluster that names no infrastructure takes its endpoint from its initialized control plane
    Given the SimControlPlane "cp" that is not initialized yet is created
    And a Cluster "c1" whose controlPlaneRef names the SimControlPlane "cp" and that names no infrastructure
    Then the Cluster "c1" has no control plane endpoint
    When the control plane provider reports the SimControlPlane "cp" initialized at "cp.example.com:443"
    Then the Cluster "c1" has the control plane endpoint "cp.example.com:443"
    And the Cluster "c1" has condition "ControlPlaneInitialized" with status "True" and reason "Initialized"

  # Cluster API v1.14 reconcileKubeconfig; util/kubeconfig CreateSecret.
  @row:cluster-status:K23
  Scenario: A Cluster no control plane provider serves gets a kubeconfig Secret its certificate authority signs
    Given a Cluster "c1" whose infrastructureRef names the SimCluster "infra"
    And the SimCluster "infra" is created
    And the infrastructure provider provisions the SimCluster "infra" at "127.0.0.1:1"
    And the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "True" and reason "SelfHosted"
    # Without a certificate authority there is nothing to sign one with.
    And the Cluster "c1" has no kubeconfig Secret
    When the Secret "c1-ca" holding the certificate authority of the Cluster "c1" is created
    Then the Cluster "c1" gets a kubeconfig Secret for "https://127.0.0.1:1" signed by its certificate authority
    And the Cluster "c1" has condition "WorkloadClusterReachable" with status "False" and reason "Unreachable" and message containing "127.0.0.1:1"

  # Cluster API v1.14 reconcileDelete: the control plane object, then the infrastructure object, then the finalizer.
  @row:cluster-deletion:K17 @row:cluster-deletion:K18 @row:cluster-deletion:K11
  Scenario: A deleted Cluster deletes its control plane object, then its infrastructure object, and goes once both are gone
    Given the SimCluster "infra" is created
    And the SimControlPlane "cp" that is not initialized yet is created
    And a Cluster "c1" whose infrastructureRef names the SimCluster "infra" and whose controlPlaneRef names the SimControlPlane "cp"
    And the infrastructure provider provisions the SimCluster "infra" at "c1.example.com:6443"
    And the Cluster "c1" is in phase "Provisioned"
    And the Cluster "c1" has the krtt finalizer
    And the control plane provider holds the deletion of the SimControlPlane "cp"
    And the infrastructure provider holds the deletion of the SimCluster "infra"
    When I delete the Cluster "c1"
    Then the Cluster "c1" has condition "Deleting" with status "True" and reason "WaitingForControlPlaneDeletion" and message containing "Waiting for SimControlPlane to be deleted"
    And the SimCluster "infra" is not being deleted
    When the control plane provider finishes the deletion of the SimControlPlane "cp"
    Then the Cluster "c1" has condition "Deleting" with status "True" and reason "WaitingForInfrastructureDeletion" and message containing "Waiting for SimCluster to be deleted"
    And the SimCluster "infra" is being deleted
    When the infrastructure provider finishes the deletion of the SimCluster "infra"
    Then the Cluster "c1" is gone
    And a Normal Event of the Cluster "c1" with reason "Deleting" says "Cluster c1 is Deleting"
    And a Normal Event of the Cluster "c1" with reason "Deleted" says "Cluster c1 has been deleted"
