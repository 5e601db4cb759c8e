//go:build !linux

package netio

// PathMaxPayload returns 0: the route's MTU is not known on this platform
// (no datagram size discovery beyond the configured size).
func PathMaxPayload(c Conn) int { return 0 }
