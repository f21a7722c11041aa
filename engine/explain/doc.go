// Package explain says in words what the engine decided and why: a row's
// human columns, its result for each way its actions can end (the runtime's
// defaults included), why every other row of the state does not fire,
// which single fact change would make another row fire, what a decision
// table makes of facts that may be incomplete, and a table's rows with the
// scenarios that cover them. Report is the shape of krtt explain: the
// generic part (facts, the row that fires, the other rows, the state's wait
// read from the object by the paths the tables name, status and Events),
// with the optional sections the Machine and MachineSet controllers fill in
// (actions/machine, actions/machineset); the kit starts every report
// (reconciler.Explain). krtt decide and krtt explain share these words, so
// tools read both the same way. Nothing here changes the cluster.
package explain
