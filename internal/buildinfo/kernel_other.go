//go:build !unix

package buildinfo

// kernel is unknown on systems without uname(2).
func kernel() string { return "" }
