// Command etcd is the etcd server built from the Go module proxy, so that
// envtest and the local control plane never need a downloaded binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
