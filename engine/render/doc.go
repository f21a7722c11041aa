// Package render turns loaded tables into documentation: a Markdown page per
// transition or decision table (the human columns, each row's checkable
// part, a state diagram, a glossary, scenario coverage) and the bare Mermaid
// or Graphviz diagram. It only reads the engine's model, so the pages say
// exactly what the loader and the checks accepted; krtt docs and krtt render
// are its callers.
package render
