//go:build !linux

package netio

// EnableRxTimestamps reports false: no kernel receive timestamps on this
// platform (Message.RxTime stays 0).
func EnableRxTimestamps(Conn) bool { return false }
