//go:build !amd64

package transport

import "testing"

// blockPaths names the block loop paths of this architecture: the pure-Go
// one only.
func blockPaths(testing.TB) []string { return []string{"generic"} }

// selectBlockPath has nothing to select on this architecture.
func selectBlockPath(string) (restore func()) { return func() {} }
