//go:build !linux

package netio

// GROBufSize is the read buffer a Message needs on a socket with GRO, bytes.
const GROBufSize = MaxDatagram

// EnableGRO reports false: no UDP receive offload on this platform, every
// read is one datagram (Message.Seg 0).
func EnableGRO(Conn) bool { return false }
