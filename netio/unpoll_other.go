//go:build !linux

package netio

import "errors"

// Unpoll fails: only Linux drivers wait on their sockets themselves.
func (u *UDPConn) Unpoll() error { return errors.New("netio: Unpoll is Linux only") }
