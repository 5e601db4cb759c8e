package netio

import "golang.org/x/sys/unix"

// EnableRxTimestamps asks the kernel to stamp every datagram c receives
// with the time it received it (SO_TIMESTAMPNS: taken as the datagram
// enters the socket's network stack, before the reader wakes up), reported
// by ReadBatch in Message.RxTime. It reports whether stamps are on: false
// if c is not a UDP socket or the kernel refuses the option.
func EnableRxTimestamps(c Conn) bool {
	return setFlag(c, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS)
}
