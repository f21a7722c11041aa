package v1alpha1_test

// Everyday mistakes refused at admission, run by TestBadInputCatalog:
// pointing a Machine at a MachineSet's templates would have the Machine take
// them over and delete them with itself. Mistakes about another object (two
// MachineSets whose selectors overlap, a controlPlaneRef to an object that
// does not exist) pass admission, which sees one object: conditions and
// Warning Events tell them (rows S14 and K13, features/machineset.feature and
// features/workload_cluster.feature).
func init() {
	catalog = append(catalog, mistakesCatalog...)
}

var mistakesCatalog = []badInput{
	{name: "Machine infrastructureRef to a template", kind: "Machine",
		mutate: set("spec.infrastructureRef", obj{"apiGroup": "sim.krtt.dev", "kind": "SimMachineTemplate", "name": "workers"}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: spec.infrastructureRef.kind: Invalid value: infrastructureRef must name an infrastructure machine (e.g. SimMachine), not a template: a Machine would take the template over and delete it with itself; to create Machines from a template, use a MachineSet`},
	{name: "Machine configRef to a template", kind: "Machine",
		mutate: set("spec.bootstrap.configRef", obj{"apiGroup": "sim.krtt.dev", "kind": "SimBootstrapConfigTemplate", "name": "workers"}),
		want:   `Machine.cluster.krtt.dev "{name}" is invalid: spec.bootstrap.configRef.kind: Invalid value: bootstrap.configRef must name a bootstrap config (e.g. SimBootstrapConfig), not a template: a Machine would take the template over and delete it with itself; to create Machines from a template, use a MachineSet`},
}
