//go:build !linux

package udp

import "cclab/netio"

// raiseRecvBuffer is Linux-only; elsewhere netio's default stands.
func raiseRecvBuffer(netio.Conn, int) int { return 0 }
