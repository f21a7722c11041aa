// Package transitions holds the shipped KRTT tables. They are embedded in
// every krtt binary; operators may load a reviewed copy with --tables.
package transitions

import (
	"embed"
	"io/fs"
)

// Every controller's directory: a new controller's tables are embedded
// with no change here.
//
//go:embed */*.yaml
var files embed.FS

// FS returns the embedded tables, one directory per controller.
func FS() fs.FS { return files }
