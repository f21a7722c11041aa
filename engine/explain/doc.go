// Package explain says in words what the engine decided and why: a row's
// human columns, its result for each way its actions can end (the
// runtime's defaults included), why every other row of the state does not
// fire, and what a decision table makes of facts that may be incomplete.
// krtt decide, krtt explain and the controllers' explain reports all build
// on it, so every tool words the same decision the same way. It reads the
// engine's model and runtime and changes nothing.
package explain
