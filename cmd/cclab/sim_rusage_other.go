//go:build !unix

package main

// maxRSS is not available on this platform.
func maxRSS() float64 { return 0 }
