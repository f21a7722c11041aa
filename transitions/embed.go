// Package transitions holds the shipped KRTT tables. They are embedded in
// every krtt binary; operators may load a reviewed copy with --tables.
package transitions

import (
	"embed"
	"io/fs"
)

//go:embed machine/*.yaml machineset/*.yaml cluster/*.yaml
var files embed.FS

// FS returns the embedded tables, one directory per controller.
func FS() fs.FS { return files }

// MachineDir is the directory of the Machine controller's tables in FS.
const MachineDir = "machine"

// MachineSetDir is the directory of the MachineSet controller's tables in FS.
const MachineSetDir = "machineset"

// ClusterDir is the directory of the Cluster controller's tables in FS.
const ClusterDir = "cluster"
